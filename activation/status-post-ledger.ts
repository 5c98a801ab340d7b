// Which status posts were made, by the identity of the event they report (activation/status-post.ts), and which
// agents are paused by their failures. Shared through Redis: whichever daemon claims an event first posts it,
// every other one sees it claimed.
import type { RedisKeys } from '../redis/keys.ts';
import { keyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisClient } from '../redis/scripts.ts';

export class StatusPostLedger {
  readonly #redis: RedisClient;
  readonly #keys: RedisKeys;

  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    // Fleet-wide: claims and pauses are seen by every daemon whatever shards it works.
    this.#keys = keyLayout(space).home;
  }

  /** True for the first to claim the event within `windowMs` (the expiry is set with the claim: no crash leaves it for ever). */
  async claim(identity: string, windowMs: number): Promise<boolean> {
    return (await this.#redis.set(this.#keys.statusPost(identity), '1', 'PX', windowMs, 'NX')) === 'OK';
  }

  /** The post could not be made: the next sight of the event posts instead. */
  async forget(identity: string): Promise<void> {
    await this.#redis.del(this.#keys.statusPost(identity));
  }

  /** True when this failure paused the agent (it was not paused already): `activationId` is remembered as the pause's. */
  async markPaused(agent: string, activationId: string): Promise<boolean> {
    return (await this.#redis.hsetnx(this.#keys.statusPaused, agent, activationId)) === 1;
  }

  /** The pause the agent's good run ends (the activation that paused it), for the one who ends it; undefined when it was not paused. */
  async takePaused(agent: string): Promise<string | undefined> {
    const key = this.#keys.statusPaused;
    const [[, pausedBy], [, removed]] = (await this.#redis.multi().hget(key, agent).hdel(key, agent).exec()) as [[Error | null, string | null], [Error | null, number]];
    return removed === 1 && pausedBy ? pausedBy : undefined;
  }
}
