// The shared memory store, for several daemons on several machines: PostgreSQL. Keyword search ranks a stored
// `tsvector` (english) with ts_rank; embeddings are `real[]` and the cosine is computed by the server, so
// vectors do not cross the network. When the server has pgvector (and we may CREATE EXTENSION), a generated
// `vector` column mirrors the array and embedding_search ranks with its `<=>`; otherwise the cosine is summed
// over the arrays.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { entrySize, normaliseScores, peopleColumn, personNeedle, toEvict, type Distillation, type MemoryEntry, type MemoryQuery, type MemoryStore, type NewMemory, type Recalled } from './memory-store.ts';
import { queryWords } from './query-words.ts';
import { entryOfRow, type MemoryRow } from './memory-row.ts';

// Schema changes from daemons starting at once are serialised by an advisory lock (any constant of ours).
const SCHEMA_LOCK = 0x77617272;
const SCHEMA = `
CREATE TABLE IF NOT EXISTS warren_memories (
  id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  key TEXT NOT NULL,
  kind TEXT NOT NULL,
  text TEXT NOT NULL,
  who TEXT,
  post_id TEXT,
  community TEXT,
  people TEXT,
  created_at BIGINT NOT NULL,
  recalls INTEGER NOT NULL DEFAULT 0,
  bytes INTEGER NOT NULL,
  embedding REAL[],
  tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
  UNIQUE (agent, key)
);
CREATE INDEX IF NOT EXISTS warren_memories_agent_created ON warren_memories (agent, created_at);
CREATE INDEX IF NOT EXISTS warren_memories_tsv ON warren_memories USING GIN (tsv);
-- Distillation (memory/distiller.ts) retires facts and distilled exchanges; tables from before hold current rows only.
ALTER TABLE warren_memories ADD COLUMN IF NOT EXISTS retired_at BIGINT;
`;

// Generated from the array, so writers that know nothing of pgvector (older daemons, the array path) fill it too,
// and adding it to an existing table fills it from the arrays already stored. Unconstrained dimension (one per
// model); the arrays pgvector refuses (empty, over 16,000, NaN, infinities) leave it NULL, as the array path
// would score them NULL.
const VECTOR_COLUMN = `ALTER TABLE warren_memories ADD COLUMN embedding_vec vector GENERATED ALWAYS AS (
  CASE WHEN cardinality(embedding) BETWEEN 1 AND 16000
        AND NOT ('NaN'::real = ANY(embedding) OR 'Infinity'::real = ANY(embedding) OR '-Infinity'::real = ANY(embedding))
  THEN embedding::vector END) STORED`;

const WRITE_BATCH = 500;

/** How embedding_search computes the cosine: pgvector's `<=>`, or sums over `real[]`. */
export type EmbeddingPath = 'pgvector' | 'arrays';

export interface PostgresMemoryOptions {
  /** 'off' keeps the array path even where pgvector is there (the tests compare both paths on one server). */
  vector?: 'auto' | 'off';
  logger?: Logger;
}

interface Row extends MemoryRow {
  score?: number;
}

const COLUMNS = 'm.id, m.agent, m.key, m.kind, m.text, m.who, m.post_id, m.community, m.people, m.created_at, m.recalls, m.bytes';

/** The SQL condition for a query (current entries only, its `visibleTo` (memory/audience.ts), its `facts`), its parameters numbered from `next`. */
function visible(q: MemoryQuery, next: number): { sql: string; params: Array<string | null> } {
  let sql = ' AND m.retired_at IS NULL';
  const params: Array<string | null> = [];
  if (q.visibleTo?.person !== undefined) {
    params.push(personNeedle(q.visibleTo.person));
    sql += ` AND (m.people IS NULL OR strpos(m.people, $${next + params.length - 1}) > 0)`;
  } else if (q.visibleTo) sql += ' AND m.people IS NULL';
  if (q.facts) sql += " AND m.kind = 'fact'";
  if (q.facts?.people) {
    params.push(peopleColumn(q.facts.people));
    sql += ` AND m.people IS NOT DISTINCT FROM $${next + params.length - 1}::text`;
  }
  return { sql, params };
}

/** Tables from before entries knew their people gain the column; an entry's `who` is its one person. */
const PEOPLE_COLUMN = `DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'warren_memories' AND column_name = 'people') THEN
    ALTER TABLE warren_memories ADD COLUMN people TEXT;
    UPDATE warren_memories SET people = '|' || who || '|' WHERE who IS NOT NULL AND strpos(who, '|') = 0;
  END IF;
END $$`;

export class PostgresMemoryStore implements MemoryStore {
  readonly #pool: pg.Pool;
  readonly embeddingPath: EmbeddingPath;

  private constructor(pool: pg.Pool, embeddingPath: EmbeddingPath) {
    this.#pool = pool;
    this.embeddingPath = embeddingPath;
  }

  /** Connects, creates the table and its indexes when missing, and takes up pgvector when the server has it. */
  static async open(connectionString: string, options: PostgresMemoryOptions = {}): Promise<PostgresMemoryStore> {
    const pool = new pg.Pool({ connectionString, max: 4 });
    // An idle connection the server ends (restart, failover, pg_terminate_backend) is an 'error' event on the pool;
    // unheard, it would crash the daemon. The pool drops that connection and the next query opens a new one.
    pool.on('error', () => undefined);
    let path: EmbeddingPath;
    try {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
        await client.query(SCHEMA);
        await client.query(PEOPLE_COLUMN);
        path = options.vector === 'off' ? 'arrays' : await takeUpPgvector(client);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    } catch (err) {
      await pool.end();
      throw err;
    }
    options.logger?.info({ embeddings: path }, path === 'pgvector' ? 'memory store: embedding_search by pgvector' : 'memory store: embedding_search over real[] arrays (no pgvector)');
    return new PostgresMemoryStore(pool, path);
  }

  async write(agent: string, entries: readonly NewMemory[]): Promise<number> {
    return this.#insert(this.#pool, agent, entries);
  }

  async #insert(on: pg.Pool | pg.PoolClient, agent: string, entries: readonly NewMemory[]): Promise<number> {
    let written = 0;
    // One statement per batch (a round trip per entry made large imports slow); 12 parameters a row.
    for (let at = 0; at < entries.length; at += WRITE_BATCH) {
      const batch = entries.slice(at, at + WRITE_BATCH);
      const params: unknown[] = [];
      const rows = batch.map((e) => {
        const base = params.length;
        params.push(randomUUID(), agent, e.key, e.kind, e.text, e.who ?? null, e.postId ?? null, e.community ?? null, peopleColumn(e.people), e.createdAt, entrySize(e), e.embedding ? [...e.embedding] : null);
        return `(${Array.from({ length: 12 }, (_, i) => `$${base + i + 1}`).join(', ')})`;
      });
      const r = await on.query(
        `INSERT INTO warren_memories (id, agent, key, kind, text, who, post_id, community, people, created_at, bytes, embedding)
         VALUES ${rows.join(', ')} ON CONFLICT (agent, key) DO NOTHING`,
        params,
      );
      written += r.rowCount ?? 0;
    }
    return written;
  }

  async search(agent: string, q: MemoryQuery): Promise<Recalled[]> {
    switch (q.strategy) {
      case 'recent': {
        const only = visible(q, 3);
        const r = await this.#pool.query<Row>(`SELECT ${COLUMNS} FROM warren_memories m WHERE m.agent = $1${only.sql} ORDER BY m.created_at DESC, m.id DESC LIMIT $2`, [agent, q.limit, ...only.params]);
        return r.rows.map((row) => ({ entry: entryOfRow(row), score: 1 }));
      }
      case 'keyword': {
        const words = queryWords(q.text);
        if (words.length === 0) return [];
        // queryWords leaves letters and digits only: nothing in it is tsquery syntax.
        const only = visible(q, 4);
        const r = await this.#pool.query<Row>(
          `SELECT ${COLUMNS}, ts_rank(m.tsv, q) AS score FROM warren_memories m, to_tsquery('english', $2) q
           WHERE m.agent = $1 AND m.tsv @@ q${only.sql} ORDER BY score DESC, m.created_at DESC LIMIT $3`,
          [agent, words.join(' | '), q.limit, ...only.params],
        );
        return normaliseScores(r.rows.map((row) => ({ entry: entryOfRow(row), score: Number(row.score) })), q.threshold);
      }
      case 'embedding': {
        if (this.embeddingPath === 'pgvector') return this.#searchVectors(agent, q);
        const only = visible(q, 5);
        const r = await this.#pool.query<Row>(
          `SELECT ${COLUMNS}, s.score FROM warren_memories m,
             LATERAL (SELECT SUM(a::float8 * b::float8) / NULLIF(SQRT(SUM(a::float8 * a::float8)) * SQRT(SUM(b::float8 * b::float8)), 0) AS score
                      FROM unnest(m.embedding, $2::real[]) AS t(a, b)) s
           WHERE m.agent = $1 AND m.embedding IS NOT NULL AND cardinality(m.embedding) = cardinality($2::real[]) AND s.score >= $3${only.sql}
           ORDER BY s.score DESC, m.created_at DESC LIMIT $4`,
          [agent, [...q.embedding], q.threshold ?? -1, q.limit, ...only.params],
        );
        return r.rows.map((row) => ({ entry: entryOfRow(row), score: Number(row.score) }));
      }
      default: {
        const never: never = q;
        throw new Error(`unknown memory query ${JSON.stringify(never)}`);
      }
    }
  }

  /** An exact scan (no ANN index: same hits as the array path). The CASE keeps `<=>` off vectors of another
   * dimension (it would raise); a zero vector's NaN becomes NULL, as the array path's division by zero does. */
  async #searchVectors(agent: string, q: Extract<MemoryQuery, { strategy: 'embedding' }>): Promise<Recalled[]> {
    // A query pgvector refuses could match no stored vector either (the column is NULL for such arrays).
    if (!isVectorable(q.embedding)) return [];
    const only = visible(q, 6);
    const r = await this.#pool.query<Row>(
      `SELECT ${COLUMNS}, s.score FROM warren_memories m,
         LATERAL (SELECT NULLIF(CASE WHEN vector_dims(m.embedding_vec) = $5 THEN 1 - (m.embedding_vec <=> $2::real[]::vector) END, 'NaN') AS score) s
       WHERE m.agent = $1 AND m.embedding_vec IS NOT NULL AND s.score >= $3${only.sql}
       ORDER BY s.score DESC, m.created_at DESC LIMIT $4`,
      [agent, [...q.embedding], q.threshold ?? -1, q.limit, q.embedding.length, ...only.params],
    );
    return r.rows.map((row) => ({ entry: entryOfRow(row), score: Number(row.score) }));
  }

  async current(agent: string, keys: readonly string[]): Promise<MemoryEntry[]> {
    if (keys.length === 0) return [];
    const r = await this.#pool.query<Row>(`SELECT ${COLUMNS} FROM warren_memories m WHERE m.agent = $1 AND m.key = ANY($2::text[]) AND m.retired_at IS NULL`, [agent, [...keys]]);
    const byKey = new Map(r.rows.map((row) => [row.key, entryOfRow(row)]));
    return keys.flatMap((k) => byKey.get(k) ?? []);
  }

  async distil(agent: string, d: Distillation): Promise<boolean> {
    const client = await this.#pool.connect();
    try {
      await client.query('BEGIN');
      // Row locks: a daemon distilling the same exchange at once waits here, then finds the rows retired.
      const sources = await client.query('UPDATE warren_memories SET retired_at = $3 WHERE agent = $1 AND id = ANY($2::text[]) AND retired_at IS NULL', [agent, [...d.sources], d.at]);
      const facts = await client.query("UPDATE warren_memories SET retired_at = $3 WHERE agent = $1 AND id = ANY($2::text[]) AND kind = 'fact' AND retired_at IS NULL", [agent, [...d.retire], d.at]);
      if ((sources.rowCount ?? 0) !== new Set(d.sources).size || (facts.rowCount ?? 0) !== new Set(d.retire).size) {
        await client.query('ROLLBACK');
        return false;
      }
      await this.#insert(client, agent, d.add);
      await client.query('COMMIT');
      return true;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  async markRecalled(agent: string, ids: readonly string[]): Promise<void> {
    if (ids.length) await this.#pool.query('UPDATE warren_memories SET recalls = recalls + 1 WHERE agent = $1 AND id = ANY($2::text[])', [agent, [...ids]]);
  }

  async size(agent: string): Promise<number> {
    const r = await this.#pool.query<{ n: string }>('SELECT COALESCE(SUM(bytes), 0) AS n FROM warren_memories WHERE agent = $1', [agent]);
    return Number(r.rows[0]!.n);
  }

  async count(agent: string): Promise<number> {
    const r = await this.#pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM warren_memories WHERE agent = $1', [agent]);
    return Number(r.rows[0]!.n);
  }

  async evict(agent: string, maxBytes: number): Promise<number> {
    const total = await this.size(agent);
    if (total <= maxBytes) return 0;
    const order = await this.#pool.query<{ id: string; bytes: number }>('SELECT id, bytes FROM warren_memories WHERE agent = $1 ORDER BY retired_at IS NULL, recalls ASC, created_at ASC, id ASC', [agent]);
    const ids = toEvict(order.rows, total, maxBytes);
    const r = await this.#pool.query('DELETE FROM warren_memories WHERE agent = $1 AND id = ANY($2::text[])', [agent, ids]);
    return r.rowCount ?? 0;
  }

  async forget(agent: string, id: string): Promise<boolean> {
    const r = await this.#pool.query('DELETE FROM warren_memories WHERE agent = $1 AND id = $2', [agent, id]);
    return (r.rowCount ?? 0) > 0;
  }

  async forgetAll(agent: string): Promise<number> {
    const r = await this.#pool.query('DELETE FROM warren_memories WHERE agent = $1', [agent]);
    return r.rowCount ?? 0;
  }

  async forgetPerson(agent: string, person: string): Promise<number> {
    const r = await this.#pool.query('DELETE FROM warren_memories WHERE agent = $1 AND strpos(people, $2) > 0', [agent, personNeedle(person)]);
    return r.rowCount ?? 0;
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}

/** What pgvector takes as a `vector` (the same rule as VECTOR_COLUMN's CASE). */
function isVectorable(v: readonly number[]): boolean {
  return v.length >= 1 && v.length <= 16_000 && v.every(Number.isFinite);
}

/** Inside the schema transaction: creates the extension and the vector column when they are missing. A server
 * without pgvector, or a role that may not create it or alter the table, leaves the array path (a savepoint keeps
 * the failure from ending the transaction). */
async function takeUpPgvector(client: pg.PoolClient): Promise<EmbeddingPath> {
  await client.query('SAVEPOINT pgvector');
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS vector');
    const has = await client.query(
      `SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'warren_memories' AND column_name = 'embedding_vec'`,
    );
    if (has.rowCount === 0) await client.query(VECTOR_COLUMN);
    await client.query('RELEASE SAVEPOINT pgvector');
    return 'pgvector';
  } catch {
    await client.query('ROLLBACK TO SAVEPOINT pgvector');
    return 'arrays';
  }
}
