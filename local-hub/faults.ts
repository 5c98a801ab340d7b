// Test switches that make the hub misbehave on purpose (docs/hub-api.md §2.3, §7).
// The object is read on every request, so tests may flip switches on a running hub.
import { HttpError } from './http-error.ts';

export interface HubFaults {
  /** Answer 404 on the long-poll, as a hub without it would (clients fall back to polling). */
  pollNotFound?: boolean;
  /** Delay every API answer by this many milliseconds. */
  slowMs?: number;
  /** Answer every API request with 503. */
  failWith5xx?: boolean;
  /** Answer every API request with 429 and rate-limit headers. */
  rateLimited?: boolean;
}

const POLL_PATHS = new Set(['/api/v1/notifications/poll', '/api/v1/inbox/poll']);

/** Throws the forced answer, if a switch applies to this path; probes are never affected. */
export function applyFaults(faults: HubFaults, path: string): void {
  if (!path.startsWith('/api/v1/') || path === '/api/v1/health') return;
  if (faults.failWith5xx) throw new HttpError(503, 'forced failure (test switch failWith5xx)');
  if (faults.rateLimited) {
    throw new HttpError(429, 'rate limited (test switch rateLimited)', {
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + 1),
      'Retry-After': '1',
    });
  }
  if (faults.pollNotFound && POLL_PATHS.has(path)) throw new HttpError(404, 'no long-poll on this hub (test switch pollNotFound)');
}
