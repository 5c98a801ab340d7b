// Leader lease in Redis: with several daemons, only the holder schedules. Acquire-or-renew and release compare the
// holder's token in one script each (lua/lease-*.lua), so a daemon can never extend or drop a lease it lost.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { RedisKeys } from '../redis/keys.ts';
import { redisScripts, type RedisClient, type RedisScripts } from '../redis/scripts.ts';

/** Names a lease holder for `warren status`: host, pid and a random part (unique per process start). */
export function leaseToken(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

export class LeaderLease {
  readonly token: string;
  readonly #redis: RedisClient;
  readonly #scripts: RedisScripts;
  readonly #key: string;
  readonly #ttlMs: number;

  /** `token`: the daemon's, when it holds several leases (one per shard); default a new one. */
  constructor(redis: RedisClient, opts: { prefix: string; ttlMs: number; token?: string }) {
    this.token = opts.token ?? leaseToken();
    this.#redis = redis;
    this.#scripts = redisScripts(redis);
    this.#key = new RedisKeys(opts.prefix).leader;
    this.#ttlMs = opts.ttlMs;
  }

  /** Holds the lease after this call if it was free or already ours; the caller renews every ttl/3. */
  async tryAcquireOrRenew(): Promise<boolean> {
    return this.#scripts.leaseAcquire(this.#key, this.token, this.#ttlMs);
  }

  async release(): Promise<void> {
    await this.#scripts.leaseRelease(this.#key, this.token);
  }

  async holder(): Promise<string | null> {
    return this.#redis.get(this.#key);
  }
}
