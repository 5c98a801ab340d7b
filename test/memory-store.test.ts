// One suite, two stores: the embedded SQLite file and PostgreSQL (a private database created and dropped per
// run) must behave the same for everything the daemon relies on.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { entrySize, type MemoryStore, type NewMemory } from '../memory/memory-store.ts';
import { openMemoryStore } from '../memory/open-memory-store.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres-db.ts';

const T0 = Date.UTC(2026, 0, 1);
let seq = 0;
function mem(text: string, over: Partial<NewMemory> = {}): NewMemory {
  seq++;
  return { key: `k${seq}`, kind: 'conversation', text, createdAt: T0 + seq * 1000, ...over };
}

const backends: Array<{ name: string; open: () => Promise<{ store: MemoryStore; done: () => Promise<void> }> }> = [
  {
    name: 'sqlite',
    open: async () => {
      const store = await openMemoryStore(join(mkdtempSync(join(tmpdir(), 'warren-memory-')), 'data', 'memory.sqlite'));
      return { store, done: () => store.close() };
    },
  },
  {
    name: 'postgres',
    open: async () => {
      const db: TestDatabase = await createTestDatabase();
      const store = await openMemoryStore(db.url);
      return {
        store,
        done: async () => {
          await store.close();
          await db.drop();
        },
      };
    },
  },
];

describe.each(backends)('memory store: $name', ({ open }) => {
  let store: MemoryStore;
  let done: () => Promise<void>;
  let agent: string;
  beforeAll(async () => {
    ({ store, done } = await open());
  });
  afterAll(async () => done());
  beforeEach(() => {
    agent = `agent-${++seq}`;
  });

  it('writes each key once per agent, keeps the fields, and keeps agents apart', async () => {
    const e = mem('the build is green', { who: 'alice', postId: 'p1', community: 'm/ops', kind: 'decision' });
    expect(await store.write(agent, [e])).toBe(1);
    expect(await store.write(agent, [e, { ...e, text: 'a retry with other words' }])).toBe(0);
    expect(await store.write(`${agent}-other`, [e])).toBe(1);
    expect(await store.count(agent)).toBe(1);
    const [hit] = await store.search(agent, { strategy: 'recent', limit: 5 });
    expect(hit!.entry).toMatchObject({ agent, key: e.key, kind: 'decision', text: 'the build is green', who: 'alice', postId: 'p1', community: 'm/ops', createdAt: e.createdAt, recalls: 0, bytes: entrySize(e) });
    expect(hit!.entry.id).toEqual(expect.any(String));
  });

  it('recent: newest first, up to the limit', async () => {
    await store.write(agent, [mem('first'), mem('second'), mem('third')]);
    const hits = await store.search(agent, { strategy: 'recent', limit: 2 });
    expect(hits.map((h) => h.entry.text)).toEqual(['third', 'second']);
  });

  it('keyword: ranks by the words of the query (stemmed, common words ignored), normalised to the best hit', async () => {
    await store.write(agent, [
      mem('remember: the deploy codeword is PELICAN-42'),
      mem('lunch is at noon on fridays'),
      mem('the deployment of the staging cluster failed twice, the deploy script is flaky'),
    ]);
    const hits = await store.search(agent, { strategy: 'keyword', text: 'What is the deploy codeword?', limit: 10 });
    expect(hits[0]!.entry.text).toContain('PELICAN-42');
    expect(hits[0]!.score).toBe(1);
    expect(hits.map((h) => h.entry.text)).not.toContain('lunch is at noon on fridays');
    expect(hits.length).toBe(2);
    expect(hits[1]!.score).toBeLessThan(1);
    // "deploys" finds "deploy" (both stores stem English words).
    expect((await store.search(agent, { strategy: 'keyword', text: 'deploys', limit: 10 })).length).toBe(2);
  });

  it('keyword: the threshold cuts weaker hits; a query of common words or syntax finds nothing and does not fail', async () => {
    await store.write(agent, [mem('pelican codeword rotated'), mem('pelican sighted at the harbour')]);
    const all = await store.search(agent, { strategy: 'keyword', text: 'pelican codeword', limit: 10 });
    expect(all.length).toBe(2);
    const strict = await store.search(agent, { strategy: 'keyword', text: 'pelican codeword', limit: 10, threshold: 0.99 });
    expect(strict.map((h) => h.entry.text)).toEqual(['pelican codeword rotated']);
    expect(await store.search(agent, { strategy: 'keyword', text: 'what is the', limit: 10 })).toEqual([]);
    expect(await store.search(agent, { strategy: 'keyword', text: `" OR NEAR( *) & | ! ' -- ; drop`, limit: 10 })).toEqual([]);
  });

  it('embedding: cosine order, threshold applied, vectors of another length ignored', async () => {
    await store.write(agent, [
      mem('north', { embedding: [1, 0, 0] }),
      mem('north-east', { embedding: [1, 1, 0] }),
      mem('south', { embedding: [-1, 0, 0] }),
      mem('other model', { embedding: [1, 0] }),
      mem('no vector'),
    ]);
    const hits = await store.search(agent, { strategy: 'embedding', embedding: [2, 0, 0], limit: 10, threshold: 0.5 });
    expect(hits.map((h) => h.entry.text)).toEqual(['north', 'north-east']);
    expect(hits[0]!.score).toBeCloseTo(1, 5);
    expect(hits[1]!.score).toBeCloseTo(Math.SQRT1_2, 5);
    const all = await store.search(agent, { strategy: 'embedding', embedding: [2, 0, 0], limit: 2 });
    expect(all.map((h) => h.entry.text)).toEqual(['north', 'north-east']);
  });

  it('size is the sum of the entries; eviction takes the least recalled, then the oldest, down to the limit', async () => {
    const entries = [mem('a'.repeat(400)), mem('b'.repeat(400)), mem('c'.repeat(400)), mem('d'.repeat(400))];
    await store.write(agent, entries);
    const total = entries.reduce((s, e) => s + entrySize(e), 0);
    expect(await store.size(agent)).toBe(total);
    const recent = await store.search(agent, { strategy: 'recent', limit: 10 });
    const oldest = recent.at(-1)!.entry;
    await store.markRecalled(agent, [oldest.id]);
    expect(await store.evict(agent, total)).toBe(0);
    // Room for two entries: the two oldest never recalled go (b, c); the recalled oldest (a) stays.
    expect(await store.evict(agent, entrySize(entries[0]!) * 2)).toBe(2);
    const left = await store.search(agent, { strategy: 'recent', limit: 10 });
    expect(left.map((h) => h.entry.text[0])).toEqual(['d', 'a']);
    expect(left.find((h) => h.entry.text[0] === 'a')!.entry.recalls).toBe(1);
    expect(await store.size(agent)).toBeLessThanOrEqual(entrySize(entries[0]!) * 2);
  });

  it('forgets one entry, or everything an agent remembers (and nothing of another agent)', async () => {
    await store.write(agent, [mem('one'), mem('two'), mem('three')]);
    await store.write(`${agent}-other`, [mem('kept')]);
    const [newest] = await store.search(agent, { strategy: 'recent', limit: 1 });
    expect(await store.forget(agent, newest!.entry.id)).toBe(true);
    expect(await store.forget(agent, newest!.entry.id)).toBe(false);
    expect(await store.forget(`${agent}-other`, (await store.search(agent, { strategy: 'recent', limit: 1 }))[0]!.entry.id)).toBe(false);
    expect(await store.count(agent)).toBe(2);
    expect(await store.search(agent, { strategy: 'keyword', text: 'three', limit: 5 })).toEqual([]);
    expect(await store.forgetAll(agent)).toBe(2);
    expect(await store.count(agent)).toBe(0);
    expect(await store.size(agent)).toBe(0);
    expect(await store.search(agent, { strategy: 'keyword', text: 'one two', limit: 5 })).toEqual([]);
    expect(await store.count(`${agent}-other`)).toBe(1);
  });
});

describe('memory store: postgres connections the server drops', () => {
  it('survives the server ending its idle connections (the pool reconnects; the process does not crash)', async () => {
    const db = await createTestDatabase();
    const store = await openMemoryStore(db.url);
    try {
      await store.write('agent', [mem('before the restart')]);
      const dbName = new URL(db.url).pathname.slice(1);
      const { default: pg } = await import('pg');
      const admin = new pg.Client({ connectionString: db.url.replace(`/${dbName}`, '/postgres') });
      await admin.connect();
      try {
        const ended = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [dbName]);
        expect(ended.rowCount).toBeGreaterThan(0);
      } finally {
        await admin.end();
      }
      await new Promise((r) => setTimeout(r, 200));
      await store.write('agent', [mem('after the restart')]);
      expect(await store.count('agent')).toBe(2);
    } finally {
      await store.close();
      await db.drop();
    }
  });
});
