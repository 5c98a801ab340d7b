// What warren keeps about Bluesky in Redis: the notifications found and not yet handled (so one that arrives
// while an activation runs is never lost to the account's single read timestamp), the ones handled, and each
// write's record key, chosen once and reused by every retry (exactly once: the PDS refuses a second record
// under the same key, and a retry finds the first by it).
import { RedisKeys } from '../../redis/keys.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import type { Notification } from '../types.ts';

const HANDLED_TTL_SECONDS = 30 * 86_400;
const RKEY_TTL_SECONDS = 7 * 86_400;

export class BlueskyState {
  readonly #redis: RedisClient;
  readonly #keys: RedisKeys;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#keys = new RedisKeys(prefix);
  }

  async pending(agent: string): Promise<Notification[]> {
    const all = await this.#redis.hvals(this.#keys.blueskyPending(agent));
    return all.map((v) => JSON.parse(v) as Notification).sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async pendingCount(agent: string): Promise<number> {
    return this.#redis.hlen(this.#keys.blueskyPending(agent));
  }

  async addPending(agent: string, ns: readonly Notification[]): Promise<void> {
    if (ns.length === 0) return;
    await this.#redis.hset(this.#keys.blueskyPending(agent), Object.fromEntries(ns.map((n) => [n.id, JSON.stringify(n)])));
  }

  async handled(agent: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const flags = await this.#redis.smismember(this.#keys.blueskyHandled(agent), ...ids);
    return new Set(ids.filter((_, i) => flags[i] === 1));
  }

  async markHandled(agent: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const handled = this.#keys.blueskyHandled(agent);
    await this.#redis.multi().sadd(handled, ...ids).expire(handled, HANDLED_TTL_SECONDS).hdel(this.#keys.blueskyPending(agent), ...ids).exec();
  }

  /** From when the agent's notifications are work: `first` on the first scan, kept from then on. */
  async since(agent: string, first: string): Promise<string> {
    const k = this.#keys.blueskySince(agent);
    if ((await this.#redis.set(k, first, 'NX')) !== null) return first;
    return (await this.#redis.get(k)) ?? first;
  }

  /** The record key of the write `key`: `fresh` on its first attempt, the same one on every later attempt. */
  async rkeyOf(key: string, fresh: string): Promise<string> {
    const k = this.#keys.blueskyRkey(key);
    const set = await this.#redis.set(k, fresh, 'EX', RKEY_TTL_SECONDS, 'NX');
    if (set !== null) return fresh;
    return (await this.#redis.get(k)) ?? fresh;
  }
}
