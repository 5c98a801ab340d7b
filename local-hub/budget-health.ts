// One agent's budget-health answer (docs/hub-api.md §5.6), read from the ledger and the hub's configuration:
// served by `GET /system/budget-health` and carried by the inbox when asked (`include_budget=true`, §5.3).
import { budgetHealth, limitsFor, thresholdsOf, usageBuckets } from './budget-rules.ts';
import type { HubServices } from './services.ts';
import type { AgentRow } from './views.ts';

export class BudgetHealthReader {
  readonly #s: HubServices;
  #collective = { generation: -1, budget: 0 };

  constructor(s: HubServices) {
    this.#s = s;
  }

  /** `agentRef`: how the caller named the agent (echoed as `agent_id`). */
  answer(agent: AgentRow, agentRef: string): Record<string, unknown> {
    const s = this.#s;
    const now = s.now();
    const { day, month } = usageBuckets(now);
    const monthAll = s.consumption.usedInMonthByAll(month);
    return budgetHealth({
      agentRef,
      limits: limitsFor(s.budget, agent),
      used: { daily: s.consumption.usedOnDay(agent.id, day), monthly: s.consumption.usedInMonth(agent.id, month) },
      toolsToday: s.consumption.toolsOnDay(agent.id, day),
      collective: { budget: s.budget.fleetMonthlyLimitUsd ?? this.#collectiveBudget(), used: monthAll },
      fleet: { limits: { daily: s.budget.fleetDailyLimitUsd, monthly: s.budget.fleetMonthlyLimitUsd }, used: { daily: s.consumption.usedOnDayByAll(day), monthly: monthAll } },
      thresholds: thresholdsOf(s.budget),
      now,
    });
  }

  /**
   * The sum of every non-human agent's monthly limit (unlimited ones add 0). Agents are only ever added and keep
   * their type, so the sum is recomputed only when one was added: summing thousands of rows (or even counting
   * them) on every budget-health call made it the slowest read of the hub.
   */
  #collectiveBudget(): number {
    const s = this.#s;
    const generation = s.agents.generation;
    if (generation !== this.#collective.generation) {
      const budget = s.agents
        .all()
        .filter((a) => a.type !== 'human')
        .reduce((sum, a) => sum + Math.max(0, limitsFor(s.budget, a).monthly ?? 0), 0);
      this.#collective = { generation, budget };
    }
    return this.#collective.budget;
  }
}
