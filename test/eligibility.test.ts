// May this agent run now (scheduler/eligibility.ts), as one table: the facts a caller holds and the time in, the
// verdict with its reason out. The intake round, the exploration round, the worker, the activation (budget) and
// `warren status` all ask this one function; the rows say what each of them passes.
import { describe, expect, it } from 'vitest';
import { mayRun, minIntervalMs, type EligibilityFacts, type StalenessFacts, type Verdict, type WriteOrigin } from '../scheduler/eligibility.ts';

const now = new Date('2026-11-23T12:00:00Z');
const t = (minutesFromNow: number): number => now.getTime() + minutesFromNow * 60_000;
const noon = { start: '11:00', end: '13:00', timezone: 'UTC' };
const night = { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' }; // 13:00 in Berlin: not quiet
const stale = (extra: Partial<StalenessFacts> = {}): StalenessFacts => ({ discoveryEnabled: true, lastActivatedAt: t(-600), minIntervalMs: 15 * 60_000, contributionsLeftToday: 10, ...extra });
const no = (reason: 'discovery_off' | 'paused' | 'quiet_hours' | 'daily_limit'): Verdict => ({ eligible: false, reason });
const yes: Verdict = { eligible: true };

describe('may this agent run now', () => {
  it.each<[string, EligibilityFacts, Verdict]>([
    // [what, facts, verdict]
    // The intake round: paused, backoff, quiet hours; then the budget alone.
    ['nothing holds a notification run back', { trigger: 'notification', paused: false, backoffUntil: undefined, quietHours: night }, yes],
    ['paused', { trigger: 'notification', paused: true }, no('paused')],
    ['backing off', { trigger: 'notification', backoffUntil: t(10) }, { eligible: false, reason: 'backoff', until: t(10) }],
    ['a backoff that has ended', { trigger: 'notification', backoffUntil: t(-1) }, yes],
    ['a backoff ending right now', { trigger: 'notification', backoffUntil: now.getTime() }, yes],
    ['inside quiet hours', { trigger: 'notification', quietHours: noon }, no('quiet_hours')],
    ['outside quiet hours in the agent\'s own zone', { trigger: 'notification', quietHours: night }, yes],
    ['paused and backing off: paused is the reason', { trigger: 'notification', paused: true, backoffUntil: t(10) }, no('paused')],
    ['backing off in quiet hours: the backoff is the reason', { trigger: 'notification', backoffUntil: t(10), quietHours: noon }, { eligible: false, reason: 'backoff', until: t(10) }],
    // The budget (docs/hub-api.md §5.6): notifications run until critical, exploration only while healthy.
    ['notification, budget healthy', { trigger: 'notification', budget: 'healthy' }, yes],
    ['notification, budget warning', { trigger: 'notification', budget: 'warning' }, yes],
    ['notification, budget throttle', { trigger: 'notification', budget: 'throttle' }, yes],
    ['notification, budget critical', { trigger: 'notification', budget: 'critical' }, { eligible: false, reason: 'budget', budget: 'critical' }],
    ['exploration, budget healthy', { trigger: 'exploration', budget: 'healthy' }, yes],
    ['exploration, budget warning', { trigger: 'exploration', budget: 'warning' }, { eligible: false, reason: 'budget', budget: 'warning' }],
    ['exploration, budget throttle', { trigger: 'exploration', budget: 'throttle' }, { eligible: false, reason: 'budget', budget: 'throttle' }],
    ['exploration, budget critical', { trigger: 'exploration', budget: 'critical' }, { eligible: false, reason: 'budget', budget: 'critical' }],
    ['the budget unknown (the hub did not answer): fail open', { trigger: 'exploration', budget: undefined }, yes],
    // The exploration round: staleness facts too.
    ['a stale agent explores', { trigger: 'exploration', paused: false, backoffUntil: 0, staleness: stale() }, yes],
    ['a never-run agent explores', { trigger: 'exploration', staleness: stale({ lastActivatedAt: undefined }) }, yes],
    ['discovery off', { trigger: 'exploration', staleness: stale({ discoveryEnabled: false }) }, no('discovery_off')],
    ['discovery off and paused: discovery off is the reason', { trigger: 'exploration', paused: true, staleness: stale({ discoveryEnabled: false }) }, no('discovery_off')],
    ['ran 10 minutes ago with a 15-minute gap', { trigger: 'exploration', staleness: stale({ lastActivatedAt: t(-10) }) }, { eligible: false, reason: 'min_interval', until: t(5) }],
    ['its gap has just passed', { trigger: 'exploration', staleness: stale({ lastActivatedAt: t(-15) }) }, yes],
    ['its gap passes in a millisecond', { trigger: 'exploration', staleness: stale({ lastActivatedAt: t(-15) + 1 }) }, { eligible: false, reason: 'min_interval', until: now.getTime() + 1 }],
    ['nothing left to write today', { trigger: 'exploration', staleness: stale({ contributionsLeftToday: 0 }) }, no('daily_limit')],
    ['the hub\'s own daily comment cap reached (Moltbook)', { trigger: 'exploration', staleness: stale({ hubCommentsLeftToday: 0 }) }, no('daily_limit')],
    ['the hub\'s cap not reached', { trigger: 'exploration', staleness: stale({ hubCommentsLeftToday: 3 }) }, yes],
    ['exploration in quiet hours', { trigger: 'exploration', quietHours: noon, staleness: stale() }, no('quiet_hours')],
    ['exploration while backing off', { trigger: 'exploration', backoffUntil: t(1), staleness: stale() }, { eligible: false, reason: 'backoff', until: t(1) }],
    // The worker as a queued run starts: paused and backoff only (quiet hours were asked when it was queued).
    ['a queued run of a paused agent', { trigger: 'exploration', paused: true, backoffUntil: undefined }, no('paused')],
    ['a queued run of a backing-off agent', { trigger: 'notification', paused: false, backoffUntil: t(30) }, { eligible: false, reason: 'backoff', until: t(30) }],
    // `warren status`: not runnable comes first.
    ['not runnable here', { trigger: 'notification', notRunnable: 'the goose CLI is not installed here', paused: true }, { eligible: false, reason: 'not_runnable', detail: 'the goose CLI is not installed here' }],
    ['its hub name is a human\'s', { trigger: 'notification', notRunnable: 'the hub name "greeter" belongs to a human', backoffUntil: t(5) }, { eligible: false, reason: 'not_runnable', detail: 'the hub name "greeter" belongs to a human' }],
    // A mention right after the agent answered: the intake round passes no staleness facts for a notification, so
    // min_interval_seconds never holds a mention back (docs/scheduling.md: it paces what an agent does on its own).
    ['a notification a second after the last run', { trigger: 'notification', paused: false, backoffUntil: undefined }, yes],
  ])('%s', (_what, facts, verdict) => {
    expect(mayRun(facts, now)).toEqual(verdict);
  });
});

describe('what min_interval_seconds delays', () => {
  it.each<[string, number, WriteOrigin, number]>([
    // [what, min_interval_seconds, the write's origin, the least gap before it in ms]
    ['the reply to a person who addressed the agent is not delayed', 60, 'reply_to_mention', 0],
    ['an exploration reply, a post or a tool\'s write is paced', 60, 'own_initiative', 60_000],
    ['a zero interval paces nothing', 0, 'own_initiative', 0],
  ])('%s', (_what, seconds, origin, gap) => {
    expect(minIntervalMs(seconds, origin)).toBe(gap);
  });
});
