// warren's state on disk (the hub's and memory's SQLite files with their WAL/SHM/journal, the hub's lock file and
// their folder) belongs to the daemon's user alone: a CLI agent runs as its own user on the same host
// (executors/cli/run-as.ts), and a 0644 database would hand it every agent's notifications and memories. New files
// and folders are made 0600/0700 whatever the umask; ones an older warren left open to others are closed at start.
import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, resolve, sep } from 'node:path';

/** A mode warren changed: said at start, so an operator knows an older version left the file open. */
export interface ModeFix {
  path: string;
  from: number;
  to: number;
}

/** The files SQLite keeps beside a database; each holds the database's content as much as the file itself. */
export const SQLITE_COMPANIONS = ['-wal', '-shm', '-journal'] as const;

/** The mode `mode` becomes when only its owner may use it, or undefined when that is so already (pure). */
export function privateMode(mode: number): number | undefined {
  const perms = mode & 0o777;
  return perms & 0o077 ? perms & 0o700 : undefined;
}

/**
 * Whether warren may close the folder a data file lies in to everyone but its owner (pure): not when that folder is,
 * or holds, one others need (the working directory, the home folder, the temporary folder, warren's own install,
 * which CLI agents' users run `warren mcp hub` from), nor the filesystem root.
 */
export function ownsFolder(dir: string, shared: { cwd: string; home: string; tmp: string; install: string }): boolean {
  const d = resolve(dir);
  const holds = (path: string): boolean => {
    const p = resolve(path);
    return p === d || p.startsWith(`${d}${sep}`);
  };
  return d !== dirname(d) && !Object.values(shared).some(holds);
}

/** The folders ownsFolder keeps open, in this process. */
function sharedFolders(): { cwd: string; home: string; tmp: string; install: string } {
  return { cwd: process.cwd(), home: homedir(), tmp: tmpdir(), install: INSTALL };
}

const INSTALL = resolve(import.meta.dirname, '..');

/**
 * The mode of an existing data folder once others can neither list nor write it, or undefined when they cannot
 * already (pure). Search (x) is kept: CLI agents' users may have to pass through to workspaces kept inside it;
 * every file warren keeps there is 0600 itself. Whether they may pass is decided at daemon start (folderPassage).
 */
export function unlistableMode(mode: number): number | undefined {
  const perms = mode & 0o777;
  return perms & 0o066 ? perms & ~0o066 : undefined;
}

/** The mode of a data folder others may pass through (to workspaces inside it) or not, or undefined when it is so (pure). */
export function passageMode(mode: number, passable: boolean): number | undefined {
  const perms = mode & 0o777;
  const want = passable ? perms | 0o011 : perms & ~0o011;
  return want === perms ? undefined : want;
}

/** Closes an existing file or folder to others (never through a symlink); undefined when nothing changed. */
export function makePrivate(path: string): ModeFix | undefined {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return undefined; // not there: nothing to close
  }
  if (st.isSymbolicLink()) return undefined;
  const to = privateMode(st.mode);
  if (to === undefined) return undefined;
  chmodSync(path, to);
  return { path, from: st.mode & 0o777, to };
}

/** The folder, created 0700 when missing (its missing parents too), unlistable by others when warren's (ownsFolder). */
export function privateFolder(dir: string): ModeFix[] {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const fix = makeUnlistable(dir);
  return fix ? [fix] : [];
}

/** An existing folder of warren's (ownsFolder) others can no longer list or write; undefined when nothing changed. */
function makeUnlistable(dir: string): ModeFix | undefined {
  if (!ownsFolder(dir, sharedFolders())) return undefined;
  const st = lstatSync(dir, { throwIfNoEntry: false });
  const to = st?.isDirectory() ? unlistableMode(st.mode) : undefined;
  if (to === undefined) return undefined;
  chmodSync(dir, to);
  return { path: dir, from: st!.mode & 0o777, to };
}

/**
 * A data folder of warren's made passable by others or not (daemon start: passable when CLI agents' users keep
 * their workspaces inside it). Not said: it opens or closes no listing or file, only the way through.
 */
export function setFolderPassage(dir: string, passable: boolean): void {
  if (!ownsFolder(dir, sharedFolders())) return;
  const st = lstatSync(dir, { throwIfNoEntry: false });
  const to = st?.isDirectory() ? passageMode(st.mode, passable) : undefined;
  if (to !== undefined) chmodSync(dir, to);
}

/** A file created 0600 when missing (so its first mode never depends on the umask), or closed to others. */
export function privateFile(path: string): ModeFix[] {
  closeSync(openSync(path, 'a', 0o600));
  const fix = makePrivate(path);
  return fix ? [fix] : [];
}

/**
 * A SQLite database, its folder and its companions, private before it is opened: SQLite gives a new WAL/SHM/journal
 * the database file's own mode, so a 0600 database keeps them 0600 too; companions left by an older warren are closed.
 */
export function privateSqlite(path: string): ModeFix[] {
  return [...privateFolder(dirname(path)), ...privateFile(path), ...SQLITE_COMPANIONS.flatMap((s) => makePrivate(`${path}${s}`) ?? [])];
}

/** An existing database, its companions and its folder (when warren's) closed to others; nothing is created. */
export function closeSqlite(path: string): ModeFix[] {
  const folder = existsSync(dirname(path)) ? makeUnlistable(dirname(path)) : undefined;
  return [folder, ...['', ...SQLITE_COMPANIONS].map((s) => makePrivate(`${path}${s}`))].filter((f): f is ModeFix => f !== undefined);
}

/** One line for a log: which file an older warren left open, and what it is now. */
export function describeFix(fix: ModeFix): string {
  return `${fix.path} was readable by other users (mode ${fix.from.toString(8)}): now ${fix.to.toString(8)}`;
}
