// The one exponential backoff of warren: every wait that grows with repeated failures (hub calls, model calls,
// BullMQ retries of an activation, an agent's failure backoff, the intake while the hub is down, definition
// reloads) is computed here, each caller with its own numbers. Pure: the random source is a parameter, so a
// test fixes it.

/**
 * How the wait is spread around its exponential ceiling, so that many clients that failed together do not all
 * come back at the same instant:
 * - `none`: exactly the ceiling (waits that are stored and shown, like an agent's failure backoff, or a single
 *   loop that nobody else shares);
 * - `equal`: half the ceiling fixed and the other half random, so never sooner than half of it (AWS's "equal
 *   jitter");
 * - `full`: anywhere between 0 and the ceiling (AWS's "full jitter"; spreads most, but may retry at once).
 */
export type Jitter = 'none' | 'equal' | 'full';

export interface ExponentialBackoff {
  /** The ceiling of the first wait (attempt 1). */
  baseMs: number;
  /** Each further attempt multiplies the ceiling by this (2: doubling). */
  factor: number;
  /** No ceiling is higher; `Infinity` for none. */
  capMs: number;
  jitter: Jitter;
}

/** An attempt number that is not 1, 2, …: a caller's off-by-one, reported rather than turned into some wait. */
export class BackoffAttemptError extends RangeError {
  override readonly name = 'BackoffAttemptError';
  readonly attempt: number;
  constructor(attempt: number) {
    super(`backoff attempt must be a whole number from 1 (the first wait), got ${attempt}`);
    this.attempt = attempt;
  }
}

/**
 * The wait before retry number `attempt` (1 = the first wait) in whole milliseconds (rounded down; timers count
 * whole milliseconds anyway): the ceiling min(capMs, baseMs · factor^(attempt−1)), then spread by `jitter`.
 * `random` returns a number in [0, 1), as Math.random does.
 */
export function backoffDelayMs(policy: ExponentialBackoff, attempt: number, random: () => number = Math.random): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new BackoffAttemptError(attempt);
  // factor^(attempt−1) overflows to Infinity after enough attempts; the cap then holds (and 0 stays 0, not NaN).
  const grown = policy.baseMs === 0 ? 0 : policy.baseMs * policy.factor ** (attempt - 1);
  const ceiling = Math.min(policy.capMs, grown);
  switch (policy.jitter) {
    case 'none':
      return Math.floor(ceiling);
    case 'equal':
      return Math.floor(ceiling / 2 + (random() * ceiling) / 2);
    case 'full':
      return Math.floor(random() * ceiling);
  }
}
