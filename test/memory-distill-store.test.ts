// Both stores apply a distillation at once or not at all (memory-store.ts distil): the exchange and the changed
// facts retired, the new facts added; retired entries are never returned, and are evicted first. A second
// distillation of the same exchange (a retried activation, another daemon) changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryStore, NewMemory } from '../memory/memory-store.ts';
import { PostgresMemoryStore } from '../memory/postgres-memory-store.ts';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres-db.ts';

let db: TestDatabase;
const opened: MemoryStore[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  await db?.drop();
});

const at = Date.UTC(2026, 10, 1);
const entry = (key: string, kind: NewMemory['kind'], text: string, people?: string[]): NewMemory => ({ key, kind, text, createdAt: at, ...(people ? { people } : {}) });

describe.each([
  { name: 'SQLite', open: (): Promise<MemoryStore> => Promise.resolve(new SqliteMemoryStore(':memory:')) },
  { name: 'PostgreSQL', open: (): Promise<MemoryStore> => PostgresMemoryStore.open(db.url) },
])('distillation on $name', ({ name, open }) => {
  it('retires the exchange and the changed fact, adds the new one, once', async () => {
    const store = await open();
    opened.push(store);
    const agent = `keeper-${name.toLowerCase()}`;
    await store.write(agent, [entry('fact:old', 'fact', 'The codeword is PELICAN-42.', ['alice']), entry('n1:conversation', 'conversation', 'alice said the codeword is HERON-7 now', ['alice']), entry('n1:project', 'project', 'I took part in the thread', ['alice'])]);
    const [old] = await store.current(agent, ['fact:old']);
    const [exchange] = await store.current(agent, ['n1:conversation', 'missing']);
    expect(exchange!.kind).toBe('conversation');
    const change = { sources: [exchange!.id], add: [entry('fact:n1:0', 'fact', 'The codeword is HERON-7.', ['alice'])], retire: [old!.id], at: at + 1 };
    expect(await store.distil(agent, change)).toBe(true);

    const texts = async (q: Parameters<MemoryStore['search']>[1]) => (await store.search(agent, q)).map((r) => r.entry.text);
    expect((await texts({ strategy: 'recent', limit: 10 })).sort()).toEqual(['I took part in the thread', 'The codeword is HERON-7.']);
    expect(await texts({ strategy: 'keyword', text: 'codeword', limit: 10 })).toEqual(['The codeword is HERON-7.']);
    expect(await store.current(agent, ['n1:conversation', 'fact:old'])).toEqual([]);
    // The distiller's view: current facts of exactly these people.
    expect(await texts({ strategy: 'recent', limit: 10, facts: { people: ['alice'] } })).toEqual(['The codeword is HERON-7.']);
    expect(await texts({ strategy: 'recent', limit: 10, facts: { people: ['bob'] } })).toEqual([]);
    expect(await texts({ strategy: 'recent', limit: 10, facts: { people: [] } })).toEqual([]);

    // Again (a retry, another daemon): its sources are retired, so nothing changes.
    expect(await store.distil(agent, { ...change, add: [entry('fact:n1:0b', 'fact', 'A second copy.', ['alice'])] })).toBe(false);
    expect(await texts({ strategy: 'recent', limit: 10, facts: {} })).toEqual(['The codeword is HERON-7.']);
    // Only facts are retired as facts: naming the project entry changes nothing.
    const [project] = await store.current(agent, ['n1:project']);
    expect(await store.distil(agent, { sources: [], add: [], retire: [project!.id], at })).toBe(false);
    expect(await store.current(agent, ['n1:project'])).toHaveLength(1);

    // Retired rows are held (and counted) until evicted, first.
    expect(await store.count(agent)).toBe(4);
    const keep = (await store.size(agent)) - 1;
    await store.evict(agent, keep);
    expect((await texts({ strategy: 'recent', limit: 10 })).sort()).toEqual(['I took part in the thread', 'The codeword is HERON-7.']);
  });
});
