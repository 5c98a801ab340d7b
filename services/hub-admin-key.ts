// Where the hub's admin key comes from. The variable `hub.admin_key_env` names (or its `_FILE`, or secrets.dir)
// wins; without it, an embedded hub (`warren start`, `warren hub`) keeps the key it generates in a file next to its
// database (`data/hub-admin-key`, mode 0600: only the daemon's user reads it), reused at every start, so the
// commands an operator runs from the same folder (`warren hub user`, `warren status`) find it by themselves and a
// restart does not invalidate what they were given.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { newAdminKey } from '../local-hub/keys.ts';
import type { WarrenConfig } from './config.ts';
import type { SecretSource } from './secrets.ts';

export const ADMIN_KEY_FILE_NAME = 'hub-admin-key';

/** The key file could not be read or written. */
export class AdminKeyFileError extends Error {
  override readonly name = 'AdminKeyFileError';
  readonly path: string;
  constructor(path: string, reason: string, opts: { cause?: unknown } = {}) {
    super(`hub admin key file ${path}: ${reason}`, { cause: opts.cause });
    this.path = path;
  }
}

export type AdminKeySource = { key: string; from: 'env' } | { key: string; from: 'file'; path: string };

/** The embedded hub's key and where it is: `path` unset when it came from the variable or lives for this run only. */
export interface KeptAdminKey {
  key: string;
  from: 'env' | 'file' | 'generated';
  path?: string;
  /** Made by this call (a new key file, or an in-memory hub's key). */
  created: boolean;
}

/** The key file of the hub whose database is `hubDb`; undefined for an in-memory hub (nothing is kept). */
export function adminKeyFile(hubDb: string): string | undefined {
  return hubDb === ':memory:' ? undefined : join(dirname(hubDb), ADMIN_KEY_FILE_NAME);
}

/** The admin key as a command run beside the hub finds it: the variable first, then the hub's key file. */
export function findAdminKey(hub: WarrenConfig['hub'], secrets: SecretSource): AdminKeySource | undefined {
  const set = secrets.get(hub.admin_key_env);
  if (set) return { key: set, from: 'env' };
  const path = adminKeyFile(hub.db);
  const key = path === undefined ? undefined : readKeyFile(path);
  return key === undefined ? undefined : { key, from: 'file', path: path! };
}

/**
 * The embedded hub's key: the variable's, else the key file's, else a new key written to the key file (mode 0600,
 * never overwritten). An in-memory hub gets a key for this run only (`path` undefined).
 */
export function keepAdminKey(hub: WarrenConfig['hub'], secrets: SecretSource): KeptAdminKey {
  const found = findAdminKey(hub, secrets);
  if (found) return { ...found, created: false };
  const path = adminKeyFile(hub.db);
  const key = newAdminKey();
  if (path === undefined) return { key, from: 'generated', created: true };
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // `wx`: never replace a key another process wrote meanwhile; the mode applies as the file is created.
    writeFileSync(path, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    const kept = (err as NodeJS.ErrnoException).code === 'EEXIST' ? readKeyFile(path) : undefined;
    if (kept !== undefined) return { key: kept, from: 'file', path, created: false };
    throw new AdminKeyFileError(path, `cannot write it (${(err as Error).message}); set ${hub.admin_key_env} instead`, { cause: err });
  }
  return { key, from: 'file', path, created: true };
}

/** What to do when no admin key is at hand, for messages (`warren hub user`, `warren status`). */
export function missingAdminKeyHint(hub: WarrenConfig['hub'], cwd = process.cwd()): string {
  const path = adminKeyFile(hub.db);
  const where = path === undefined ? '' : `, or run this where the embedded hub keeps its key (${relative(cwd, path) || path} was not found)`;
  return `no hub admin key: set ${hub.admin_key_env}${where}`;
}

function readKeyFile(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new AdminKeyFileError(path, `cannot read it (${(err as Error).message})`, { cause: err });
  }
  const key = text.trim();
  if (!key) throw new AdminKeyFileError(path, `it is empty: delete it (a new key is made at the next start) or set the variable`);
  return key;
}
