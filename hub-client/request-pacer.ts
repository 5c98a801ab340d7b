// Requests to a hub, paced in Redis: a token bucket per bucket key (an agent's key, a host), shared by every
// process on the same Redis, so several daemons (the scale-out of the README) get one allowance between them,
// not one each. A request takes a token from each of its buckets at once (its key's and its host's); a 429's
// wait holds a bucket back for everyone who uses it; a server that says what is left (rate-limit headers)
// corrects the bucket. Hub adapters name their buckets; the clock is the caller's (all daemons of one Redis are
// expected to keep time within a second or so: a skew only shifts refills by that much).
import type { RedisKeys } from '../redis/keys.ts';
import { keyLayout, type KeySpace } from '../redis/key-layout.ts';
import { redisScripts, type RedisClient } from '../redis/scripts.ts';
import { sleep } from './http.ts';

export interface PaceBucket {
  /** The bucket's name, e.g. `moltbook:agent:pinchy`, `moltbook:host:www.moltbook.com` (never a secret). */
  key: string;
  /** Tokens added per minute; 0: a bucket that only carries the waits a 429 asked for. */
  perMinute: number;
  /** The most tokens held at once. */
  burst: number;
}

/** A bucket is waited for longer than the caller allows: the request is not sent. */
export class PaceWaitTooLong extends Error {
  override readonly name = 'PaceWaitTooLong';
  readonly waitMs: number;
  constructor(waitMs: number) {
    super(`held back for ${Math.ceil(waitMs / 1000)} s by the request pace`);
    this.waitMs = waitMs;
  }
}

/** The request was aborted while it waited for its pace. */
export class PaceAborted extends Error {
  override readonly name = 'PaceAborted';
}

/** A server's own account of a bucket (e.g. `ratelimit-remaining` and `ratelimit-reset`). */
export interface Allowance {
  remaining: number;
  /** When the server's window starts again (epoch ms). */
  resetAt: number;
}

/** How long a bucket's state outlives its last use, at least (a full bucket and a missing one are the same). */
const MIN_TTL_MS = 10 * 60_000;

export class RequestPacer {
  readonly #redis: RedisClient;
  readonly #keys: RedisKeys;
  readonly #now: () => number;

  constructor(redis: RedisClient, space: KeySpace, now: () => number = Date.now) {
    this.#redis = redis;
    // Fleet-wide: a take's buckets (an agent's and its host's) go to one script, so they share the home prefix.
    this.#keys = keyLayout(space).home;
    this.#now = now;
  }

  /**
   * Takes one token from every bucket, waiting while any is empty or held back; a wait longer than `maxWaitMs`
   * throws PaceWaitTooLong (nothing taken), an abort PaceAborted.
   */
  async take(buckets: readonly PaceBucket[], opts: { maxWaitMs: number; signal?: AbortSignal }): Promise<void> {
    const named = buckets.map((b) => ({ ...b, key: this.#keys.pace(b.key) }));
    const ttl = Math.max(MIN_TTL_MS, ...buckets.map((b) => (b.perMinute > 0 ? Math.ceil((b.burst / b.perMinute) * 60_000) : 0)));
    for (;;) {
      const wait = await redisScripts(this.#redis).paceTake(named, this.#now(), ttl);
      if (wait === 0) return;
      if (wait > opts.maxWaitMs) throw new PaceWaitTooLong(wait);
      // Checked before the sleep too: a signal aborted already never fires its abort event again.
      if (opts.signal?.aborted) throw new PaceAborted('aborted while waiting for the request pace');
      await sleep(wait, opts.signal);
      if (opts.signal?.aborted) throw new PaceAborted('aborted while waiting for the request pace');
    }
  }

  /** Holds `bucket` back until `untilMs` for everyone (a 429's Retry-After); never shortens a longer hold. */
  async penalise(bucket: string, untilMs: number): Promise<void> {
    await redisScripts(this.#redis).pacePenalise(this.#keys.pace(bucket), untilMs, this.#now());
  }

  /** The server's count of what is left replaces the bucket's own; with none left it is held until the reset. */
  async observe(bucket: PaceBucket, allowance: Allowance): Promise<void> {
    await redisScripts(this.#redis).paceObserve(this.#keys.pace(bucket.key), allowance.remaining, allowance.resetAt, this.#now(), bucket.burst);
  }

  /** Tokens a bucket holds now (0 while held back): for choosing the least used key, and for polls to yield to work. */
  async available(bucket: PaceBucket): Promise<number> {
    const [tokens, at, held] = await this.#redis.hmget(this.#keys.pace(bucket.key), 'tokens', 'at', 'until');
    const now = this.#now();
    if (held !== null && Number(held) > now) return 0;
    if (tokens === null || bucket.perMinute === 0) return bucket.burst;
    return Math.min(bucket.burst, Number(tokens) + (Math.max(0, now - Number(at)) * bucket.perMinute) / 60_000);
  }
}
