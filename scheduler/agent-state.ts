// Per-agent scheduling state shared through Redis, so schedulers, workers and `warren status` on different
// machines agree: failures (for backoff), last activation, pause flag, and today's counters.
import type { Redis } from 'ioredis';

export interface AgentState {
  failures: number;
  lastFailureAt: number | undefined;
  lastActivatedAt: number | undefined;
  paused: boolean;
}

export interface DailyCounters {
  activations: number;
  posts: number;
  comments: number;
  tokensInput: number;
  tokensOutput: number;
  costUsd: number;
}

const ZERO_DAY: DailyCounters = { activations: 0, posts: 0, comments: 0, tokensInput: 0, tokensOutput: 0, costUsd: 0 };
/** Daily counters outlive their day a little, so `warren status` around midnight still reads yesterday's. */
const DAILY_TTL_SECONDS = 3 * 86_400;

/** The UTC day of `at`, e.g. 2026-11-23 (the hub's budget days are UTC too). */
export function utcDay(at: number | Date = Date.now()): string {
  return new Date(at).toISOString().slice(0, 10);
}

export class AgentStateStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  #key(agent: string): string {
    return `${this.#prefix}:agent-state:${agent}`;
  }

  #dayKey(agent: string, day: string): string {
    return `${this.#prefix}:agent-day:${agent}:${day}`;
  }

  async recordSuccess(agent: string): Promise<void> {
    await this.#redis.multi().hset(this.#key(agent), { failures: 0, last_success_at: Date.now() }).hdel(this.#key(agent), 'last_failure_at').exec();
  }

  async recordFailure(agent: string, at = Date.now()): Promise<number> {
    const [[, failures]] = (await this.#redis.multi().hincrby(this.#key(agent), 'failures', 1).hset(this.#key(agent), 'last_failure_at', at).exec()) as [[Error | null, number]];
    return failures;
  }

  /** The end of an activation (any outcome): what exploration's staleness order is based on. */
  async recordActivated(agent: string, usage: { tokensInput: number; tokensOutput: number; costUsd: number; posts: number; comments: number }, at = Date.now()): Promise<void> {
    const day = this.#dayKey(agent, utcDay(at));
    await this.#redis
      .multi()
      .hset(this.#key(agent), 'last_activated_at', at)
      .hincrby(day, 'activations', 1)
      .hincrby(day, 'posts', usage.posts)
      .hincrby(day, 'comments', usage.comments)
      .hincrby(day, 'tokens_input', Math.round(usage.tokensInput))
      .hincrby(day, 'tokens_output', Math.round(usage.tokensOutput))
      .hincrbyfloat(day, 'cost_usd', usage.costUsd)
      .expire(day, DAILY_TTL_SECONDS)
      .exec();
  }

  async setPaused(agent: string, paused: boolean): Promise<void> {
    if (paused) await this.#redis.hset(this.#key(agent), 'paused', 1);
    else await this.#redis.hdel(this.#key(agent), 'paused');
  }

  /** States of many agents in one round trip. */
  async getMany(agents: readonly string[]): Promise<Map<string, AgentState>> {
    const out = new Map<string, AgentState>();
    if (agents.length === 0) return out;
    const pipe = this.#redis.pipeline();
    for (const a of agents) pipe.hmget(this.#key(a), 'failures', 'last_failure_at', 'last_activated_at', 'paused');
    const rows = (await pipe.exec()) ?? [];
    agents.forEach((a, i) => {
      const [failures, lastFailure, lastActivated, paused] = (rows[i]?.[1] as Array<string | null> | undefined) ?? [];
      out.set(a, {
        failures: Number(failures ?? 0),
        lastFailureAt: lastFailure ? Number(lastFailure) : undefined,
        lastActivatedAt: lastActivated ? Number(lastActivated) : undefined,
        paused: paused === '1',
      });
    });
    return out;
  }

  /** Today's counters of many agents in one round trip. */
  async dailyMany(agents: readonly string[], day = utcDay()): Promise<Map<string, DailyCounters>> {
    const out = new Map<string, DailyCounters>();
    if (agents.length === 0) return out;
    const pipe = this.#redis.pipeline();
    for (const a of agents) pipe.hmget(this.#dayKey(a, day), 'activations', 'posts', 'comments', 'tokens_input', 'tokens_output', 'cost_usd');
    const rows = (await pipe.exec()) ?? [];
    agents.forEach((a, i) => {
      const v = ((rows[i]?.[1] as Array<string | null> | undefined) ?? []).map((x) => Number(x ?? 0));
      out.set(a, v.length ? { activations: v[0]!, posts: v[1]!, comments: v[2]!, tokensInput: v[3]!, tokensOutput: v[4]!, costUsd: v[5]! } : { ...ZERO_DAY });
    });
    return out;
  }
}
