// Pure decisions about retrying a hub call (docs/hub-api.md §10).
import { backoffDelayMs as exponentialDelayMs } from '../policy/exponential-backoff.ts';

export interface RetryPolicy {
  /** Total attempts including the first. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 200, maxDelayMs: 5_000 };

/** GETs are safe to repeat; a POST only when the hub can deduplicate it by its Idempotency-Key. */
export function isRepeatable(method: string, hasIdempotencyKey: boolean): boolean {
  return method === 'GET' || hasIdempotencyKey;
}

/**
 * Doubling from baseDelayMs up to maxDelayMs with equal jitter (between half and all of it: many daemons that
 * lost the hub together do not return together), never shorter than the server's Retry-After.
 */
export function backoffDelayMs(attempt: number, policy: RetryPolicy, retryAfterMs: number | undefined, random = Math.random): number {
  const jittered = exponentialDelayMs({ baseMs: policy.baseDelayMs, factor: 2, capMs: policy.maxDelayMs, jitter: 'equal' }, attempt, random);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/** `Retry-After` is seconds or an HTTP date. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
