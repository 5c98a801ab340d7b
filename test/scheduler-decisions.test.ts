import { describe, expect, it } from 'vitest';
import { eligibleAt, failureBackoffMs } from '../scheduler/backoff.ts';
import { budgetAllows } from '../scheduler/eligibility.ts';
import { hasUnclaimedWork } from '../scheduler/inbox-claims.ts';
import { selectInboxWork } from '../scheduler/intake.ts';
import { inQuietHours } from '../scheduler/quiet-hours.ts';
import { contributionsLeft, explorationBlocker, explorationGapMs, idleCapacity, pickStalest, type ExplorationCandidate } from '../scheduler/staleness.ts';
import type { BudgetStatus } from '../hub-client/types.ts';

describe('failure backoff', () => {
  it('waits from the first terminal failure: 10, 20, 40 … minutes, capped at 6 h', () => {
    expect(failureBackoffMs(0)).toBe(0);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 40].map((n) => failureBackoffMs(n) / 60_000)).toEqual([10, 20, 40, 80, 160, 320, 360, 360, 360]);
    expect([1, 2, 3].map((n) => failureBackoffMs(n, { baseMs: 300, maxMs: 1_000 }))).toEqual([300, 600, 1_000]);
  });

  it('makes an agent eligible when the stored backoff ends', () => {
    expect(eligibleAt({ backoffUntil: undefined })).toBe(0);
    expect(eligibleAt({ backoffUntil: 121_000 })).toBe(121_000);
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

describe('quiet hours', () => {
  const night = { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' };
  // Berlin is UTC+1 in November (CET).
  it.each([
    ['2026-11-23T20:59:00Z', false], // 21:59 Berlin
    ['2026-11-23T21:00:00Z', true], // 22:00 Berlin: start is inside
    ['2026-11-23T23:30:00Z', true], // 00:30 Berlin, across midnight
    ['2026-11-24T05:59:00Z', true], // 06:59 Berlin
    ['2026-11-24T06:00:00Z', false], // 07:00 Berlin: end is outside
    ['2026-11-24T12:00:00Z', false],
  ])('22:00–07:00 Europe/Berlin at %s → %s', (at, quiet) => {
    expect(inQuietHours(night, new Date(at))).toBe(quiet);
  });

  it('follows the time zone, daylight saving included', () => {
    const window = { start: '09:00', end: '17:00', timezone: 'America/New_York' };
    expect(inQuietHours(window, new Date('2026-07-01T13:30:00Z'))).toBe(true); // 09:30 EDT (UTC−4)
    expect(inQuietHours(window, new Date('2026-12-01T13:30:00Z'))).toBe(false); // 08:30 EST (UTC−5)
    expect(inQuietHours({ ...window, timezone: 'Asia/Kolkata' }, new Date('2026-12-01T04:00:00Z'))).toBe(true); // 09:30 IST (UTC+5:30)
  });

  it('treats no window and an empty window as never quiet', () => {
    expect(inQuietHours(undefined, new Date())).toBe(false);
    expect(inQuietHours({ start: '08:00', end: '08:00', timezone: 'UTC' }, new Date('2026-11-23T08:00:00Z'))).toBe(false);
  });
});

describe('exploration by staleness', () => {
  const now = new Date('2026-11-23T12:00:00Z');
  const base = (name: string, lastActivatedAt: number | undefined, extra: Partial<ExplorationCandidate> = {}): ExplorationCandidate => ({
    name,
    lastActivatedAt,
    discoveryEnabled: true,
    minIntervalMs: 15 * 60_000,
    quietHours: undefined,
    eligibleAt: 0,
    paused: false,
    contributionsLeftToday: 10,
    ...extra,
  });
  const t = (minutesAgo: number): number => now.getTime() - minutesAgo * 60_000;

  it('picks never-run agents first, then the longest idle, ties by name, up to the capacity', () => {
    const cands = [base('dora', t(30)), base('carl', t(120)), base('bea', undefined), base('abe', t(120)), base('eve', undefined)];
    expect(pickStalest(cands, now, 10)).toEqual(['bea', 'eve', 'abe', 'carl', 'dora']);
    expect(pickStalest(cands, now, 2)).toEqual(['bea', 'eve']);
    expect(pickStalest(cands, now, 0)).toEqual([]);
  });

  it.each<[string, Partial<ExplorationCandidate>, string]>([
    ['discovery off', { discoveryEnabled: false }, 'discovery_off'],
    ['paused', { paused: true }, 'paused'],
    ['in quiet hours', { quietHours: { start: '11:00', end: '13:00', timezone: 'UTC' } }, 'quiet_hours'],
    ['backing off', { eligibleAt: now.getTime() + 1 }, 'backoff'],
    ['ran 10 minutes ago with a 15-minute gap', { lastActivatedAt: t(10) }, 'min_interval'],
    ['out of posts and comments today', { contributionsLeftToday: 0 }, 'daily_limit'],
  ])('skips an agent that is %s', (_what, extra, reason) => {
    const c = base('x', t(600), extra);
    expect(explorationBlocker(c, now)).toBe(reason);
    expect(pickStalest([c, base('y', t(60))], now, 5)).toEqual(['y']);
  });

  it('lets an agent explore again exactly when its gap has passed', () => {
    expect(explorationBlocker(base('x', t(15)), now)).toBeUndefined();
    expect(explorationBlocker(base('x', t(15) + 1), now)).toBe('min_interval');
  });

  it('fills only idle worker slots', () => {
    expect(idleCapacity(4, { active: 1, waiting: 1, prioritized: 0 })).toBe(2);
    expect(idleCapacity(4, { active: 3, waiting: 0, prioritized: 2 })).toBe(0);
  });

  it('spaces explorations by the larger of min_interval and the discovery frequency', () => {
    const b = (frequency: 'staleness' | 'hourly' | 'daily', seconds: number) => ({ discovery: { frequency }, limits: { min_interval_seconds: seconds } });
    expect(explorationGapMs(b('staleness', 60), 15 * 60_000)).toBe(15 * 60_000);
    expect(explorationGapMs(b('staleness', 3_600), 15 * 60_000)).toBe(3_600_000);
    expect(explorationGapMs(b('hourly', 60), 15 * 60_000)).toBe(3_600_000);
    expect(explorationGapMs(b('daily', 60), 15 * 60_000)).toBe(86_400_000);
  });
});

describe('daily limits', () => {
  const limits = { max_daily_posts: 3, max_daily_comments: 10 };
  it.each([
    [true, { posts: 0, comments: 0 }, 13],
    [true, { posts: 3, comments: 9 }, 1],
    [true, { posts: 5, comments: 10 }, 0],
    [false, { posts: 0, comments: 4 }, 6],
    [false, { posts: 0, comments: 10 }, 0],
  ])('can_create_posts=%s with %o done today leaves %i', (canPost, today, left) => {
    expect(contributionsLeft(limits, canPost, today)).toBe(left);
  });
});

describe('budget gates', () => {
  it.each<[BudgetStatus, boolean, boolean]>([
    ['healthy', true, true],
    ['warning', true, false],
    ['throttle', true, false],
    ['critical', false, false],
  ])('at %s: notifications %s, exploration %s', (status, notification, exploration) => {
    expect(budgetAllows(status, 'notification')).toBe(notification);
    expect(budgetAllows(status, 'exploration')).toBe(exploration);
  });
});


describe('inbox claims', () => {
  const hold = (held: number, version = 0) => ({ held, version });
  it.each<[number, ReturnType<typeof hold> | undefined, number, boolean]>([
    [1, undefined, 0, true], // nobody holds anything: any unread is work
    [0, undefined, 0, false],
    [5, hold(Infinity), 0, false], // a queued or starting run will read them all
    [2, hold(2), 0, false], // a run holds both unread notifications
    [3, hold(2), 0, true], // one arrived after the run read its inbox: exactly one follow-up
    [1, hold(2), 0, false], // the run marked one read before settling its claim: wait for it to end
    [3, hold(2, 7), 7, true], // the hold last shrank before the intake: its counts are comparable
    [3, hold(0, 8), 7, false], // it shrank during the intake, which may still count what was just read
  ])('unread %i with %o held (version before intake %i) → follow-up %s', (unread, held, version, expected) => {
    expect(hasUnclaimedWork(unread, held, version)).toBe(expected);
  });
});
