// The schedule ticker: every round, each schedule of each runnable agent is decided (schedule-ticks.ts) and each tick
// to run becomes one task in the agent's inbox, id `schedule:<name>:<tick epoch ms>`, then one enqueue of the
// agent: the run goes through the same queue, limits, budget and failure policy as every other activation. Every
// daemon that schedules runs a ticker; the inbox's add, idempotent by id, makes a tick one task however many decide
// it. The clock is injected: tests advance it instead of waiting for the minute.
import type { Logger } from 'pino';
import type { AgentDefinition } from '../store/definition.ts';
import type { ActivationQueue } from './activation-queue.ts';
import type { AgentStateStore } from './agent-state.ts';
import { mayRun } from './eligibility.ts';
import { decideTicks, nextTick, type TickHold } from './schedule-ticks.ts';
import { scheduleField, type ScheduleStateStore } from './schedule-state.ts';
import type { AgentTask, TaskInbox } from './task-inbox.ts';
import { RoundLoop } from './round-loop.ts';

export interface ScheduleTickerOptions {
  /** The loaded definitions (read each round: schedules reload with them). */
  definitions: () => readonly AgentDefinition[];
  /** Agents this daemon runs: only their schedules tick. */
  runnable: () => ReadonlySet<string>;
  state: ScheduleStateStore;
  agentState: Pick<AgentStateStore, 'holdMany' | 'once'>;
  inbox: Pick<TaskInbox, 'add'>;
  queue: Pick<ActivationQueue, 'enqueue'>;
  /** The process's redaction: a task text goes to Redis and into a prompt. */
  redact: (text: string) => string;
  /** Epoch ms now; Date.now in production. */
  clock?: () => number;
  logger: Logger;
}

/** One tick queued by a round. */
export interface FiredTick {
  agent: string;
  schedule: string;
  tick: number;
  added: boolean;
}

/** A round every second: a tick runs within about a second of its time. */
const ROUND_MS = 1_000;
/** How long a missed tick's log line is said once for (every daemon decides it). */
const MISSED_NOTE_TTL_MS = 86_400_000;

export function scheduleTaskId(schedule: string, tick: number): string {
  return `schedule:${schedule}:${tick}`;
}

export class ScheduleTicker {
  readonly #opts: ScheduleTickerOptions;
  readonly #clock: () => number;
  readonly #loop: RoundLoop;
  /** The schedules of the last round, to forget those no longer defined when the set changes. */
  #fields: string | undefined;
  /**
   * Per schedule, its next tick after a time this ticker decided at (`from`): until then no tick is due, and a round
   * skips reading the cron (reading one costs about a millisecond; a round looks at every schedule every second).
   */
  readonly #quietUntil = new Map<string, { spec: string; from: number; until: number }>();

  constructor(opts: ScheduleTickerOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? Date.now;
    this.#loop = new RoundLoop(() => this.round(), ROUND_MS, (err) => opts.logger.warn({ err }, 'schedule round failed; will retry'));
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One round: decides every schedule of the runnable agents and queues the ticks due. */
  async round(): Promise<FiredTick[]> {
    const { state, agentState, logger } = this.#opts;
    const now = this.#clock();
    const runnable = this.#opts.runnable();
    await this.#forgetRemoved();
    const defs = this.#opts.definitions().filter((d) => d.config.schedules.length > 0);
    const ticking = defs.filter((d) => runnable.has(d.name));
    if (ticking.length === 0) return [];
    const fields = ticking.flatMap((d) => d.config.schedules.map((s) => scheduleField(d.name, s.name)));
    const [readings, holds] = await Promise.all([state.read(fields), agentState.holdMany(ticking.map((d) => d.name))]);
    const checked = new Map<string, number>();
    const fired = new Map<string, number>();
    const out: FiredTick[] = [];
    for (const def of ticking) {
      // Paused or in quiet hours: the ticks wait (mayRun, the one decision; a backoff does not hold a tick: its task
      // waits in the inbox like any other work).
      const verdict = mayRun({ trigger: 'task', paused: holds.get(def.name)?.paused, quietHours: def.config.behavior.quiet_hours }, new Date(now));
      const hold: TickHold | undefined = !verdict.eligible && (verdict.reason === 'paused' || verdict.reason === 'quiet_hours') ? verdict.reason : undefined;
      for (const schedule of def.config.schedules) {
        const field = scheduleField(def.name, schedule.name);
        const reading = readings.get(field);
        const spec = `${schedule.cron}\t${schedule.timezone}`;
        const quiet = this.#quietUntil.get(field);
        const through = reading?.checkedThrough;
        // No tick in (checkedThrough, now]: what decideTicks would say, without reading the cron.
        if (!hold && quiet?.spec === spec && through !== undefined && through >= quiet.from && now < quiet.until) {
          checked.set(field, now);
          continue;
        }
        try {
          const d = decideTicks({ spec: schedule, checkedThrough: through, now, hold });
          if (d.kind === 'held') continue;
          let full = false;
          for (const tick of d.fire) {
            const result = await this.#opts.inbox.add(def.name, this.#task(schedule.name, schedule.task, tick));
            if (result === 'full') {
              // The agent has as many tasks waiting as it may: this tick is tried again next round (and counts as
              // missed once it is older than ON_TIME_MS), said once.
              full = true;
              if (await agentState.once(`schedule-full:${field}:${tick}`, MISSED_NOTE_TTL_MS)) logger.warn({ agent: def.name, schedule: schedule.name, tick: new Date(tick).toISOString() }, `schedule ${field}: the agent's task inbox is full; the tick waits`);
              break;
            }
            const added = result === 'added';
            // A duplicate was queued by whoever added it (or is queued again by the scheduler's pending-task round).
            if (added) await this.#opts.queue.enqueue(def.name, 'task');
            out.push({ agent: def.name, schedule: schedule.name, tick, added });
            if (added) logger.info({ agent: def.name, schedule: schedule.name, tick: new Date(tick).toISOString() }, 'scheduled task queued');
          }
          if (full) continue;
          const last = d.fire.at(-1);
          if (last !== undefined && last > (reading?.lastFired ?? 0)) fired.set(field, last);
          if (d.kind === 'due' && d.missed !== undefined && (await agentState.once(`schedule-missed:${field}:${d.missed}`, MISSED_NOTE_TTL_MS))) {
            const ran = d.fire.includes(d.missed) ? 'run once now' : d.fire.length ? 'an on-time tick runs instead' : 'skipped';
            logger.info({ agent: def.name, schedule: schedule.name, missed: new Date(d.missed).toISOString(), policy: schedule.missed }, `schedule ${field}: ticks missed since ${new Date(reading?.checkedThrough ?? now).toISOString()} (${schedule.missed}: ${ran})`);
          }
          // Only after its tasks are in the inbox: a round cut short here decides the same ticks again (same ids).
          checked.set(field, d.checkedThrough);
          this.#quietUntil.set(field, { spec, from: d.checkedThrough, until: nextTick(schedule, d.checkedThrough) });
        } catch (err) {
          // One broken schedule never stops the others; it is decided again next round.
          logger.warn({ err, agent: def.name, schedule: schedule.name }, 'could not queue a scheduled task');
        }
      }
    }
    await state.record(checked, fired);
    logger.debug({ now: new Date(now).toISOString(), schedules: fields.length, queued: out.filter((t) => t.added).length }, 'schedule round');
    return out;
  }

  /** A tick's task: its time is when it came (the inbox orders by it, and the run is told it). */
  #task(name: string, text: string, tick: number): AgentTask {
    return { id: scheduleTaskId(name, tick), source: 'schedule', name, text: this.#opts.redact(text), createdAt: tick };
  }

  /**
   * Drops the state of schedules an agent no longer defines. Only of agents loaded now: an agent missing from this
   * load (a store that could not be read) keeps its schedules' state.
   */
  async #forgetRemoved(): Promise<void> {
    const all = this.#opts.definitions();
    const defined = new Set(all.flatMap((d) => d.config.schedules.map((s) => scheduleField(d.name, s.name))));
    const key = [...defined].sort().join('\n');
    if (key === this.#fields) return;
    const loaded = new Set(all.map((d) => d.name));
    await this.#opts.state.forget((field) => loaded.has(field.slice(0, field.indexOf('/'))) && !defined.has(field));
    this.#fields = key;
    this.#quietUntil.clear();
  }
}
