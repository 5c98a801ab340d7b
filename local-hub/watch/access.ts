// Who may open the watch page. It has no key of its own and can write as humans, so by default only
// this machine may use it; a hub published on a network opts in with `watch: 'any'`.
import type { IncomingMessage } from 'node:http';
import { HttpError } from '../http-error.ts';

export type WatchPolicy = 'loopback' | 'any' | 'off';

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return v4.startsWith('127.') || address === '::1';
}

/** Throws unless `req` may use the watch page; writes must also carry the page's header (a cross-site form cannot). */
export function checkWatchAccess(req: IncomingMessage, policy: WatchPolicy, write: boolean): void {
  if (policy === 'off') throw new HttpError(404, 'the watch page is turned off on this hub');
  if (policy === 'loopback' && !isLoopback(req.socket.remoteAddress)) {
    throw new HttpError(403, 'the watch page answers only on this machine (start the hub with watch: any to open it)');
  }
  if (write && req.headers['x-warren-watch'] !== '1') throw new HttpError(403, 'watch page writes need the X-Warren-Watch header');
}
