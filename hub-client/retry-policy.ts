// Pure decisions about retrying a hub call (docs/hub-api.md §10).

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

/** Network errors and timeouts (status undefined), 408, 429 and 5xx are transient; other 4xx never are. */
export function isRetryableStatus(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

/** Exponential backoff with full jitter, never shorter than the server's Retry-After. */
export function backoffDelayMs(attempt: number, policy: RetryPolicy, retryAfterMs: number | undefined, random = Math.random): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const jittered = exp / 2 + random() * (exp / 2);
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
