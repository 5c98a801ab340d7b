// Schedules' ticks and which of them run (scheduler/schedule-ticks.ts), as tables: the cron's times in a time zone,
// daylight saving in Europe/Berlin included, and the decision on time / missed / held.
import { describe, expect, it } from 'vitest';
import { decideTicks, lastTickAtOrBefore, nextTick, ON_TIME_MS, ticksBetween, type ScheduleSpec, type TickFacts } from '../scheduler/schedule-ticks.ts';
import { cronProblem } from '../store/cron-expression.ts';

const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const BERLIN = 'Europe/Berlin';

describe('ticks of a cron in a time zone', () => {
  it.each<[string, string, string, string, string, string[]]>([
    // what, cron, zone, after, until, ticks (UTC)
    ['09:00 Berlin in winter is 08:00Z (CET)', '0 9 * * *', BERLIN, '2026-11-26T00:00:00Z', '2026-11-27T23:59:00Z', ['2026-11-26T08:00:00Z', '2026-11-27T08:00:00Z']],
    ['09:00 Berlin across the spring change: 08:00Z, then 07:00Z (CEST)', '0 9 * * *', BERLIN, '2026-03-28T00:00:00Z', '2026-03-29T23:00:00Z', ['2026-03-28T08:00:00Z', '2026-03-29T07:00:00Z']],
    ['02:30 does not exist on 29 March: it runs once, at 03:30 CEST', '30 2 * * *', BERLIN, '2026-03-28T12:00:00Z', '2026-03-30T12:00:00Z', ['2026-03-29T01:30:00Z', '2026-03-30T00:30:00Z']],
    ['02:30 happens twice on 25 October: it runs once, the first time (CEST)', '30 2 * * *', BERLIN, '2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z', ['2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z']],
    ['every 30 minutes runs through both 02:00 hours of 25 October', '*/30 * * * *', BERLIN, '2026-10-24T23:45:00Z', '2026-10-25T02:00:00Z', ['2026-10-25T00:00:00Z', '2026-10-25T00:30:00Z', '2026-10-25T01:00:00Z', '2026-10-25T01:30:00Z', '2026-10-25T02:00:00Z']],
    ['hourly skips the 02:00 that does not exist on 29 March', '0 * * * *', BERLIN, '2026-03-28T23:30:00Z', '2026-03-29T02:00:00Z', ['2026-03-29T00:00:00Z', '2026-03-29T01:00:00Z', '2026-03-29T02:00:00Z']],
    ['every minute in UTC; `after` itself is not a tick of the range', '* * * * *', 'UTC', '2026-11-26T12:00:00Z', '2026-11-26T12:03:00Z', ['2026-11-26T12:01:00Z', '2026-11-26T12:02:00Z', '2026-11-26T12:03:00Z']],
    ['weekdays at 09:00 New York: Friday, then Monday', '0 9 * * 1-5', 'America/New_York', '2026-11-27T00:00:00Z', '2026-12-01T00:00:00Z', ['2026-11-27T14:00:00Z', '2026-11-30T14:00:00Z']],
    ['half-hour zone: 09:00 Kolkata is 03:30Z', '0 9 * * *', 'Asia/Kolkata', '2026-11-26T00:00:00Z', '2026-11-26T23:00:00Z', ['2026-11-26T03:30:00Z']],
  ])('%s', (_what, cron, timezone, after, until, ticks) => {
    expect(ticksBetween({ cron, timezone }, at(after), at(until)).map(iso)).toEqual(ticks);
  });

  it('next and last: strictly after, and at or before', () => {
    const spec = { cron: '0 9 * * *', timezone: BERLIN };
    expect(iso(nextTick(spec, at('2026-11-26T08:00:00Z')))).toBe('2026-11-27T08:00:00Z');
    expect(iso(nextTick(spec, at('2026-11-26T07:59:59.999Z')))).toBe('2026-11-26T08:00:00Z');
    expect(iso(lastTickAtOrBefore(spec, at('2026-11-26T08:00:00Z')))).toBe('2026-11-26T08:00:00Z');
    expect(iso(lastTickAtOrBefore(spec, at('2026-11-26T07:59:59Z')))).toBe('2026-11-25T08:00:00Z');
  });
});

describe('which ticks run', () => {
  const everyMinute: ScheduleSpec = { cron: '* * * * *', timezone: 'UTC', missed: 'skip' };
  const digest: ScheduleSpec = { cron: '0 9 * * *', timezone: BERLIN, missed: 'skip' };
  const digestOnce: ScheduleSpec = { ...digest, missed: 'run_once' };
  const facts = (spec: ScheduleSpec, checked: string | undefined, now: string, hold?: TickFacts['hold']): TickFacts => ({ spec, checkedThrough: checked === undefined ? undefined : at(checked), now: at(now), hold });

  it.each<[string, TickFacts, { kind: string; fire: string[]; missed?: string }]>([
    ['a new schedule starts now: earlier ticks are not its own', facts(digestOnce, undefined, '2026-11-26T12:00:00Z'), { kind: 'first_seen', fire: [] }],
    ['a tick since the last round runs', facts(everyMinute, '2026-11-26T12:00:30Z', '2026-11-26T12:01:00.200Z'), { kind: 'due', fire: ['2026-11-26T12:01:00Z'] }],
    ['a tick the last round already looked at does not run again', facts(everyMinute, '2026-11-26T12:01:00Z', '2026-11-26T12:01:00.900Z'), { kind: 'due', fire: [] }],
    ['two ticks since a slow round both run (each is on time)', facts(everyMinute, '2026-11-26T12:00:30Z', '2026-11-26T12:02:10Z'), { kind: 'due', fire: ['2026-11-26T12:01:00Z', '2026-11-26T12:02:00Z'] }],
    ['a daemon back within two minutes runs the tick it was down for', facts(digest, '2026-11-26T07:59:00Z', '2026-11-26T08:01:30Z'), { kind: 'due', fire: ['2026-11-26T08:00:00Z'] }],
    ['downtime over three 09:00s, skip: none runs', facts(digest, '2026-11-24T06:00:00Z', '2026-11-26T09:00:00Z'), { kind: 'due', fire: [], missed: '2026-11-26T08:00:00Z' }],
    ['downtime over three 09:00s, run_once: the newest runs, once', facts(digestOnce, '2026-11-24T06:00:00Z', '2026-11-26T09:00:00Z'), { kind: 'due', fire: ['2026-11-26T08:00:00Z'], missed: '2026-11-26T08:00:00Z' }],
    ['downtime with ticks on time too: those run, and stand for the missed ones', facts({ ...everyMinute, missed: 'run_once' }, '2026-11-26T11:00:00Z', '2026-11-26T12:00:30Z'), { kind: 'due', fire: ['2026-11-26T11:59:00Z', '2026-11-26T12:00:00Z'], missed: '2026-11-26T11:58:00Z' }],
    ['paused: nothing runs and the ticks wait', facts(everyMinute, '2026-11-26T12:00:30Z', '2026-11-26T12:05:00Z', 'paused'), { kind: 'held', fire: [] }],
    ['in quiet hours: the same', facts(digestOnce, '2026-11-26T07:00:00Z', '2026-11-26T08:00:30Z', 'quiet_hours'), { kind: 'held', fire: [] }],
    ['after a long pause, skip: the 09:00 that fell in it is missed', facts(digest, '2026-11-26T07:00:00Z', '2026-11-26T10:00:00Z'), { kind: 'due', fire: [], missed: '2026-11-26T08:00:00Z' }],
    ['after a long pause, run_once: it runs when the pause ends', facts(digestOnce, '2026-11-26T07:00:00Z', '2026-11-26T10:00:00Z'), { kind: 'due', fire: ['2026-11-26T08:00:00Z'], missed: '2026-11-26T08:00:00Z' }],
  ])('%s', (_what, f, expected) => {
    const d = decideTicks(f);
    expect({ kind: d.kind, fire: d.fire.map(iso), ...(d.kind === 'due' && d.missed !== undefined ? { missed: iso(d.missed) } : {}) }).toEqual(expected);
    if (d.kind !== 'held') expect(d.checkedThrough).toBe(f.now);
  });

  it('counts a tick as missed only once it is more than ON_TIME_MS old', () => {
    const tick = at('2026-11-26T08:00:00Z');
    const checked = '2026-11-26T07:00:00Z';
    expect(decideTicks(facts(digest, checked, iso(tick + ON_TIME_MS)))).toMatchObject({ fire: [tick], missed: undefined });
    expect(decideTicks(facts(digest, checked, iso(tick + ON_TIME_MS + 1)))).toMatchObject({ fire: [], missed: tick });
  });
});

describe('cron expressions a schedule accepts', () => {
  it.each<[string, string | undefined]>([
    ['0 9 * * *', undefined],
    ['*/15 8-18 * * MON-FRI', undefined],
    ['0 0 L * *', undefined],
    ['0 9 * *', 'expected five fields (minute, hour, day of month, month, day of week), like "0 9 * * 1-5"; got 4'],
    ['0 0 9 * * *', 'expected five fields (minute, hour, day of month, month, day of week), like "0 9 * * 1-5"; got 6'],
    ['@daily', 'expected five fields (minute, hour, day of month, month, day of week), like "0 9 * * 1-5"; got 1'],
    ['H 9 * * *', 'the minute field "H": H (a random value) is not standard cron'],
    ['0 25 * * *', 'not a valid cron expression: Constraint error, got value 25 expected range 0-23'],
    ['0 0 31 2 *', 'not a valid cron expression: Invalid explicit day of month definition'],
  ])('%s', (expr, problem) => {
    expect(cronProblem(expr)).toBe(problem);
  });
});
