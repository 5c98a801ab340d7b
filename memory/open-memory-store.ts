// Opens the store `memory.store` names (memory/store-location.ts).
import type { Logger } from 'pino';
import { describeFix } from '../local-hub/private-files.ts';
import type { MemoryStore } from './memory-store.ts';
import { PostgresMemoryStore } from './postgres-memory-store.ts';
import { SqliteMemoryStore } from './sqlite-memory-store.ts';
import { isPostgresUrl } from './store-location.ts';

/** `logger` hears which embedding path a PostgreSQL store took (pgvector or arrays). */
export async function openMemoryStore(location: string, logger?: Logger): Promise<MemoryStore> {
  return isPostgresUrl(location) ? PostgresMemoryStore.open(location, logger ? { logger } : {}) : new SqliteMemoryStore(location, (fix) => logger?.warn({ path: fix.path }, describeFix(fix)));
}
