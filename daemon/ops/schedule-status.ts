// Each schedule's next and last run, for `warren status` and the watch page: the next tick from the cron
// (scheduler/schedule-ticks.ts), the last one queued from Redis (scheduler/schedule-state.ts).
import type { RedisClient } from '../../redis/scripts.ts';
import { nextTick } from '../../scheduler/schedule-ticks.ts';
import { scheduleField, ScheduleStateStore, type ScheduleReading } from '../../scheduler/schedule-state.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import type { KeySpace } from '../../redis/key-layout.ts';

export interface ScheduleStatus {
  name: string;
  cron: string;
  timezone: string;
  missed: 'skip' | 'run_once';
  /** The next tick (ISO); a paused agent's, or one in quiet hours, waits for the hold to end. */
  next_at: string;
  /** The last tick queued as a task (ISO); null when none was yet. */
  last_at: string | null;
}

/** The schedules of `def` at `now` (pure). */
export function scheduleStatuses(def: AgentDefinition, readings: ReadonlyMap<string, ScheduleReading>, now: Date): ScheduleStatus[] {
  return def.config.schedules.map((s) => {
    const last = readings.get(scheduleField(def.name, s.name))?.lastFired;
    return { name: s.name, cron: s.cron, timezone: s.timezone, missed: s.missed, next_at: new Date(nextTick(s, now.getTime())).toISOString(), last_at: last === undefined ? null : new Date(last).toISOString() };
  });
}

/** Every defined schedule's reading, by agent (agents without schedules are left out). */
export async function readScheduleStatuses(redis: RedisClient, prefix: KeySpace, defs: readonly AgentDefinition[], now: Date): Promise<Map<string, ScheduleStatus[]>> {
  const scheduled = defs.filter((d) => d.config.schedules.length > 0);
  const readings = await new ScheduleStateStore(redis, prefix).read(scheduled.flatMap((d) => d.config.schedules.map((s) => scheduleField(d.name, s.name))));
  return new Map(scheduled.map((d) => [d.name, scheduleStatuses(d, readings, now)]));
}

/** Why an agent's ticks wait now, from its state (status.ts): none, paused, or quiet hours. */
function heldBy(state: string): string {
  return state === 'paused' ? ' (held: paused)' : state === 'quiet_hours' ? ' (held: quiet hours)' : '';
}

/** The SCHEDULE table of `warren status`: one row per schedule, times in UTC like the rest of the report. */
export function scheduleRows(agents: ReadonlyArray<{ name: string; state: string; schedules?: readonly ScheduleStatus[] }>): string[][] {
  const utc = (iso: string): string => `${iso.replace('T', ' ').slice(0, 16)}Z`;
  return agents.flatMap((a) => (a.schedules ?? []).map((s) => [`${a.name}/${s.name}`, `${s.cron} ${s.timezone}`, `${utc(s.next_at)}${heldBy(a.state)}`, s.last_at ? utc(s.last_at) : 'never', s.missed]));
}
