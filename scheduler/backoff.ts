// How long an agent waits after consecutive terminal failures (a success resets the count). The worker that
// records a failure computes the end of the wait once and stores it, so schedulers and `warren status` on any
// machine read the same moment without knowing the policy.
import { backoffDelayMs } from '../policy/exponential-backoff.ts';

export interface BackoffPolicy {
  /** The wait after the first terminal failure; each further one doubles it. */
  baseMs: number;
  maxMs: number;
}

/** Ten minutes: one mention to an always-failing agent costs at most one job's attempts in the first ten. */
export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 600_000, maxMs: 6 * 3_600_000 };

/**
 * min(base·2^(n−1), max) after n consecutive terminal failures; 0 without any. No jitter: the end is stored once
 * and shown by `warren status`, and the agents' failures are not synchronised anyway.
 */
export function failureBackoffMs(consecutiveFailures: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  if (consecutiveFailures <= 0) return 0;
  return backoffDelayMs({ baseMs: policy.baseMs, factor: 2, capMs: policy.maxMs, jitter: 'none' }, consecutiveFailures);
}

/** The waits after 1, 2, … failures until the cap, for an atomic update in Redis (agent-state.ts). */
export function backoffSchedule(policy: BackoffPolicy = DEFAULT_BACKOFF): number[] {
  const waits: number[] = [];
  for (let n = 1; waits.length === 0 || (waits.at(-1)! < policy.maxMs && n <= 31); n++) waits.push(failureBackoffMs(n, policy));
  return waits;
}

/** When the agent may run again (epoch ms; 0: now). */
export function eligibleAt(state: { backoffUntil: number | undefined }): number {
  return state.backoffUntil ?? 0;
}
