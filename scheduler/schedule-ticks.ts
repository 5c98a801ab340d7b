// Which ticks of a schedule run now (pure): the ticks of its cron since the last round that looked at it, split into
// those on time and those missed (they fell while no daemon ran, or while the agent was paused or in quiet hours).
// Every daemon decides the same from the same facts, and a tick's task id is made from its time, so the inbox's
// idempotent add makes each tick one run however many daemons decide it.
import { cronFrom } from '../store/cron-expression.ts';

export interface ScheduleSpec {
  cron: string;
  /** IANA name; ticks are local times there, daylight saving as cron-parser (and cron) handles it. */
  timezone: string;
  missed: 'skip' | 'run_once';
}

/** A tick no later than this after its time is on time; older ones were missed. */
export const ON_TIME_MS = 120_000;

/** At most this many ticks are looked at per decision: a cron of every minute with a long `ON_TIME_MS` stays bounded. */
const MAX_TICKS = 10;

/** The ticks of `spec` in (after, until], oldest first, at most `limit`. */
export function ticksBetween(spec: Pick<ScheduleSpec, 'cron' | 'timezone'>, after: number, until: number, limit = MAX_TICKS): number[] {
  const it = cronFrom(spec.cron, spec.timezone, after);
  const out: number[] = [];
  while (out.length < limit) {
    const t = it.next().getTime();
    if (t > until) break;
    out.push(t);
  }
  return out;
}

/** The first tick strictly after `after`. */
export function nextTick(spec: Pick<ScheduleSpec, 'cron' | 'timezone'>, after: number): number {
  return cronFrom(spec.cron, spec.timezone, after).next().getTime();
}

/** The last tick at or before `at`. */
export function lastTickAtOrBefore(spec: Pick<ScheduleSpec, 'cron' | 'timezone'>, at: number): number {
  return cronFrom(spec.cron, spec.timezone, at + 1).prev().getTime();
}

/** Why a schedule's ticks wait: the agent is paused, or in its quiet hours. */
export type TickHold = 'paused' | 'quiet_hours';

export interface TickFacts {
  spec: ScheduleSpec;
  /** Epoch ms up to which an earlier round looked at this schedule; undefined: never (a new schedule). */
  checkedThrough: number | undefined;
  now: number;
  /** Set while the agent may not run: nothing fires and the ticks wait, to be judged once the hold ends. */
  hold?: TickHold;
}

export type TickDecision =
  /** A new schedule starts from now: ticks before it was defined are not its own. */
  | { kind: 'first_seen'; fire: []; checkedThrough: number }
  /** Held back: the ticks since `checkedThrough` are judged when the hold ends (then they are on time, or missed). */
  | { kind: 'held'; hold: TickHold; fire: [] }
  /**
   * `fire`: the ticks to run, oldest first: every tick on time, else (`run_once`) the newest missed one, else none.
   * `missed`: the newest tick that fell before ON_TIME_MS, if any (whether or not it runs).
   */
  | { kind: 'due'; fire: number[]; missed: number | undefined; checkedThrough: number };

export function decideTicks(f: TickFacts): TickDecision {
  if (f.checkedThrough === undefined) return { kind: 'first_seen', fire: [], checkedThrough: f.now };
  if (f.hold) return { kind: 'held', hold: f.hold, fire: [] };
  // Missed: a tick in (checkedThrough, missedUntil], older than ON_TIME_MS; the newest of them is the one `run_once` runs.
  const missedUntil = f.now - ON_TIME_MS - 1;
  const from = Math.max(f.checkedThrough, missedUntil);
  const onTime = f.now > from ? ticksBetween(f.spec, from, f.now) : [];
  const missed = f.checkedThrough < missedUntil ? lastTickAtOrBefore(f.spec, missedUntil) : undefined;
  const newestMissed = missed !== undefined && missed > f.checkedThrough ? missed : undefined;
  // After downtime, one run either way: an on-time tick stands for the missed ones too.
  const fire = onTime.length > 0 ? onTime : newestMissed !== undefined && f.spec.missed === 'run_once' ? [newestMissed] : [];
  return { kind: 'due', fire, missed: newestMissed, checkedThrough: f.now };
}
