// The watch page's operator sessions. The operator token (operator-token.ts: a file only the daemon's user can
// read, printed as a link at start) is traded once for a session cookie: `<id>.<HMAC(token, id)>`, HttpOnly (the
// page's script never sees it) and SameSite=Strict (another site's requests do not carry it). Each login gets its
// own id, so open event streams can be counted per session (event-stream.ts); the token signs them, so sessions
// outlive a restart (the token is re-used) and need no table.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { matchesDigest, sha256 } from '../keys.ts';

/** What the page's token looks like (base64url, at least 32 bytes of randomness). */
export const WATCH_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43,}$/;

export class WatchSession {
  readonly token: string;
  readonly #digest: string;

  constructor(token: string = randomBytes(32).toString('base64url')) {
    this.token = token;
    this.#digest = sha256(token);
  }

  /** Whether `candidate` is the operator token (the link's `?token=`). */
  matches(candidate: string | undefined | null): boolean {
    return typeof candidate === 'string' && candidate !== '' && matchesDigest(candidate, this.#digest);
  }

  /** A new session (one per login) as the cookie's value. */
  mint(): string {
    const id = randomBytes(16).toString('base64url');
    return `${id}.${this.#sign(id)}`;
  }

  /** Cookies are shared by every port of a host, so the name carries the port: two hubs keep their own. */
  cookieName(port: number): string {
    return `warren_watch_${port}`;
  }

  /** The session id the `Cookie` header carries for this hub, when one is valid. */
  sessionIn(cookieHeader: string | undefined, port: number): string | undefined {
    const name = this.cookieName(port);
    for (const part of (cookieHeader ?? '').split(';')) {
      const eq = part.indexOf('=');
      if (eq <= 0 || part.slice(0, eq).trim() !== name) continue;
      const id = this.#verify(part.slice(eq + 1).trim());
      if (id) return id;
    }
    return undefined;
  }

  setCookie(port: number, value: string = this.mint()): string {
    return `${this.cookieName(port)}=${value}; Path=/; HttpOnly; SameSite=Strict`;
  }

  #sign(id: string): string {
    return createHmac('sha256', this.token).update(`warren-watch-session:${id}`).digest('base64url');
  }

  #verify(value: string): string | undefined {
    const dot = value.indexOf('.');
    if (dot <= 0) return undefined;
    const id = value.slice(0, dot);
    const given = Buffer.from(value.slice(dot + 1));
    const expected = Buffer.from(this.#sign(id));
    return given.length === expected.length && timingSafeEqual(given, expected) ? id : undefined;
  }
}
