// Deliveries per hook per minute, counted in Redis so every daemon behind one address shares the count: a
// fixed one-minute window (simple, and a burst at a window's edge is at most twice the limit).
import type { RedisClient } from '../../redis/scripts.ts';

export class HookRateLimit {
  readonly #redis: RedisClient;
  readonly #prefix: string;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  /** Counts one delivery; the seconds to wait when it is over `perMinute`, else undefined. */
  async take(agent: string, hook: string, perMinute: number, now = Date.now()): Promise<number | undefined> {
    const window = Math.floor(now / 60_000);
    const key = `${this.#prefix}:webhook-rate:${agent}:${hook}:${window}`;
    const [[, count]] = (await this.#redis.multi().incr(key).pexpire(key, 120_000).exec()) as [[Error | null, number], unknown];
    if (count <= perMinute) return undefined;
    return Math.max(1, Math.ceil(((window + 1) * 60_000 - now) / 1000));
  }
}
