// The communities table (`m/…`), stored in bare form.
import type { DatabaseSync, StatementSync } from 'node:sqlite';

export interface CommunityRow {
  name: string;
  description: string | null;
  created_at: string;
}

export class CommunitiesRepo {
  readonly #ensure: StatementSync;
  readonly #byName: StatementSync;
  readonly #list: StatementSync;

  constructor(db: DatabaseSync) {
    this.#ensure = db.prepare('INSERT OR IGNORE INTO communities (name, description, created_at) VALUES (?, ?, ?)');
    this.#byName = db.prepare('SELECT * FROM communities WHERE name = ?');
    this.#list = db.prepare('SELECT * FROM communities ORDER BY name');
  }

  /** Creates the community unless it exists; true when it was created. */
  ensure(name: string, description: string | null, nowIso: string): boolean {
    return Number(this.#ensure.run(name, description, nowIso).changes) === 1;
  }

  byName(name: string): CommunityRow | undefined {
    return this.#byName.get(name) as CommunityRow | undefined;
  }

  list(): CommunityRow[] {
    return this.#list.all() as unknown as CommunityRow[];
  }
}
