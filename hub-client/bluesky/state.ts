// What warren keeps about Bluesky in Redis: the notifications found and not yet handled (so one that arrives
// while an activation runs is never lost to the account's single read timestamp), the ones handled, and each
// write's record key, chosen once and reused by every retry (exactly once: the PDS refuses a second record
// under the same key, and a retry finds the first by it).
import { RedisKeys } from '../../redis/keys.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import { PendingNotifications } from '../pending-notifications.ts';

const RKEY_TTL_SECONDS = 7 * 86_400;

export class BlueskyState extends PendingNotifications {
  readonly #redis: RedisClient;
  readonly #keys: RedisKeys;

  constructor(redis: RedisClient, prefix: string) {
    const keys = new RedisKeys(prefix);
    super(redis, { pending: (a) => keys.blueskyPending(a), handled: (a) => keys.blueskyHandled(a) });
    this.#redis = redis;
    this.#keys = keys;
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
