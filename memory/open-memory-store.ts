// Which store `memory.store` in warren.yaml names: a postgres:// URL is the shared PostgreSQL store, anything
// else a SQLite file (the embedded default, in the data folder).
import type { MemoryStore } from './memory-store.ts';
import { PostgresMemoryStore } from './postgres-memory-store.ts';
import { SqliteMemoryStore } from './sqlite-memory-store.ts';

export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

export async function openMemoryStore(location: string): Promise<MemoryStore> {
  return isPostgresUrl(location) ? PostgresMemoryStore.open(location) : new SqliteMemoryStore(location);
}
