// The one exponential backoff (policy/exponential-backoff.ts), as one table: policy, attempt and random draw in,
// the wait (or the refusal of an attempt that is not 1, 2, …) out. The callers' own numbers are rows too.
import { describe, expect, it } from 'vitest';
import { BackoffAttemptError, backoffDelayMs, type ExponentialBackoff, type Jitter } from '../policy/exponential-backoff.ts';

const p = (baseMs: number, factor: number, capMs: number, jitter: Jitter): ExponentialBackoff => ({ baseMs, factor, capMs, jitter });

describe('exponential backoff', () => {
  it.each<[string, ExponentialBackoff, number, number, number | typeof BackoffAttemptError]>([
    // [what, policy, attempt, random draw, wait]
    ['the first wait is the base', p(100, 2, 1_000, 'none'), 1, 0.5, 100],
    ['doubling', p(100, 2, 1_000, 'none'), 3, 0.5, 400],
    ['capped', p(100, 2, 1_000, 'none'), 5, 0.5, 1_000],
    ['another factor', p(100, 3, 10_000, 'none'), 3, 0.5, 900],
    ['no cap', p(2_000, 2, Infinity, 'none'), 11, 0.5, 2_048_000],
    ['overflow stays at the cap', p(100, 2, 1_000, 'none'), 5_000, 0.5, 1_000],
    ['a zero base waits nothing, however many attempts', p(0, 2, 1_000, 'none'), 5_000, 0.5, 0],
    ['equal jitter: half the ceiling at the lowest draw', p(250, 2, 2_000, 'equal'), 1, 0, 125],
    ['equal jitter: three quarters at the middle draw', p(250, 2, 2_000, 'equal'), 1, 0.5, 187],
    ['equal jitter: just under the ceiling at the highest draw, rounded down', p(2_000, 2, Infinity, 'equal'), 1, 0.999_999, 1_999],
    ['equal jitter of a capped ceiling', p(250, 2, 2_000, 'equal'), 5, 1, 2_000],
    ['full jitter: from nothing', p(100, 2, 1_000, 'full'), 3, 0, 0],
    ['full jitter: to the ceiling', p(100, 2, 1_000, 'full'), 3, 0.5, 200],
    // The callers' numbers (their own tests hold the details).
    ['an agent after its 7th terminal failure: 10 min doubling, at most 6 h', p(600_000, 2, 6 * 3_600_000, 'none'), 7, 0.5, 6 * 3_600_000],
    ['intake after 3 failed rounds at a 1 s poll: 2 s doubling, at most 30 s', p(2_000, 2, 30_000, 'none'), 3, 0.5, 8_000],
    ['intake at a 100 ms poll stops at 64 intervals', p(200, 2, 6_400, 'none'), 9, 0.5, 6_400],
    ['the second BullMQ retry of an activation', p(2_000, 2, Infinity, 'equal'), 2, 0, 2_000],
    ['the third attempt of a hub call', p(200, 2, 5_000, 'equal'), 3, 1, 800],
    ['the fourth definition reload', p(1_000, 2, 60_000, 'none'), 4, 0.5, 8_000],
    ['attempt 0 is a caller\'s off-by-one', p(100, 2, 1_000, 'none'), 0, 0.5, BackoffAttemptError],
    ['a fractional attempt too', p(100, 2, 1_000, 'none'), 1.5, 0.5, BackoffAttemptError],
  ])('%s', (_what, policy, attempt, draw, expected) => {
    if (typeof expected === 'number') expect(backoffDelayMs(policy, attempt, () => draw)).toBe(expected);
    else expect(() => backoffDelayMs(policy, attempt, () => draw)).toThrow(expected);
  });
});
