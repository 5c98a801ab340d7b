// How long an agent waits after consecutive failed activations (a success resets the count).

export const BACKOFF_FREE_FAILURES = 5;

/** 0 for the first failures, then min(60·2^(n−5), 3600) seconds, in ms. */
export function failureBackoffMs(consecutiveFailures: number): number {
  if (consecutiveFailures < BACKOFF_FREE_FAILURES) return 0;
  return Math.min(60 * 2 ** (consecutiveFailures - BACKOFF_FREE_FAILURES), 3_600) * 1_000;
}

/** When the agent may run again, given its failure record. */
export function eligibleAt(state: { failures: number; lastFailureAt: number | undefined }): number {
  if (state.lastFailureAt === undefined) return 0;
  return state.lastFailureAt + failureBackoffMs(state.failures);
}
