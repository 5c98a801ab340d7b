// Which shards' leases this daemon goes for (with `redis.shards` above 1): every scheduling daemon says it is alive in
// a roster (a home hash, each entry expiring with the lease TTL) and takes the shards ownedShards() gives it. A
// daemon that dies drops out of the roster within a TTL, and only its shards move to the others.
import type { Logger } from 'pino';
import { keyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisClient } from '../redis/scripts.ts';
import { ownedShards, type RosterEntry } from './shard-owners.ts';

export class ShardLeadership {
  readonly #redis: RedisClient;
  readonly #key: string;
  readonly #self: RosterEntry;
  readonly #shardCount: number;
  readonly #ttlMs: number;
  readonly #logger: Logger;
  #owned = new Set<number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(redis: RedisClient, space: KeySpace, opts: { token: string; shards?: readonly number[]; ttlMs: number; logger: Logger }) {
    const layout = keyLayout(space);
    this.#redis = redis;
    this.#key = layout.home.schedulerRoster;
    this.#self = { token: opts.token, ...(opts.shards ? { shards: opts.shards } : {}) };
    this.#shardCount = layout.shards.length;
    this.#ttlMs = opts.ttlMs;
    this.#logger = opts.logger;
  }

  /** Whether this daemon should hold the shard's lease now. */
  wants(shard: number): boolean {
    return this.#owned.has(shard);
  }

  /** Joins the roster (resolves after the first reading) and keeps renewing every TTL/3. */
  async start(): Promise<void> {
    await this.beat();
    this.#timer = setInterval(() => void this.beat(), Math.max(50, Math.floor(this.#ttlMs / 3)));
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#owned = new Set();
    await this.#redis.hdel(this.#key, this.#self.token);
  }

  /** Says this daemon is alive, reads who else is, and recomputes the shards owned. */
  async beat(now = Date.now()): Promise<void> {
    try {
      const [, all] = (await this.#redis
        .multi()
        .hset(this.#key, this.#self.token, `${now + this.#ttlMs}|${this.#self.shards?.join(',') ?? '*'}`)
        .hgetall(this.#key)
        .exec()) as [[Error | null, unknown], [Error | null, Record<string, string>]];
      const live: RosterEntry[] = [];
      const gone: string[] = [];
      for (const [token, value] of Object.entries(all[1] ?? {})) {
        const [until, shards] = value.split('|');
        if (Number(until) < now) gone.push(token);
        else live.push({ token, ...(shards && shards !== '*' ? { shards: shards.split(',').map(Number) } : {}) });
      }
      if (gone.length) await this.#redis.hdel(this.#key, ...gone);
      const owned = ownedShards(this.#self, live, this.#shardCount);
      if ([...owned].join() !== [...this.#owned].join()) this.#logger.info({ shards: [...owned], daemons: live.length }, 'shards this daemon schedules');
      this.#owned = owned;
    } catch (err) {
      // Cannot tell who is alive: keep the shards held (their leases still guard them) until Redis answers.
      this.#logger.warn({ err }, 'cannot renew this daemon in the scheduler roster');
    }
  }
}
