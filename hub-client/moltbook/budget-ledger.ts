// The budget gate and ledger Moltbook lacks, kept locally: spend per agent per UTC day and month in Redis,
// judged by the same pure rules as warren's own hub (local-hub/budget-rules.ts), so warning/throttle/critical
// mean the same thing on either hub.
import type { RedisKeys } from '../../redis/keys.ts';
import { keyLayout, type KeyLayout, type KeySpace } from '../../redis/key-layout.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import { budgetHealth, limitsFor, thresholdsOf, usageBuckets, type BudgetConfig } from '../../local-hub/budget-rules.ts';
import { BudgetHealthSchema, type BudgetHealth } from '../types.ts';

const DAY_TTL_SECONDS = 3 * 86_400;
const MONTH_TTL_SECONDS = 40 * 86_400;
/** How long a report's key is remembered, so a retried report is not counted twice. */
const SEEN_TTL_SECONDS = 7 * 86_400;

export class LocalBudgetLedger {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;
  readonly #config: BudgetConfig;
  readonly #now: () => number;

  constructor(redis: RedisClient, space: KeySpace, config: BudgetConfig, now: () => number = Date.now) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
    this.#config = config;
    this.#now = now;
  }

  /** Adds `costUsd` to the agent's (and the fleet's) day and month, once per `reportKey`. */
  async record(agent: string, costUsd: number, reportKey: string | undefined): Promise<void> {
    if (!(costUsd > 0)) return;
    const home = this.#layout.home;
    if (reportKey) {
      const fresh = await this.#redis.set(home.moltbookSpendSeen(reportKey), '1', 'EX', SEEN_TTL_SECONDS, 'NX');
      if (fresh === null) return;
    }
    const { day, month } = usageBuckets(new Date(this.#now()));
    const add = (tx: ReturnType<RedisClient['multi']>, keys: RedisKeys, who: string | undefined): void => {
      tx.incrbyfloat(keys.moltbookSpend(who, 'd', day), costUsd).expire(keys.moltbookSpend(who, 'd', day), DAY_TTL_SECONDS);
      tx.incrbyfloat(keys.moltbookSpend(who, 'm', month), costUsd).expire(keys.moltbookSpend(who, 'm', month), MONTH_TTL_SECONDS);
    };
    const own = this.#layout.of(agent);
    if (own === home) {
      // One shard: the agent's and the fleet's spend in one MULTI, as before shards.
      const tx = this.#redis.multi();
      add(tx, own, agent);
      add(tx, home, undefined);
      await tx.exec();
      return;
    }
    // The agent's spend lives in its shard, the fleet's at home: a cluster refuses one MULTI over both slots, so each
    // is its own MULTI (a crash between them can leave this cost out of the fleet's sum, never count it twice).
    const agentTx = this.#redis.multi();
    add(agentTx, own, agent);
    const fleetTx = this.#redis.multi();
    add(fleetTx, home, undefined);
    await Promise.all([agentTx.exec(), fleetTx.exec()]);
  }

  async health(agent: string): Promise<BudgetHealth> {
    const now = new Date(this.#now());
    const { day, month } = usageBuckets(now);
    const own = this.#layout.of(agent);
    const home = this.#layout.home;
    // The agent's spend (its shard) and the fleet's (home): one MGET each, since their slots differ on a cluster.
    const [[d, m], [fd, fm]] = await Promise.all([this.#redis.mget(own.moltbookSpend(agent, 'd', day), own.moltbookSpend(agent, 'm', month)), this.#redis.mget(home.moltbookSpend(undefined, 'd', day), home.moltbookSpend(undefined, 'm', month))]);
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
