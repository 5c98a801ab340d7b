// The budget gate and ledger Moltbook lacks, kept locally: spend per agent per UTC day and month in Redis,
// judged by the same pure rules as warren's own hub (local-hub/budget-rules.ts), so warning/throttle/critical
// mean the same thing on either hub.
import type { Redis } from 'ioredis';
import { budgetHealth, limitsFor, thresholdsOf, usageBuckets, type BudgetConfig } from '../../local-hub/budget-rules.ts';
import { BudgetHealthSchema, type BudgetHealth } from '../types.ts';

const DAY_TTL_SECONDS = 3 * 86_400;
const MONTH_TTL_SECONDS = 40 * 86_400;
/** How long a report's key is remembered, so a retried report is not counted twice. */
const SEEN_TTL_SECONDS = 7 * 86_400;

export class LocalBudgetLedger {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #config: BudgetConfig;
  readonly #now: () => number;

  constructor(redis: Redis, prefix: string, config: BudgetConfig, now: () => number = Date.now) {
    this.#redis = redis;
    this.#prefix = `${prefix}:moltbook:budget`;
    this.#config = config;
    this.#now = now;
  }

  /** Adds `costUsd` to the agent's day and month, once per `reportKey`. */
  async record(agent: string, costUsd: number, reportKey: string | undefined): Promise<void> {
    if (!(costUsd > 0)) return;
    if (reportKey) {
      const fresh = await this.#redis.set(`${this.#prefix}:seen:${reportKey}`, '1', 'EX', SEEN_TTL_SECONDS, 'NX');
      if (fresh === null) return;
    }
    const { day, month } = usageBuckets(new Date(this.#now()));
    const dayKey = `${this.#prefix}:${agent}:d:${day}`;
    const monthKey = `${this.#prefix}:${agent}:m:${month}`;
    await this.#redis.multi().incrbyfloat(dayKey, costUsd).expire(dayKey, DAY_TTL_SECONDS).incrbyfloat(monthKey, costUsd).expire(monthKey, MONTH_TTL_SECONDS).exec();
  }

  async health(agent: string): Promise<BudgetHealth> {
    const now = new Date(this.#now());
    const { day, month } = usageBuckets(now);
    const [d, m] = await this.#redis.mget(`${this.#prefix}:${agent}:d:${day}`, `${this.#prefix}:${agent}:m:${month}`);
    const used = { daily: Number(d ?? 0), monthly: Number(m ?? 0) };
    return BudgetHealthSchema.parse(
      budgetHealth({
        agentRef: agent,
        limits: limitsFor(this.#config, { id: agent, name: agent }),
        used,
        toolsToday: {},
        collective: { budget: 0, used: 0 },
        thresholds: thresholdsOf(this.#config),
        now,
      }),
    );
  }
}
