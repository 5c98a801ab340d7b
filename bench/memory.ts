// Agent memory: recall latency for one agent at 10,000 and 100,000 entries, on each store (SQLite in a temp
// file, PostgreSQL in a private database on 127.0.0.1:5432, dropped after), by keyword and by embedding. The
// entries are generated (seeded): short sentences from a fixed vocabulary, with 64-dimension vectors from the
// same hashed embedding the tests' fake endpoint serves. A recall is one store.search of 10 items, as the
// pipeline makes it before the model runs. PostgreSQL embedding recall is timed on the path the server gives
// (pgvector where installed) and, on the same rows, on the array path.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MemoryQuery, MemoryStore, NewMemory } from '../memory/memory-store.ts';
import { PostgresMemoryStore } from '../memory/postgres-memory-store.ts';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';
import { hashedEmbedding, FAKE_EMBEDDING_DIMS } from '../test/fakes/openai-server.ts';
import { createTestDatabase } from '../test/support/postgres-db.ts';
import { Prng } from '../test/support/prng.ts';
import { printTable, round, summarize, writeResults, type Summary } from './support/stats.ts';

const SIZES = [10_000, 100_000];
const QUERIES = 30;
const AGENT = 'keeper';
const WORDS = ('deploy release codeword standup thursday friday lunch budget invoice review pull request merge branch outage ' +
  'database migration schema index latency cache redis postgres sqlite queue worker scheduler lease token secret rotate ' +
  'alice bob carol dana erin frank grace heidi ivan judy mallory oscar peggy trent victor walter community thread reply ' +
  'mention like follow post comment answer question decision promise correction feedback project roadmap milestone')
  .split(' ');

function sentence(rng: Prng, n: number): string {
  return Array.from({ length: n }, () => WORDS[rng.int(WORDS.length)]).join(' ');
}

function entries(rng: Prng, from: number, to: number): NewMemory[] {
  const out: NewMemory[] = [];
  for (let i = from; i < to; i++) {
    const text = `${WORDS[rng.int(WORDS.length)]} mentioned me: "${sentence(rng, 12)}". I answered: "${sentence(rng, 10)}"`;
    out.push({ key: `bench:${i}`, kind: 'conversation', text, createdAt: Date.UTC(2026, 0, 1) + i * 1000, embedding: hashedEmbedding(text) });
  }
  return out;
}

async function fill(store: MemoryStore, rng: Prng, from: number, to: number): Promise<void> {
  for (let at = from; at < to; at += 5_000) await store.write(AGENT, entries(rng, at, Math.min(to, at + 5_000)));
}

async function timeRecalls(store: MemoryStore, rng: Prng, query: (q: string) => MemoryQuery): Promise<Summary> {
  const ms: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    const q = query(sentence(rng, 6));
    const t = performance.now();
    await store.search(AGENT, q);
    ms.push(performance.now() - t);
  }
  const s = summarize(ms);
  return { ...s, p50: round(s.p50, 2), p95: round(s.p95, 2), p99: round(s.p99, 2), max: round(s.max, 2), mean: round(s.mean, 2) };
}

const keyword = (text: string): MemoryQuery => ({ strategy: 'keyword', text, limit: 10, threshold: 0.3 });
const embedding = (text: string): MemoryQuery => ({ strategy: 'embedding', embedding: hashedEmbedding(text), limit: 10, threshold: 0.3 });

interface SizeFigures {
  keyword: Summary;
  embedding: Summary;
  /** PostgreSQL only: embedding recall on the array path over the same rows. */
  embedding_arrays?: Summary;
  write_s: number;
}
type Figures = Record<string, Record<string, SizeFigures>>;

/** `arrays`: a second store on the same rows, for embedding recall on the array path. */
async function measure(name: string, store: MemoryStore, figures: Figures, arrays?: MemoryStore): Promise<void> {
  const rng = new Prng(42);
  figures[name] = {};
  let have = 0;
  for (const size of SIZES) {
    const t = performance.now();
    await fill(store, rng, have, size);
    const writeS = round((performance.now() - t) / 1000, 1);
    have = size;
    figures[name][String(size)] = {
      keyword: await timeRecalls(store, rng, keyword),
      embedding: await timeRecalls(store, rng, embedding),
      ...(arrays ? { embedding_arrays: await timeRecalls(arrays, rng, embedding) } : {}),
      write_s: writeS,
    };
  }
}

export async function memory(): Promise<Record<string, unknown>> {
  const figures: Figures = {};
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-memory-'));
  const sqlite = new SqliteMemoryStore(join(dir, 'memory.sqlite'));
  try {
    await measure('sqlite', sqlite, figures);
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const db = await createTestDatabase();
  try {
    const pg = await PostgresMemoryStore.open(db.url);
    const arrays = pg.embeddingPath === 'pgvector' ? await PostgresMemoryStore.open(db.url, { vector: 'off' }) : undefined;
    try {
      await measure(`postgres (${pg.embeddingPath})`, pg, figures, arrays);
    } finally {
      await arrays?.close();
      await pg.close();
    }
  } finally {
    await db.drop();
  }
  return { recall_ms: figures, queries: QUERIES, limit: 10, embedding_dims: FAKE_EMBEDDING_DIMS };
}

if (import.meta.main) {
  const out = await memory();
  const f = out.recall_ms as Figures;
  const rows: Array<[string, string]> = [];
  for (const [store, bySize] of Object.entries(f)) {
    for (const [size, r] of Object.entries(bySize)) {
      rows.push([`${store} ${Number(size).toLocaleString('en')} keyword p50 / p99 (ms)`, `${r.keyword.p50} / ${r.keyword.p99}`]);
      rows.push([`${store} ${Number(size).toLocaleString('en')} embedding p50 / p99 (ms)`, `${r.embedding.p50} / ${r.embedding.p99}`]);
      if (r.embedding_arrays) rows.push([`${store} ${Number(size).toLocaleString('en')} embedding on arrays p50 / p99 (ms)`, `${r.embedding_arrays.p50} / ${r.embedding_arrays.p99}`]);
    }
  }
  printTable('memory: recall latency, one agent, 10 items', rows);
  console.log(`\nwrote ${writeResults('memory', out)}`);
}
