// The embedded memory store: one SQLite file in the data folder (node:sqlite). Keyword search is FTS5's BM25
// over an external-content index kept by triggers; embeddings are Float32 blobs compared by cosine in JS.
import { randomUUID } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { privateSqlite, type ModeFix } from '../local-hub/private-files.ts';
import { cosine } from './cosine.ts';
import { entrySize, normaliseScores, peopleColumn, personNeedle, toEvict, type Distillation, type MemoryEntry, type MemoryQuery, type MemoryStore, type NewMemory, type Recalled } from './memory-store.ts';
import { queryWords } from './query-words.ts';
import { entryOfRow, type MemoryRow } from './memory-row.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS memories (
  rowid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  agent TEXT NOT NULL,
  key TEXT NOT NULL,
  kind TEXT NOT NULL,
  text TEXT NOT NULL,
  who TEXT,
  post_id TEXT,
  community TEXT,
  people TEXT,
  created_at INTEGER NOT NULL,
  recalls INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL,
  embedding BLOB,
  retired_at INTEGER,
  UNIQUE (agent, key)
);
CREATE INDEX IF NOT EXISTS memories_agent_created ON memories (agent, created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(text, content='memories', content_rowid='rowid', tokenize='porter unicode61');
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts (rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
`;


const COLUMNS = 'm.id, m.agent, m.key, m.kind, m.text, m.who, m.post_id, m.community, m.people, m.created_at, m.recalls, m.bytes';

/** The SQL condition and its parameters for a query: current entries only, its `visibleTo` (memory/audience.ts), its `facts`. */
function visible(q: MemoryQuery): { sql: string; params: Array<string | null> } {
  let sql = ' AND m.retired_at IS NULL';
  const params: Array<string | null> = [];
  if (q.visibleTo?.person !== undefined) {
    sql += ' AND (m.people IS NULL OR instr(m.people, ?) > 0)';
    params.push(personNeedle(q.visibleTo.person));
  } else if (q.visibleTo) sql += ' AND m.people IS NULL';
  if (q.facts) sql += " AND m.kind = 'fact'";
  if (q.facts?.people) {
    sql += ' AND m.people IS ?';
    params.push(peopleColumn(q.facts.people));
  }
  return { sql, params };
}

export class SqliteMemoryStore implements MemoryStore {
  readonly #db: DatabaseSync;

  /**
   * `path`: a file (its folder is created) or ':memory:'. Every agent's notes are in it: file and folder are the
   * daemon's user's alone (local-hub/private-files.ts); `onModeFix` hears of one an older warren left open.
   */
  constructor(path: string, onModeFix: (fix: ModeFix) => void = () => undefined) {
    if (path !== ':memory:') for (const fix of privateSqlite(path)) onModeFix(fix);
    this.#db = new DatabaseSync(path);
    if (path !== ':memory:') this.#db.exec('PRAGMA journal_mode = WAL');
    this.#db.exec('PRAGMA busy_timeout = 5000');
    this.#db.exec(SCHEMA);
    this.#addPeople();
    this.#addRetired();
  }

  /** Stores from before distillation gain the column; every entry they hold is current. */
  #addRetired(): void {
    const columns = this.#db.prepare('PRAGMA table_info(memories)').all() as Array<{ name: string }>;
    if (!columns.some((c) => c.name === 'retired_at')) this.#db.exec('ALTER TABLE memories ADD COLUMN retired_at INTEGER');
  }

  /** Stores from before entries knew their people gain the column; an entry's `who` is its one person. */
  #addPeople(): void {
    const columns = this.#db.prepare('PRAGMA table_info(memories)').all() as Array<{ name: string }>;
    if (columns.some((c) => c.name === 'people')) return;
    this.#transaction(() => {
      this.#db.exec('ALTER TABLE memories ADD COLUMN people TEXT');
      this.#db.exec("UPDATE memories SET people = '|' || who || '|' WHERE who IS NOT NULL AND instr(who, '|') = 0");
    });
  }

  write(agent: string, entries: readonly NewMemory[]): Promise<number> {
    return settled(() => {
      let written = 0;
      this.#transaction(() => (written = this.#insert(agent, entries)));
      return written;
    });
  }

  /** Inside a transaction: the entries whose keys are new; how many were. */
  #insert(agent: string, entries: readonly NewMemory[]): number {
    const insert = this.#db.prepare(
      `INSERT OR IGNORE INTO memories (id, agent, key, kind, text, who, post_id, community, people, created_at, bytes, embedding)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    let written = 0;
    for (const e of entries) {
      const blob = e.embedding ? new Uint8Array(Float32Array.from(e.embedding).buffer) : null;
      const r = insert.run(randomUUID(), agent, e.key, e.kind, e.text, e.who ?? null, e.postId ?? null, e.community ?? null, peopleColumn(e.people), e.createdAt, entrySize(e), blob);
      written += Number(r.changes);
    }
    return written;
  }

  current(agent: string, keys: readonly string[]): Promise<MemoryEntry[]> {
    return settled(() => {
      const byKey = this.#db.prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.agent = ? AND m.key = ? AND m.retired_at IS NULL`);
      return keys.flatMap((k) => {
        const row = byKey.get(agent, k) as unknown as MemoryRow | undefined;
        return row ? [entryOfRow(row)] : [];
      });
    });
  }

  distil(agent: string, d: Distillation): Promise<boolean> {
    return settled(() => {
      const retire = this.#db.prepare('UPDATE memories SET retired_at = ? WHERE agent = ? AND id = ? AND retired_at IS NULL');
      const retireFact = this.#db.prepare("UPDATE memories SET retired_at = ? WHERE agent = ? AND id = ? AND kind = 'fact' AND retired_at IS NULL");
      let applied = false;
      this.#transaction(() => {
        const sources = new Set(d.sources);
        const facts = new Set(d.retire);
        const changed = [...sources].reduce((n, id) => n + Number(retire.run(d.at, agent, id).changes), 0) + [...facts].reduce((n, id) => n + Number(retireFact.run(d.at, agent, id).changes), 0);
        // Someone was first: roll back (the throw), change nothing.
        if (changed !== sources.size + facts.size) throw new AlreadyDistilled();
        this.#insert(agent, d.add);
        applied = true;
      }, AlreadyDistilled);
      return applied;
    });
  }

  search(agent: string, q: MemoryQuery): Promise<Recalled[]> {
    return settled(() => this.#search(agent, q));
  }

  #search(agent: string, q: MemoryQuery): Recalled[] {
    const only = visible(q);
    switch (q.strategy) {
      case 'recent': {
        const rows = this.#db.prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.agent = ?${only.sql} ORDER BY m.created_at DESC, m.rowid DESC LIMIT ?`).all(agent, ...only.params, q.limit) as unknown as MemoryRow[];
        return rows.map((r) => ({ entry: entryOfRow(r), score: 1 }));
      }
      case 'keyword': {
        const words = queryWords(q.text);
        if (words.length === 0) return [];
        const match = words.map((w) => `"${w}"`).join(' OR ');
        // bm25() is lower for better matches.
        const rows = this.#db
          .prepare(`SELECT ${COLUMNS}, -bm25(memories_fts) AS score FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid
                    WHERE memories_fts MATCH ? AND m.agent = ?${only.sql} ORDER BY score DESC, m.created_at DESC LIMIT ?`)
          .all(match, agent, ...only.params, q.limit) as unknown as Array<MemoryRow & { score: number }>;
        return normaliseScores(rows.map((r) => ({ entry: entryOfRow(r), score: r.score })), q.threshold);
      }
      case 'embedding': {
        // Scores from the vectors alone; only the best rows are read whole (building 100,000 entries to keep 10
        // was most of the time).
        const vectors = this.#db.prepare(`SELECT m.rowid AS r, m.embedding FROM memories m WHERE m.agent = ? AND m.embedding IS NOT NULL${only.sql}`).iterate(agent, ...only.params) as Iterable<{ r: number; embedding: Uint8Array }>;
        const threshold = q.threshold ?? -1;
        const scored: Array<{ r: number; score: number }> = [];
        for (const row of vectors) {
          const v = new Float32Array(row.embedding.buffer, row.embedding.byteOffset, row.embedding.byteLength / 4);
          const score = cosine(v, q.embedding);
          if (score >= threshold) scored.push({ r: row.r, score });
        }
        const byRow = this.#db.prepare(`SELECT ${COLUMNS} FROM memories m WHERE m.rowid = ?`);
        // Ties go to the newer entry (rowids grow with inserts; created_at decides among the few kept).
        const best = scored.sort((a, b) => b.score - a.score || b.r - a.r).slice(0, q.limit);
        const hits = best.map(({ r, score }) => ({ entry: entryOfRow(byRow.get(r) as unknown as MemoryRow), score }));
        return hits.sort((a, b) => b.score - a.score || b.entry.createdAt - a.entry.createdAt);
      }
      default: {
        const never: never = q;
        throw new Error(`unknown memory query ${JSON.stringify(never)}`);
      }
    }
  }

  markRecalled(agent: string, ids: readonly string[]): Promise<void> {
    return settled(() => this.#markRecalled(agent, ids));
  }

  #markRecalled(agent: string, ids: readonly string[]): void {
    const update = this.#db.prepare('UPDATE memories SET recalls = recalls + 1 WHERE agent = ? AND id = ?');
    for (const id of ids) update.run(agent, id);
  }

  size(agent: string): Promise<number> {
    return settled(() => this.#size(agent));
  }

  #size(agent: string): number {
    const r = this.#db.prepare('SELECT COALESCE(SUM(bytes), 0) AS n FROM memories WHERE agent = ?').get(agent) as { n: number };
    return Number(r.n);
  }

  count(agent: string): Promise<number> {
    return settled(() => this.#count(agent));
  }

  #count(agent: string): number {
    const r = this.#db.prepare('SELECT COUNT(*) AS n FROM memories WHERE agent = ?').get(agent) as { n: number };
    return Number(r.n);
  }

  evict(agent: string, maxBytes: number): Promise<number> {
    return settled(() => this.#evict(agent, maxBytes));
  }

  #evict(agent: string, maxBytes: number): number {
    const total = this.#size(agent);
    if (total <= maxBytes) return 0;
    const order = this.#db.prepare('SELECT id, bytes FROM memories WHERE agent = ? ORDER BY retired_at IS NULL, recalls ASC, created_at ASC, rowid ASC').all(agent) as unknown as Array<{ id: string; bytes: number }>;
    const ids = toEvict(order, total, maxBytes);
    const del = this.#db.prepare('DELETE FROM memories WHERE agent = ? AND id = ?');
    this.#transaction(() => {
      for (const id of ids) del.run(agent, id);
    });
    return ids.length;
  }

  forget(agent: string, id: string): Promise<boolean> {
    return settled(() => this.#forget(agent, id));
  }

  #forget(agent: string, id: string): boolean {
    return Number(this.#db.prepare('DELETE FROM memories WHERE agent = ? AND id = ?').run(agent, id).changes) > 0;
  }

  forgetAll(agent: string): Promise<number> {
    return settled(() => this.#forgetAll(agent));
  }

  #forgetAll(agent: string): number {
    return Number(this.#db.prepare('DELETE FROM memories WHERE agent = ?').run(agent).changes);
  }

  forgetPerson(agent: string, person: string): Promise<number> {
    return settled(() => Number(this.#db.prepare('DELETE FROM memories WHERE agent = ? AND instr(people, ?) > 0').run(agent, personNeedle(person)).changes));
  }

  /** Runs `fn` in a transaction; a throw rolls it back and is thrown on, unless it is an `expected` one. */
  #transaction(fn: () => void, expected?: new () => Error): void {
    this.#db.exec('BEGIN');
    try {
      fn();
      this.#db.exec('COMMIT');
    } catch (err) {
      this.#db.exec('ROLLBACK');
      if (!expected || !(err instanceof expected)) throw err;
    }
  }

  close(): Promise<void> {
    return settled(() => this.#close());
  }

  #close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}

/** A distillation found its sources or facts retired already: rolled back, nothing changed. */
class AlreadyDistilled extends Error {
  override readonly name = 'AlreadyDistilled';
}

/** node:sqlite is synchronous; the interface is not (PostgreSQL): a throw becomes a rejection. */
function settled<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
}

