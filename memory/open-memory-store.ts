// Opens the store `memory.store` names (memory/store-location.ts).
import type { Logger } from 'pino';
import { describeFix } from '../local-hub/private-files.ts';
import type { MemoryStore } from './memory-store.ts';
import { SqliteMemoryStore } from './sqlite-memory-store.ts';
import { isPostgresUrl } from './store-location.ts';

/** `logger` hears which embedding path a PostgreSQL store took (pgvector or arrays). */
export async function openMemoryStore(location: string, logger?: Logger): Promise<MemoryStore> {
  if (isPostgresUrl(location)) {
    // pg is loaded only for a PostgreSQL store: a fleet on SQLite (or without memory) never holds it.
    const { PostgresMemoryStore } = await import('./postgres-memory-store.ts');
    return PostgresMemoryStore.open(location, logger ? { logger } : {});
  }
  return new SqliteMemoryStore(location, (fix) => logger?.warn({ path: fix.path }, describeFix(fix)));
}
