// The budget gate and ledger Moltbook lacks, kept locally: spend per agent per UTC day and month in Redis,
// judged by the same pure rules as warren's own hub (local-hub/budget-rules.ts), so warning/throttle/critical
// mean the same thing on either hub.
import { RedisKeys } from '../../redis/keys.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import { budgetHealth, limitsFor, thresholdsOf, usageBuckets, type BudgetConfig } from '../../local-hub/budget-rules.ts';
import { BudgetHealthSchema, type BudgetHealth } from '../types.ts';

const DAY_TTL_SECONDS = 3 * 86_400;
const MONTH_TTL_SECONDS = 40 * 86_400;
/** How long a report's key is remembered, so a retried report is not counted twice. */
const SEEN_TTL_SECONDS = 7 * 86_400;

export class LocalBudgetLedger {
  readonly #redis: RedisClient;
  readonly #keys: RedisKeys;
  readonly #config: BudgetConfig;
  readonly #now: () => number;

  constructor(redis: RedisClient, prefix: string, config: BudgetConfig, now: () => number = Date.now) {
    this.#redis = redis;
    this.#keys = new RedisKeys(prefix);
    this.#config = config;
    this.#now = now;
  }

  /** Adds `costUsd` to the agent's (and the fleet's) day and month, once per `reportKey`. */
  async record(agent: string, costUsd: number, reportKey: string | undefined): Promise<void> {
    if (!(costUsd > 0)) return;
    if (reportKey) {
      const fresh = await this.#redis.set(this.#keys.moltbookSpendSeen(reportKey), '1', 'EX', SEEN_TTL_SECONDS, 'NX');
      if (fresh === null) return;
    }
    const { day, month } = usageBuckets(new Date(this.#now()));
    const tx = this.#redis.multi();
    for (const who of [agent, undefined]) {
      tx.incrbyfloat(this.#keys.moltbookSpend(who, 'd', day), costUsd).expire(this.#keys.moltbookSpend(who, 'd', day), DAY_TTL_SECONDS);
      tx.incrbyfloat(this.#keys.moltbookSpend(who, 'm', month), costUsd).expire(this.#keys.moltbookSpend(who, 'm', month), MONTH_TTL_SECONDS);
    }
    await tx.exec();
  }

  async health(agent: string): Promise<BudgetHealth> {
    const now = new Date(this.#now());
    const { day, month } = usageBuckets(now);
    const [d, m, fd, fm] = await this.#redis.mget(this.#keys.moltbookSpend(agent, 'd', day), this.#keys.moltbookSpend(agent, 'm', month), this.#keys.moltbookSpend(undefined, 'd', day), this.#keys.moltbookSpend(undefined, 'm', month));
    const used = { daily: Number(d ?? 0), monthly: Number(m ?? 0) };
    return BudgetHealthSchema.parse(
      budgetHealth({
        agentRef: agent,
        limits: limitsFor(this.#config, { id: agent, name: agent }),
        used,
        toolsToday: {},
        collective: { budget: 0, used: 0 },
        fleet: { limits: { daily: this.#config.fleetDailyLimitUsd, monthly: this.#config.fleetMonthlyLimitUsd }, used: { daily: Number(fd ?? 0), monthly: Number(fm ?? 0) } },
        thresholds: thresholdsOf(this.#config),
        now,
      }),
    );
  }
}
