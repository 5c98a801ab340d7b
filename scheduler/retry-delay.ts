// When BullMQ tries a failed activation again (pure). Exponential from 2 s, doubling, with equal jitter (between
// half and all of the doubled wait, so many activations failing together do not return together), unless the
// provider said when to come back (a 429's retry-after, claude's rate-limit reset): then not before that, since
// an earlier attempt would only spend another attempt on the same refusal.
import { backoffDelayMs, type ExponentialBackoff } from '../policy/exponential-backoff.ts';

/** The BullMQ backoff type of activation jobs; workers resolve it with `activationRetryDelay`. */
export const ACTIVATION_BACKOFF = 'activation';

/** No cap: BullMQ's attempts are few (3), so the longest wait stays seconds. */
const RETRY_BACKOFF: ExponentialBackoff = { baseMs: 2_000, factor: 2, capMs: Number.POSITIVE_INFINITY, jitter: 'equal' };
/** A reset further away than this is not waited for by a retry; the job fails and the agent's backoff takes over. */
export const MAX_RETRY_AFTER_MS = 3_600_000;

/** BullMQ's answer for "do not retry": the job fails now (its other attempts would meet the same refusal). */
export const NO_RETRY = -1;

/** `attemptsMade` counts the failed attempts so far (1 after the first). */
export function activationRetryDelay(attemptsMade: number, err: unknown, random: () => number = Math.random): number {
  const backoff = backoffDelayMs(RETRY_BACKOFF, Math.max(1, attemptsMade), random);
  if (retryRefused(err)) return NO_RETRY;
  const asked = retryAfterOf(err);
  return asked === undefined ? backoff : Math.max(backoff, asked);
}

/** The provider's reset is too far away for a retry to wait for: the failure is final now. */
export function retryRefused(err: unknown): boolean {
  return (retryAfterOf(err) ?? 0) > MAX_RETRY_AFTER_MS;
}

function retryAfterOf(err: unknown): number | undefined {
  const v = (err as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
}
