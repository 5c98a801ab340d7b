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

/** Daily counters outlive their day a little, so `warren status` around midnight still reads yesterday's. */
const DAILY_TTL_SECONDS = 3 * 86_400;

/** The UTC day of `at`, e.g. 2026-11-23 (the hub's budget days are UTC too). */
export function utcDay(at: number | Date = Date.now()): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** The hash of one UTC day's counters, one field per agent and counter (`<agent>|posts`); write-allowance.ts counts writes in it. */
export function dayKey(prefix: string, day: string): string {
  return `${prefix}:agent-day:${day}`;
}

// Layout: one Redis hash per fact, one field per agent (and one hash per UTC day for the counters), so reading
// every agent's state is a few HMGETs with one reply each, not thousands of replies (10,000 agents: ~20 ms).
const DAY_FIELDS = ['activations', 'posts', 'comments', 'tokens_input', 'tokens_output', 'cost_usd'] as const;

export class AgentStateStore {
  readonly #redis: Redis;
  readonly #failures: string;
  readonly #lastFailure: string;
  readonly #lastActivated: string;
  readonly #paused: string;
  readonly #notRunnable: string;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
    this.#failures = `${prefix}:agent-failures`;
    this.#lastFailure = `${prefix}:agent-last-failure`;
    this.#lastActivated = `${prefix}:agent-last-activated`;
    this.#paused = `${prefix}:agent-paused`;
    this.#notRunnable = `${prefix}:agent-not-runnable`;
  }

  #dayKey(day: string): string {
    return dayKey(this.#prefix, day);
  }

  async recordSuccess(agent: string): Promise<void> {
    await this.#redis.multi().hdel(this.#failures, agent).hdel(this.#lastFailure, agent).exec();
  }

  async recordFailure(agent: string, at = Date.now()): Promise<number> {
    const [[, failures]] = (await this.#redis.multi().hincrby(this.#failures, agent, 1).hset(this.#lastFailure, agent, at).exec()) as [[Error | null, number]];
    return failures;
  }

  /** The end of an activation (any outcome): what exploration's staleness order is based on. */
  async recordActivated(agent: string, usage: { tokensInput: number; tokensOutput: number; costUsd: number; posts: number; comments: number }, at = Date.now()): Promise<void> {
    const day = this.#dayKey(utcDay(at));
    await this.#redis
      .multi()
      .hset(this.#lastActivated, agent, at)
      .hincrby(day, `${agent}|activations`, 1)
      .hincrby(day, `${agent}|posts`, usage.posts)
      .hincrby(day, `${agent}|comments`, usage.comments)
      .hincrby(day, `${agent}|tokens_input`, Math.round(usage.tokensInput))
      .hincrby(day, `${agent}|tokens_output`, Math.round(usage.tokensOutput))
      .hincrbyfloat(day, `${agent}|cost_usd`, usage.costUsd)
      .expire(day, DAILY_TTL_SECONDS)
      .exec();
  }

  async setPaused(agent: string, paused: boolean): Promise<void> {
    if (paused) await this.#redis.hset(this.#paused, agent, 1);
    else await this.#redis.hdel(this.#paused, agent);
  }

  /**
   * What a daemon found about the agents it checked: `reasons` holds those it will not run (and why), every
   * other of `checked` loses its mark. Read by `warren status` and `warren doctor` on any machine.
   */
  async setNotRunnable(checked: readonly string[], reasons: ReadonlyMap<string, string>): Promise<void> {
    const m = this.#redis.multi();
    const cleared = checked.filter((a) => !reasons.has(a));
    if (cleared.length) m.hdel(this.#notRunnable, ...cleared);
    if (reasons.size) m.hset(this.#notRunnable, Object.fromEntries(reasons));
    await m.exec();
  }

  /** The agents marked not runnable, with the reason. */
  async notRunnable(agents: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (agents.length === 0) return out;
    const values = await this.#redis.hmget(this.#notRunnable, ...agents);
    agents.forEach((a, i) => {
      if (values[i]) out.set(a, values[i]);
    });
    return out;
  }

  /** States of many agents in one round trip. */
  async getMany(agents: readonly string[]): Promise<Map<string, AgentState>> {
    const out = new Map<string, AgentState>();
    if (agents.length === 0) return out;
    const rows = (await this.#redis
      .pipeline()
      .hmget(this.#failures, ...agents)
      .hmget(this.#lastFailure, ...agents)
      .hmget(this.#lastActivated, ...agents)
      .hmget(this.#paused, ...agents)
      .exec()) ?? [];
    const [failures, lastFailure, lastActivated, paused] = rows.map((r) => (r[1] as Array<string | null> | undefined) ?? []);
    agents.forEach((a, i) => {
      const lf = lastFailure?.[i];
      const la = lastActivated?.[i];
      out.set(a, {
        failures: Number(failures?.[i] ?? 0),
        lastFailureAt: lf ? Number(lf) : undefined,
        lastActivatedAt: la ? Number(la) : undefined,
        paused: paused?.[i] === '1',
      });
    });
    return out;
  }

  /** Posts and comments made today by many agents (what exploration's daily limits need; a third of dailyMany's reply). */
  async contributionsToday(agents: readonly string[], day = utcDay()): Promise<Map<string, { posts: number; comments: number }>> {
    const out = new Map<string, { posts: number; comments: number }>();
    if (agents.length === 0) return out;
    const values = await this.#redis.hmget(this.#dayKey(day), ...agents.flatMap((a) => [`${a}|posts`, `${a}|comments`]));
    agents.forEach((a, i) => out.set(a, { posts: Number(values[2 * i] ?? 0), comments: Number(values[2 * i + 1] ?? 0) }));
    return out;
  }

  /** Today's counters of many agents in one round trip. */
  async dailyMany(agents: readonly string[], day = utcDay()): Promise<Map<string, DailyCounters>> {
    const out = new Map<string, DailyCounters>();
    if (agents.length === 0) return out;
    const values = await this.#redis.hmget(this.#dayKey(day), ...agents.flatMap((a) => DAY_FIELDS.map((f) => `${a}|${f}`)));
    agents.forEach((a, i) => {
      const v = (k: number): number => Number(values[i * DAY_FIELDS.length + k] ?? 0);
      out.set(a, { activations: v(0), posts: v(1), comments: v(2), tokensInput: v(3), tokensOutput: v(4), costUsd: v(5) });
    });
    return out;
  }
}
