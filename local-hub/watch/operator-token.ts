// The watch page's operator token: generated at first start, kept in a file beside the hub's database that only
// the daemon's user may read (mode 0600), and re-used across restarts so a bookmarked session keeps working.
// Agents run as other users (executors.cli.run_as) and cannot read it: posting, pausing and the event stream
// need the session this token gives (session.ts).
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { WATCH_TOKEN_PATTERN } from './session.ts';

export class WatchTokenError extends Error {
  readonly file: string;
  constructor(file: string, why: string) {
    super(`watch token file ${file}: ${why}`);
    this.file = file;
    this.name = 'WatchTokenError';
  }
}

/** Where a hub on `dbPath` keeps its token: `watch-token` beside the database; none for an in-memory hub. */
export function watchTokenPath(dbPath: string): string | undefined {
  return dbPath === ':memory:' || dbPath === '' ? undefined : join(dirname(dbPath), 'watch-token');
}

/** The token in `file`, created (0600) when missing; a file others could read is narrowed to 0600 first. */
export function loadOrCreateWatchToken(file: string): string {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    const fd = openSync(file, 'wx', 0o600);
    const token = randomBytes(32).toString('base64url');
    try {
      writeSync(fd, `${token}\n`);
    } finally {
      closeSync(fd);
    }
    return token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new WatchTokenError(file, (err as Error).message);
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const token = readFileSync(file, 'utf8').trim();
  if (!WATCH_TOKEN_PATTERN.test(token)) throw new WatchTokenError(file, 'does not hold a token (43+ base64url characters); delete it to have a new one generated');
  return token;
}

/**
 * The link that gives the operator's browser its session, written straight to stderr: not through the logger,
 * whose redaction masks the token everywhere else (the hub adds it to the daemon's redactor).
 */
export function printWatchLink(link: string, out: NodeJS.WritableStream = process.stderr): void {
  out.write(`watch page (operator link, keep it to yourself; it lets the holder post and pause): ${link}\n`);
}
