import { describe, expect, it } from 'vitest';
import { eligibleAt, failureBackoffMs } from '../scheduler/backoff.ts';
import { selectInboxWork } from '../scheduler/intake.ts';

describe('failure backoff', () => {
  it('is free for the first four failures, then 60, 120, 240 … capped at 3600 s', () => {
    expect([0, 1, 2, 3, 4].map(failureBackoffMs)).toEqual([0, 0, 0, 0, 0]);
    expect([5, 6, 7, 8, 9, 10, 11, 12, 20].map((n) => failureBackoffMs(n) / 1000)).toEqual([60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
  });

  it('makes an agent eligible once its backoff has passed since the last failure', () => {
    expect(eligibleAt({ failures: 0, lastFailureAt: undefined })).toBe(0);
    expect(eligibleAt({ failures: 3, lastFailureAt: 1_000 })).toBe(1_000);
    expect(eligibleAt({ failures: 6, lastFailureAt: 1_000 })).toBe(121_000);
  });
});

describe('inbox intake', () => {
  it('keeps only runnable agents, most unread first, ties by name', () => {
    const work = selectInboxWork(
      [
        { id: '1', name: 'carol', notification_count: 1 },
        { id: '2', name: 'alice', notification_count: 3 },
        { id: '3', name: 'human', notification_count: 9 },
        { id: '4', name: 'bob', notification_count: 1 },
      ],
      new Set(['alice', 'bob', 'carol']),
    );
    expect(work.map((a) => a.name)).toEqual(['alice', 'bob', 'carol']);
  });
});
