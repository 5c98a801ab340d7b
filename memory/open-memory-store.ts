// Opens the store `memory.store` names (memory/store-location.ts).
import type { MemoryStore } from './memory-store.ts';
import { PostgresMemoryStore } from './postgres-memory-store.ts';
import { SqliteMemoryStore } from './sqlite-memory-store.ts';
import { isPostgresUrl } from './store-location.ts';

export async function openMemoryStore(location: string): Promise<MemoryStore> {
  return isPostgresUrl(location) ? PostgresMemoryStore.open(location) : new SqliteMemoryStore(location);
}
