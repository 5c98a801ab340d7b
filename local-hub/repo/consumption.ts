// The usage ledger: one row per reported consumption, summed per UTC day and calendar month.
import type { DatabaseSync, StatementSync } from 'node:sqlite';

export interface NewConsumption {
  id: string;
  agent_id: string;
  day: string;
  month: string;
  tokens_input: number;
  tokens_output: number;
  cost_usd: number;
  tool_type: string | null;
  duration_seconds: number | null;
  activation_id: string | null;
  task_type: string | null;
  task_priority: string | null;
  metadata: string | null;
  created_at: string;
}

export class ConsumptionRepo {
  readonly #insert: StatementSync;
  readonly #day: StatementSync;
  readonly #month: StatementSync;
  readonly #toolsOnDay: StatementSync;
  readonly #monthAll: StatementSync;
  readonly #dayAll: StatementSync;
  readonly #dayTotals: StatementSync;

  constructor(db: DatabaseSync) {
    this.#insert = db.prepare(
      `INSERT INTO consumption (id, agent_id, day, month, tokens_input, tokens_output, cost_usd, tool_type, duration_seconds,
         activation_id, task_type, task_priority, metadata, created_at)
       VALUES (:id, :agent_id, :day, :month, :tokens_input, :tokens_output, :cost_usd, :tool_type, :duration_seconds,
         :activation_id, :task_type, :task_priority, :metadata, :created_at)`,
    );
    this.#day = db.prepare('SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM consumption WHERE agent_id = ? AND day = ?');
    this.#month = db.prepare('SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM consumption WHERE agent_id = ? AND month = ?');
    this.#toolsOnDay = db.prepare(`SELECT COALESCE(tool_type, 'default') AS tool, SUM(cost_usd) AS usd FROM consumption WHERE agent_id = ? AND day = ? GROUP BY 1 ORDER BY 1`);
    // Everyone's totals come from consumption_totals (kept by triggers, migration 4), not a sum over the ledger.
    this.#monthAll = db.prepare("SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM consumption_totals WHERE period = 'month' AND bucket = ?");
    this.#dayAll = db.prepare("SELECT COALESCE(SUM(cost_usd), 0) AS usd FROM consumption_totals WHERE period = 'day' AND bucket = ?");
    this.#dayTotals = db.prepare(
      'SELECT agent_id, SUM(tokens_input) AS tokens_input, SUM(tokens_output) AS tokens_output, SUM(cost_usd) AS cost_usd FROM consumption WHERE day = ? GROUP BY agent_id',
    );
  }

  /** Tokens and cost per agent on one UTC day. */
  totalsOnDay(day: string): Map<string, { tokens_input: number; tokens_output: number; cost_usd: number }> {
    const rows = this.#dayTotals.all(day) as Array<{ agent_id: string; tokens_input: number; tokens_output: number; cost_usd: number }>;
    return new Map(rows.map((r) => [r.agent_id, { tokens_input: Number(r.tokens_input), tokens_output: Number(r.tokens_output), cost_usd: Number(r.cost_usd) }]));
  }

  insert(c: NewConsumption): void {
    this.#insert.run({ ...c });
  }

  usedOnDay(agentId: string, day: string): number {
    return Number((this.#day.get(agentId, day) as { usd: number }).usd);
  }

  usedInMonth(agentId: string, month: string): number {
    return Number((this.#month.get(agentId, month) as { usd: number }).usd);
  }

  toolsOnDay(agentId: string, day: string): Record<string, number> {
    const rows = this.#toolsOnDay.all(agentId, day) as Array<{ tool: string; usd: number }>;
    return Object.fromEntries(rows.map((r) => [r.tool, Number(r.usd)]));
  }

  /** Everyone's spend this month (the collective view). */
  usedInMonthByAll(month: string): number {
    return Number((this.#monthAll.get(month) as { usd: number }).usd);
  }

  /** Everyone's spend on one UTC day (the fleet's daily limit). */
  usedOnDayByAll(day: string): number {
    return Number((this.#dayAll.get(day) as { usd: number }).usd);
  }
}
