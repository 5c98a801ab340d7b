// How often each notification has failed for good, so one the agent cannot answer is given up on after a bound
// instead of being tried for ever (activation/failure-policy.ts decides; this keeps the counts).
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisClient } from '../redis/scripts.ts';

/** Counts outlive any realistic backoff schedule, then expire by themselves. */
const TTL_SECONDS = 7 * 86_400;

export interface NotificationFailures {
  /** Counts one more terminal failure; returns the count so far. */
  increment(agent: string, notificationId: string): Promise<number>;
  clear(agent: string, notificationId: string): Promise<void>;
}

export class RedisNotificationFailures implements NotificationFailures {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;

  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
  }

  #key(agent: string): string {
    return this.#layout.of(agent).notificationFailures(agent);
  }

  async increment(agent: string, notificationId: string): Promise<number> {
    const [[, count]] = (await this.#redis.multi().hincrby(this.#key(agent), notificationId, 1).expire(this.#key(agent), TTL_SECONDS).exec()) as [[Error | null, number]];
    return count;
  }

  async clear(agent: string, notificationId: string): Promise<void> {
    await this.#redis.hdel(this.#key(agent), notificationId);
  }
}

export class MemoryNotificationFailures implements NotificationFailures {
  readonly #counts = new Map<string, number>();

  increment(agent: string, notificationId: string): Promise<number> {
    const key = `${agent}\u0000${notificationId}`;
    const n = (this.#counts.get(key) ?? 0) + 1;
    this.#counts.set(key, n);
    return Promise.resolve(n);
  }

  clear(agent: string, notificationId: string): Promise<void> {
    this.#counts.delete(`${agent}\u0000${notificationId}`);
    return Promise.resolve();
  }
}
