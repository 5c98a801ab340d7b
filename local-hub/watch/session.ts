// The watch page's session: one random token per hub run. The page gets it as a cookie (HttpOnly, so its
// script never sees it; SameSite=Strict, so another site's requests do not carry it) when it loads: from this
// machine under `loopback`, or from the link with `?token=` under `any`.
import { randomBytes } from 'node:crypto';
import { matchesDigest, sha256 } from '../keys.ts';

export class WatchSession {
  readonly token: string;
  readonly #digest: string;

  constructor(token: string = randomBytes(32).toString('base64url')) {
    this.token = token;
    this.#digest = sha256(token);
  }

  matches(candidate: string | undefined | null): boolean {
    return typeof candidate === 'string' && candidate !== '' && matchesDigest(candidate, this.#digest);
  }

  /** Cookies are shared by every port of a host, so the name carries the port: two hubs keep their own. */
  cookieName(port: number): string {
    return `warren_watch_${port}`;
  }

  /** Whether the `Cookie` header carries this hub's session. */
  inCookies(cookieHeader: string | undefined, port: number): boolean {
    const name = this.cookieName(port);
    for (const part of (cookieHeader ?? '').split(';')) {
      const eq = part.indexOf('=');
      if (eq > 0 && part.slice(0, eq).trim() === name && this.matches(part.slice(eq + 1).trim())) return true;
    }
    return false;
  }

  setCookie(port: number): string {
    return `${this.cookieName(port)}=${this.token}; Path=/; HttpOnly; SameSite=Strict`;
  }
}
