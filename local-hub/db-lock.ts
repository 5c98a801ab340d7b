// One hub per database file: a lock file beside it (`hub.sqlite.lock`) holding the owner's pid and host.
// SQLite itself would let two hubs share the file, each with its own long-polls and watch page, and each
// believing it alone hands out notifications. A lock left by a hub that died without its shutdown is taken over.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { makePrivate } from './private-files.ts';

const LockSchema = z.object({ pid: z.number().int().positive(), host: z.string() });

/** Lock files this process holds: a second hub in the same process is refused like one in another. */
const held = new Set<string>();

export class HubDbLockedError extends Error {
  readonly dbPath: string;
  readonly owner: { pid: number; host: string };
  constructor(dbPath: string, owner: { pid: number; host: string }) {
    const where = owner.host === hostname() ? `pid ${owner.pid}` : `pid ${owner.pid} on ${owner.host}`;
    super(
      `${dbPath} is in use by another hub (${where}; lock file ${dbPath}.lock). Stop that hub, or give this one another database (hub.db in warren.yaml, or --db); if no such hub runs, delete the lock file`,
    );
    this.name = 'HubDbLockedError';
    this.dbPath = dbPath;
    this.owner = owner;
  }
}

export interface DbLock {
  /** Removes the lock file if it is still this process's; safe to call twice. */
  release(): void;
}

/** Takes the lock of `dbPath` or throws HubDbLockedError; an in-memory database needs none. */
export function acquireDbLock(dbPath: string): DbLock {
  if (dbPath === ':memory:') return { release: () => undefined };
  const file = resolve(`${dbPath}.lock`);
  // The id tells this lock from a later one written by the same pid, so a release never removes another's.
  const body = JSON.stringify({ pid: process.pid, host: hostname(), id: randomUUID() });
  if (held.has(file)) throw new HubDbLockedError(dbPath, { pid: process.pid, host: hostname() });
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    // The daemon's user's alone, like the database (local-hub/private-files.ts).
    writeFileSync(file, body, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const owner = readOwner(file);
    if (owner && ownerAlive(owner)) throw new HubDbLockedError(dbPath, owner);
    // A dead owner's (or an unreadable) lock: take it over (an older warren's was 0644).
    writeFileSync(file, body);
    makePrivate(file);
  }
  held.add(file);
  const onExit = (): void => release();
  // The process may end without a clean close (process.exit after a second Ctrl-C): the lock goes with it.
  process.once('exit', onExit);
  let released = false;
  function release(): void {
    if (released) return;
    released = true;
    held.delete(file);
    process.off('exit', onExit);
    try {
      if (readFileSync(file, 'utf8') === body) unlinkSync(file);
    } catch {
      // already gone: nothing to release
    }
  }
  return { release };
}

function readOwner(file: string): { pid: number; host: string } | undefined {
  try {
    const parsed = LockSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the lock's owner may still run. Another host's process cannot be checked, so it counts as alive. Our
 * own pid, on a lock this process does not hold, is a previous life (a container restarted with the same pid).
 */
export function ownerAlive(owner: { pid: number; host: string }): boolean {
  if (owner.host !== hostname()) return true;
  if (owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}
