// What warren keeps about Bluesky in Redis: the notifications found and not yet handled (so one that arrives
// while an activation runs is never lost to the account's single read timestamp), the ones handled, and each
// write's record key, chosen once and reused by every retry (exactly once: the PDS refuses a second record
// under the same key, and a retry finds the first by it).
import type { RedisKeys } from '../../redis/keys.ts';
import { keyLayout, type KeyLayout, type KeySpace } from '../../redis/key-layout.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import { HANDLED_TTL_SECONDS, PendingNotifications } from '../pending-notifications.ts';

const RKEY_TTL_SECONDS = 7 * 86_400;

export class BlueskyState extends PendingNotifications {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;
  /** Record keys: by warren's idempotency key, fleet-wide. */
  readonly #home: RedisKeys;

  constructor(redis: RedisClient, space: KeySpace) {
    const layout = keyLayout(space);
    super(redis, { pending: (a) => layout.of(a).blueskyPending(a), handled: (a) => layout.of(a).blueskyHandled(a) });
    this.#redis = redis;
    this.#layout = layout;
    this.#home = layout.home;
  }

  /** From when the agent's notifications are work: `first` on the first scan, kept from then on. */
  async since(agent: string, first: string): Promise<string> {
    const k = this.#layout.of(agent).blueskySince(agent);
    if ((await this.#redis.set(k, first, 'NX')) !== null) return first;
    return (await this.#redis.get(k)) ?? first;
  }

  /** A post the agent replied to: exploration leaves it alone (a model call would only end in a second reply). */
  async markAnswered(agent: string, uri: string): Promise<void> {
    const key = this.#layout.of(agent).blueskyAnswered(agent);
    await this.#redis.multi().sadd(key, uri).expire(key, HANDLED_TTL_SECONDS).exec();
  }

  async answered(agent: string, uris: readonly string[]): Promise<Set<string>> {
    if (uris.length === 0) return new Set();
    const flags = await this.#redis.smismember(this.#layout.of(agent).blueskyAnswered(agent), ...uris);
    return new Set(uris.filter((_, i) => flags[i] === 1));
  }

  /** The record key of the write `key`: `fresh` on its first attempt, the same one on every later attempt. */
  async rkeyOf(key: string, fresh: string): Promise<string> {
    const k = this.#home.blueskyRkey(key);
    const set = await this.#redis.set(k, fresh, 'EX', RKEY_TTL_SECONDS, 'NX');
    if (set !== null) return fresh;
    return (await this.#redis.get(k)) ?? fresh;
  }
}
