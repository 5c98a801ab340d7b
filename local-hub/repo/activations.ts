// The activation log: one row per `POST /agents/{id}/activated`, counted per UTC day for the watch page.
import type { DatabaseSync, StatementSync } from 'node:sqlite';

export class ActivationsRepo {
  readonly #insert: StatementSync;
  readonly #countsOnDay: StatementSync;

  constructor(db: DatabaseSync) {
    this.#insert = db.prepare('INSERT INTO activations (agent_id, day, at) VALUES (?, ?, ?)');
    this.#countsOnDay = db.prepare('SELECT agent_id, COUNT(*) AS n FROM activations WHERE day = ? GROUP BY agent_id');
  }

  record(agentId: string, day: string, atIso: string): void {
    this.#insert.run(agentId, day, atIso);
  }

  countsOnDay(day: string): Map<string, number> {
    const rows = this.#countsOnDay.all(day) as Array<{ agent_id: string; n: number }>;
    return new Map(rows.map((r) => [r.agent_id, Number(r.n)]));
  }
}
