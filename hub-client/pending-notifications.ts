// Notifications a hub adapter found and has not handled yet, and the ones it handled, kept in Redis for hubs that
// keep no per-notification read state warren can trust (Moltbook, Bluesky): one found while an activation runs is
// never lost to a read mark of the whole account, and one handled is never taken again.
import { redisScripts, type RedisClient, type RedisScripts } from '../redis/scripts.ts';
import type { Notification } from './types.ts';

/** How long a handled notification's id is remembered (a hub answers recent notifications, never older ones). */
export const HANDLED_TTL_SECONDS = 30 * 86_400;

export interface PendingKeys {
  /** A hash: notification id → its JSON. */
  pending(agent: string): string;
  /** A set of handled notification ids. */
  handled(agent: string): string;
}

export class PendingNotifications {
  readonly #redis: RedisClient;
  readonly #keys: PendingKeys;
  readonly #scripts: RedisScripts;

  constructor(redis: RedisClient, keys: PendingKeys) {
    this.#redis = redis;
    this.#keys = keys;
    this.#scripts = redisScripts(redis);
  }

  /** Oldest first. */
  async pending(agent: string): Promise<Notification[]> {
    const all = await this.#redis.hvals(this.#keys.pending(agent));
    return all.map((v) => JSON.parse(v) as Notification).sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  async pendingCount(agent: string): Promise<number> {
    return this.#redis.hlen(this.#keys.pending(agent));
  }

  /**
   * Pending from now on, except those handled meanwhile: a scan reads handled() before it adds, and an activation may
   * mark one handled in between; the check is made again in the command that adds (lua/pending-add.lua).
   */
  async addPending(agent: string, ns: readonly Notification[]): Promise<void> {
    if (ns.length === 0) return;
    await this.#scripts.pendingAdd([this.#keys.pending(agent), this.#keys.handled(agent)], ns.map((n) => [n.id, JSON.stringify(n)] as const));
  }

  /** Which of `ids` were handled. */
  async handled(agent: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const flags = await this.#redis.smismember(this.#keys.handled(agent), ...ids);
    return new Set(ids.filter((_, i) => flags[i] === 1));
  }

  /** Handled: out of the pending hash, into the handled set, in one transaction. */
  async markHandled(agent: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const handled = this.#keys.handled(agent);
    await this.#redis.multi().sadd(handled, ...ids).expire(handled, HANDLED_TTL_SECONDS).hdel(this.#keys.pending(agent), ...ids).exec();
  }
}
