// Opening the SQLite store (node:sqlite) and running work in transactions with after-commit hooks.
import { DatabaseSync } from 'node:sqlite';
import { MIGRATIONS, SEEDED_COMMUNITIES } from './migrations.ts';
import { privateSqlite, type ModeFix } from './private-files.ts';

/** `onModeFix`: a file or folder an older warren left readable by other users, now closed to them (said at start). */
export function openHubDb(path: string, onModeFix: (fix: ModeFix) => void = () => undefined): DatabaseSync {
  const inMemory = path === ':memory:';
  // Every agent's notifications and keys' digests are in it: the daemon's user's alone (local-hub/private-files.ts).
  if (!inMemory) for (const fix of privateSqlite(path)) onModeFix(fix);
  const db = new DatabaseSync(path);
  // WAL lets readers (e.g. sqlite3 on the file) look while the hub writes.
  if (!inMemory) db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('PRAGMA busy_timeout = 5000');
  migrate(db);
  // Unicode-aware lowercase for case-insensitive search (SQLite's lower() folds ASCII only).
  db.function('casefold', { deterministic: true }, (v) => (typeof v === 'string' ? v.toLowerCase() : v));
  const seed = db.prepare('INSERT OR IGNORE INTO communities (name, description, created_at) VALUES (?, NULL, ?)');
  for (const name of SEEDED_COMMUNITIES) seed.run(name, new Date().toISOString());
  return db;
}

function migrate(db: DatabaseSync): void {
  const version = Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version);
  if (version > MIGRATIONS.length) throw new Error(`hub database is at schema ${version}, newer than this hub (${MIGRATIONS.length})`);
  if (version === 0 && db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'agents'").get()) {
    // The first, unversioned local hub did not record a schema version; its layout cannot be upgraded in place.
    throw new Error('hub database was written by an earlier, unversioned local hub: move it away and start again');
  }
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(MIGRATIONS[v]!);
      db.exec(`PRAGMA user_version = ${v + 1}`);
      db.exec('COMMIT');
    } catch (err) {
      db.exec('ROLLBACK');
      throw new Error(`hub database migration ${v + 1} failed: ${(err as Error).message}`, { cause: err });
    }
  }
}

/**
 * Runs synchronous work in one transaction: all of it is written, or none. Nested calls join the outer
 * transaction (as savepoints), so a route and the idempotency record it produces commit together.
 * Hooks registered with `afterCommit` run once the outermost transaction committed (and never on rollback):
 * that is where long-poll waiters are woken and events emitted.
 */
export class Transactions {
  readonly #db: DatabaseSync;
  #depth = 0;
  #hooks: Array<() => void> = [];
  readonly #onHookError: (err: unknown) => void;

  /** `onHookError`: a failing hook must not turn a committed write into an error answer, so it is reported here. */
  constructor(db: DatabaseSync, onHookError: (err: unknown) => void = () => undefined) {
    this.#db = db;
    this.#onHookError = onHookError;
  }

  run<T>(fn: () => T): T {
    const outer = this.#depth === 0;
    const savepoint = `sp${this.#depth}`;
    const hooksBefore = this.#hooks.length;
    this.#db.exec(outer ? 'BEGIN IMMEDIATE' : `SAVEPOINT ${savepoint}`);
    this.#depth++;
    let out: T;
    try {
      out = fn();
      if (out instanceof Promise) throw new Error('transaction work must be synchronous');
    } catch (err) {
      this.#depth--;
      this.#db.exec(outer ? 'ROLLBACK' : `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}`);
      this.#hooks.length = hooksBefore; // the rolled-back work's hooks must not fire
      throw err;
    }
    this.#depth--;
    this.#db.exec(outer ? 'COMMIT' : `RELEASE ${savepoint}`);
    if (outer) this.#flush();
    return out;
  }

  /** Runs `fn` after the current transaction commits; outside a transaction, at once. */
  afterCommit(fn: () => void): void {
    if (this.#depth === 0) {
      this.#hooks.push(fn);
      this.#flush();
    } else this.#hooks.push(fn);
  }

  #flush(): void {
    const hooks = this.#hooks;
    this.#hooks = [];
    for (const hook of hooks) {
      try {
        hook();
      } catch (err) {
        this.#onHookError(err);
      }
    }
  }
}
