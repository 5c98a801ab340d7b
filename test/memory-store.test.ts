// One suite, two stores: the embedded SQLite file and PostgreSQL (a private database created and dropped per
// run) must behave the same for everything the daemon relies on.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { entrySize, type MemoryStore, type NewMemory } from '../memory/memory-store.ts';
import { openMemoryStore } from '../memory/open-memory-store.ts';
import { PostgresMemoryStore } from '../memory/postgres-memory-store.ts';
import { ADMIN_URL, createTestDatabase, type TestDatabase } from './support/postgres-db.ts';

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
  // Twice: the path this server gives (pgvector where it is installed) and the array path forced.
  ...(['auto', 'off'] as const).map((vector) => ({
    name: `postgres (vector: ${vector})`,
    open: async () => {
      const db: TestDatabase = await createTestDatabase();
      const store = await PostgresMemoryStore.open(db.url, { vector });
      return {
        store,
        done: async () => {
          await store.close();
          await db.drop();
        },
      };
    },
  })),
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

  it('visibleTo: general entries for everyone, a person\'s entries only to that person, by every strategy', async () => {
    const v = [1, 0, 0];
    await store.write(agent, [
      mem('dana said the codeword is pelican', { people: ['dana'], embedding: v }),
      mem('a codeword thread with dana and erin', { people: ['erin', 'dana'], embedding: v }),
      mem('general codeword rules', { embedding: v }),
      // A name inside another name is not that person (`|ana|` is not in `|dana|`).
      mem('ana said the codeword is heron', { people: ['ana'], embedding: v }),
    ]);
    const texts = async (visibleTo?: { person?: string }): Promise<string[][]> => {
      const by = { ...(visibleTo ? { visibleTo } : {}), limit: 10 };
      const runs = await Promise.all([
        store.search(agent, { strategy: 'recent', ...by }),
        store.search(agent, { strategy: 'keyword', text: 'codeword', ...by }),
        store.search(agent, { strategy: 'embedding', embedding: v, ...by }),
      ]);
      return runs.map((hits) => hits.map((h) => h.entry.text).sort());
    };
    const all = ['a codeword thread with dana and erin', 'ana said the codeword is heron', 'dana said the codeword is pelican', 'general codeword rules'];
    expect(await texts()).toEqual([all, all, all]);
    const dana = ['a codeword thread with dana and erin', 'dana said the codeword is pelican', 'general codeword rules'];
    expect(await texts({ person: 'dana' })).toEqual([dana, dana, dana]);
    const erin = ['a codeword thread with dana and erin', 'general codeword rules'];
    expect(await texts({ person: 'erin' })).toEqual([erin, erin, erin]);
    expect(await texts({})).toEqual([['general codeword rules'], ['general codeword rules'], ['general codeword rules']]);
    const [shared] = await store.search(agent, { strategy: 'keyword', text: 'thread', limit: 1 });
    expect(shared!.entry.people).toEqual(['dana', 'erin']);
  });

  it("forgetPerson erases every entry a person took part in, and nothing of anyone else's or another agent's", async () => {
    await store.write(agent, [mem('dana alone', { people: ['dana'] }), mem('dana and erin', { people: ['dana', 'erin'] }), mem('erin alone', { people: ['erin'] }), mem('general')]);
    await store.write(`${agent}-other`, [mem('dana elsewhere', { people: ['dana'] })]);
    expect(await store.forgetPerson(agent, 'dana')).toBe(2);
    expect((await store.search(agent, { strategy: 'recent', limit: 10 })).map((h) => h.entry.text).sort()).toEqual(['erin alone', 'general']);
    expect(await store.forgetPerson(agent, 'dana')).toBe(0);
    expect(await store.count(`${agent}-other`)).toBe(1);
  });
});

describe('memory store: entries written before they knew their people', () => {
  // The columns of the table before `people` (warren ≤ 0.1 without memory.scope).
  const OLD_COLUMNS = 'id TEXT NOT NULL UNIQUE, agent TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL, text TEXT NOT NULL, who TEXT, post_id TEXT, community TEXT, created_at BIGINT NOT NULL, recalls INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL';
  const OLD_ROWS = "('m1', 'keeper', 'k1', 'conversation', 'dana told me the codeword', 'dana', NULL, NULL, 1, 0, 10), ('m2', 'keeper', 'k2', 'project', 'I took part in a thread', NULL, NULL, NULL, 2, 0, 10)";

  async function visibleTexts(store: MemoryStore, person: string): Promise<string[]> {
    return (await store.search('keeper', { strategy: 'recent', limit: 10, visibleTo: { person } })).map((h) => h.entry.text).sort();
  }

  it('SQLite: the column is added; an entry with `who` belongs to that person, one without is general', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'warren-memory-')), 'memory.sqlite');
    const { DatabaseSync } = await import('node:sqlite');
    const old = new DatabaseSync(path);
    old.exec(`CREATE TABLE memories (rowid INTEGER PRIMARY KEY, ${OLD_COLUMNS}, embedding BLOB, UNIQUE (agent, key)); INSERT INTO memories (id, agent, key, kind, text, who, post_id, community, created_at, recalls, bytes) VALUES ${OLD_ROWS}`);
    old.close();
    const store = await openMemoryStore(path);
    try {
      expect(await visibleTexts(store, 'dana')).toEqual(['I took part in a thread', 'dana told me the codeword']);
      expect(await visibleTexts(store, 'erin')).toEqual(['I took part in a thread']);
    } finally {
      await store.close();
    }
  });

  it('PostgreSQL: the same, once, however many daemons open it', async () => {
    const db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(`CREATE TABLE warren_memories (${OLD_COLUMNS.replace('NOT NULL UNIQUE', 'PRIMARY KEY')}, embedding REAL[], tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', text)) STORED, UNIQUE (agent, key)); INSERT INTO warren_memories (id, agent, key, kind, text, who, post_id, community, created_at, recalls, bytes) VALUES ${OLD_ROWS}`);
    } finally {
      await client.end();
    }
    const [one, two] = await Promise.all([PostgresMemoryStore.open(db.url, { vector: 'off' }), PostgresMemoryStore.open(db.url, { vector: 'off' })]);
    try {
      expect(await visibleTexts(one, 'dana')).toEqual(['I took part in a thread', 'dana told me the codeword']);
      expect(await visibleTexts(two, 'erin')).toEqual(['I took part in a thread']);
    } finally {
      await Promise.all([one.close(), two.close()]);
      await db.drop();
    }
  });
});

describe('memory store: postgres connections the server drops', () => {
  it('survives the server ending its idle connections (the pool reconnects; the process does not crash)', async () => {
    const db = await createTestDatabase();
    const store = await openMemoryStore(db.url);
    try {
      await store.write('agent', [mem('before the restart')]);
      const dbName = new URL(db.url).pathname.slice(1);
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

describe('memory store: postgres embedding path', () => {
  async function serverHasPgvector(): Promise<boolean> {
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    try {
      return ((await admin.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`)).rowCount ?? 0) > 0;
    } finally {
      await admin.end();
    }
  }

  async function embeddingColumn(url: string): Promise<string | undefined> {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const r = await c.query<{ udt_name: string }>(`SELECT udt_name FROM information_schema.columns WHERE table_name = 'warren_memories' AND column_name = 'embedding_vec'`);
      return r.rows[0]?.udt_name;
    } finally {
      await c.end();
    }
  }

  it('takes up pgvector when the server has it (a vector column), and stays on arrays when it does not or is told to', async () => {
    const available = await serverHasPgvector();
    const db = await createTestDatabase();
    try {
      const off = await PostgresMemoryStore.open(db.url, { vector: 'off' });
      expect(off.embeddingPath).toBe('arrays');
      await off.close();
      expect(await embeddingColumn(db.url)).toBeUndefined();
      const auto = await PostgresMemoryStore.open(db.url);
      await auto.close();
      if (available) {
        expect(auto.embeddingPath).toBe('pgvector');
        expect(await embeddingColumn(db.url)).toBe('vector');
      } else {
        expect(auto.embeddingPath).toBe('arrays');
        expect(await embeddingColumn(db.url)).toBeUndefined();
      }
    } finally {
      await db.drop();
    }
  });

  it('falls back to arrays when the role may not create the extension (pgvector is not a trusted extension)', async () => {
    const role = `warren_role_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN NOSUPERUSER`);
      await admin.query(`CREATE DATABASE ${role} OWNER ${role}`);
      const url = new URL(ADMIN_URL);
      url.username = role;
      url.pathname = `/${role}`;
      const store = await PostgresMemoryStore.open(url.toString());
      try {
        expect(store.embeddingPath).toBe('arrays');
        await store.write('agent', [mem('north', { embedding: [1, 0, 0] }), mem('south', { embedding: [-1, 0, 0] })]);
        const hits = await store.search('agent', { strategy: 'embedding', embedding: [1, 0.1, 0], limit: 5, threshold: 0 });
        expect(hits.map((h) => h.entry.text)).toEqual(['north']);
      } finally {
        await store.close();
      }
      expect(await embeddingColumn(url.toString())).toBeUndefined();
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${role} WITH (FORCE)`);
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });

  it('a database written on the array path is searched the same once pgvector is taken up (vectors filled from the arrays)', async () => {
    const db = await createTestDatabase();
    try {
      const before = await PostgresMemoryStore.open(db.url, { vector: 'off' });
      await before.write('agent', [mem('north', { embedding: [1, 0, 0] }), mem('east', { embedding: [0, 1, 0] }), mem('flat', { embedding: [] }), mem('none')]);
      const query = { strategy: 'embedding', embedding: [3, 0.5, 0], limit: 5, threshold: 0.1 } as const;
      const old = await before.search('agent', query);
      await before.close();
      const after = await PostgresMemoryStore.open(db.url);
      try {
        expect(after.embeddingPath).toBe((await serverHasPgvector()) ? 'pgvector' : 'arrays');
        const hits = await after.search('agent', query);
        expect(hits.map((h) => h.entry.text)).toEqual(['north', 'east']);
        expect(hits.map((h) => h.entry.text)).toEqual(old.map((h) => h.entry.text));
        hits.forEach((h, i) => expect(h.score).toBeCloseTo(old[i]!.score, 5));
        // A query vector pgvector would refuse finds nothing, as on the array path, rather than failing.
        expect(await after.search('agent', { ...query, embedding: [] })).toEqual([]);
        // Written after the change, by a writer on either path: found by both.
        await after.write('agent', [mem('north too', { embedding: [2, 0.1, 0] })]);
        expect((await after.search('agent', { ...query, limit: 1 }))[0]!.entry.text).toBe('north too');
      } finally {
        await after.close();
      }
    } finally {
      await db.drop();
    }
  });
});
