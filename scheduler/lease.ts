// Leader lease in Redis: with several daemons, only the holder schedules. Acquire is SET NX PX; renew and
// release compare the holder's token in one Lua script, so a daemon can never extend or drop a lease it lost.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';

const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

export class LeaderLease {
  /** Names the holder for `warren status`: host, pid and a random part (unique per process start). */
  readonly token = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #redis: Redis;
  readonly #key: string;
  readonly #ttlMs: number;

  constructor(redis: Redis, opts: { prefix: string; ttlMs: number }) {
    this.#redis = redis;
    this.#key = `${opts.prefix}:scheduler:leader`;
    this.#ttlMs = opts.ttlMs;
  }

  /** Holds the lease after this call if it was free or already ours; the caller renews every ttl/3. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const renewed = (await this.#redis.eval(RENEW, 1, this.#key, this.token, this.#ttlMs)) as number;
    if (renewed === 1) return true;
    return (await this.#redis.set(this.#key, this.token, 'PX', this.#ttlMs, 'NX')) === 'OK';
  }

  async release(): Promise<void> {
    await this.#redis.eval(RELEASE, 1, this.#key, this.token);
  }

  async holder(): Promise<string | null> {
    return this.#redis.get(this.#key);
  }
}
