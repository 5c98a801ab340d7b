// The schedule ticker against a real Redis, a real task inbox and the real queue, on a clock the test sets: ticks
// become tasks once however many tickers decide them, pauses and quiet hours hold them, `missed` decides after
// downtime, and schedules follow their definitions.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { ScheduleStateStore, scheduleField } from '../scheduler/schedule-state.ts';
import { ScheduleTicker, scheduleTaskId } from '../scheduler/schedule-ticker.ts';
import { TaskInbox, type AgentTask } from '../scheduler/task-inbox.ts';
import { AgentConfigSchema, type AgentConfigInput } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';

const redis = new Redis(inject('redisUrl'));
const queues: ActivationQueue[] = [];
afterAll(async () => {
  await Promise.all(queues.map((q) => q.close()));
  await redis.quit();
});

const silent = pino({ level: 'silent' });
const at = (iso: string): number => Date.parse(iso);
const SECRET = 'sk-schedule-secret-123456';

function agent(name: string, schedules: AgentConfigInput['schedules'], behavior: AgentConfigInput['behavior'] = {}): AgentDefinition {
  return { name, systemPrompt: 'You are {{name}}.', files: { config: 'config.yaml', prompt: 'system-prompt.md' }, config: AgentConfigSchema.parse({ name, type: 'llm', brain: { model: 'm' }, capabilities: {}, schedules, behavior }) };
}

interface World {
  prefix: string;
  inbox: TaskInbox;
  queue: ActivationQueue;
  state: ScheduleStateStore;
  agentState: AgentStateStore;
  clock: { now: number };
  logs: string[];
  ticker(defs: () => readonly AgentDefinition[], opts?: { inbox?: TaskInbox }): ScheduleTicker;
  /** Every task waiting for `name`, oldest first (claimed and settled, so the inbox is empty after). */
  drain(name: string): Promise<AgentTask[]>;
}

function world(start: string): World {
  const prefix = `sched-${randomUUID().slice(0, 8)}`;
  const inbox = new TaskInbox(redis, prefix);
  const queue = new ActivationQueue(redis, { prefix, logger: silent });
  queues.push(queue);
  const state = new ScheduleStateStore(redis, prefix);
  const agentState = new AgentStateStore(redis, prefix);
  const clock = { now: at(start) };
  const logs: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(line) });
  let activation = 0;
  return {
    prefix,
    inbox,
    queue,
    state,
    agentState,
    clock,
    logs,
    ticker: (defs, opts = {}) =>
      new ScheduleTicker({
        definitions: defs,
        runnable: () => new Set(defs().map((d) => d.name)),
        state,
        agentState,
        inbox: opts.inbox ?? inbox,
        queue,
        redact: (text) => text.replaceAll(SECRET, '[redacted]'),
        clock: () => clock.now,
        logger,
      }),
    async drain(name) {
      const out: AgentTask[] = [];
      for (;;) {
        const claimed = await inbox.next(name, `activation-${++activation}`, 60_000);
        if (!claimed) return out;
        out.push(claimed.task);
        await inbox.settle(name, claimed.task.id);
      }
    },
  };
}

describe('schedule ticker', () => {
  it('three tickers on one Redis, a cron of every minute over 10 ticks: 10 tasks, each added once, the agent queued', async () => {
    const w = world('2026-11-26T12:00:30Z');
    const defs = [agent('minutely', [{ name: 'every-minute', cron: '* * * * *', task: 'Count to one.' }])];
    const tickers = [w.ticker(() => defs), w.ticker(() => defs), w.ticker(() => defs)];
    // The first look starts the schedule: nothing from before it runs.
    expect((await Promise.all(tickers.map((t) => t.round()))).flat()).toEqual([]);
    const expected: string[] = [];
    for (let i = 1; i <= 10; i++) {
      const tick = at('2026-11-26T12:00:00Z') + i * 60_000;
      expected.push(scheduleTaskId('every-minute', tick));
      w.clock.now = tick + 400; // the three rounds of this second
      const fired = (await Promise.all(tickers.map((t) => t.round()))).flat();
      // Whichever of them decides it (a round that reads after another's write sees it done), one adds it.
      expect(new Set(fired.map((f) => f.tick))).toEqual(new Set([tick]));
      expect(fired.filter((f) => f.added)).toHaveLength(1);
    }
    const tasks = await w.drain('minutely');
    expect(tasks.map((t) => t.id)).toEqual(expected);
    expect(tasks[0]).toEqual({ id: expected[0], source: 'schedule', name: 'every-minute', text: 'Count to one.', createdAt: at('2026-11-26T12:01:00Z') });
    // One activation job for the agent: the enqueues were absorbed by it (one running plus one pending at most).
    const jobs = await w.queue.queue.getJobs(['prioritized', 'waiting']);
    expect(jobs.map((j) => [j.data.agent, j.data.trigger])).toEqual([['minutely', 'task']]);
    expect(w.logs.filter((l) => l.includes('"msg":"scheduled task queued"'))).toHaveLength(10);
  });

  it('a tick during a pause waits: run at once on a short pause; after a long one, `missed` decides', async () => {
    const w = world('2026-11-26T07:00:00Z');
    const defs = [agent('skipper', [{ name: 'digest', cron: '0 9 * * *', timezone: 'Europe/Berlin', task: 'Digest.' }]), agent('oncer', [{ name: 'digest', cron: '0 9 * * *', timezone: 'Europe/Berlin', task: 'Digest.', missed: 'run_once' }]), agent('shorty', [{ name: 'digest', cron: '0 9 * * *', timezone: 'Europe/Berlin', task: 'Digest.' }])];
    const t = w.ticker(() => defs);
    await t.round();
    for (const d of defs) await w.agentState.setPaused(d.name, true);
    w.clock.now = at('2026-11-26T08:00:00.500Z'); // 09:00 Berlin: all paused
    expect(await t.round()).toEqual([]);
    // shorty is resumed a minute later: its tick is on time, and runs.
    await w.agentState.setPaused('shorty', false);
    w.clock.now = at('2026-11-26T08:01:00Z');
    expect(await t.round()).toEqual([{ agent: 'shorty', schedule: 'digest', tick: at('2026-11-26T08:00:00Z'), added: true }]);
    // The others an hour later: skip runs nothing, run_once the 09:00 tick, once.
    await w.agentState.setPaused('skipper', false);
    await w.agentState.setPaused('oncer', false);
    w.clock.now = at('2026-11-26T09:00:00Z');
    expect(await t.round()).toEqual([{ agent: 'oncer', schedule: 'digest', tick: at('2026-11-26T08:00:00Z'), added: true }]);
    w.clock.now += 1_000;
    expect(await t.round()).toEqual([]);
    expect((await w.drain('oncer')).map((x) => x.id)).toEqual([scheduleTaskId('digest', at('2026-11-26T08:00:00Z'))]);
    expect(await w.drain('skipper')).toEqual([]);
    expect(w.logs.some((l) => l.includes('schedule skipper/digest: ticks missed') && l.includes('(skip: skipped)'))).toBe(true);
    expect(w.logs.some((l) => l.includes('schedule oncer/digest: ticks missed') && l.includes('(run_once: run once now)'))).toBe(true);
  });

  it('quiet hours hold a tick like a pause: at their end, run_once runs it', async () => {
    const w = world('2026-11-26T07:00:00Z');
    const quiet = { quiet_hours: { start: '08:30', end: '09:30', timezone: 'Europe/Berlin' } };
    const defs = [agent('night-owl', [{ name: 'digest', cron: '0 9 * * *', timezone: 'Europe/Berlin', task: 'Digest.', missed: 'run_once' }], quiet)];
    const t = w.ticker(() => defs);
    await t.round();
    w.clock.now = at('2026-11-26T08:00:01Z'); // 09:00:01 Berlin, inside the window
    expect(await t.round()).toEqual([]);
    w.clock.now = at('2026-11-26T08:29:59Z'); // still inside
    expect(await t.round()).toEqual([]);
    w.clock.now = at('2026-11-26T08:30:05Z'); // 09:30:05: the window is over
    expect(await t.round()).toEqual([{ agent: 'night-owl', schedule: 'digest', tick: at('2026-11-26T08:00:00Z'), added: true }]);
  });

  it('missed: run_once after two days without a daemon gives one run (the newest tick); skip gives none', async () => {
    const w = world('2026-11-24T06:00:00Z');
    const defs = [agent('oncer', [{ name: 'digest', cron: '0 9 * * *', timezone: 'Europe/Berlin', task: 'Digest.', missed: 'run_once' }]), agent('skipper', [{ name: 'digest', cron: '0 9 * * *', timezone: 'Europe/Berlin', task: 'Digest.' }])];
    await w.ticker(() => defs).round(); // a daemon sees the schedules, then stops
    w.clock.now = at('2026-11-26T10:00:00Z'); // back two days and a bit later (three 09:00s missed)
    const back = [w.ticker(() => defs), w.ticker(() => defs)];
    const fired = (await Promise.all(back.map((t) => t.round()))).flat();
    expect(fired.filter((f) => f.added)).toEqual([{ agent: 'oncer', schedule: 'digest', tick: at('2026-11-26T08:00:00Z'), added: true }]);
    w.clock.now += 60_000;
    expect((await Promise.all(back.map((t) => t.round()))).flat()).toEqual([]);
    expect((await w.drain('oncer')).map((x) => x.id)).toEqual([scheduleTaskId('digest', at('2026-11-26T08:00:00Z'))]);
    expect(await w.drain('skipper')).toEqual([]);
  });

  it('follows the definitions: an edited cron applies from its next tick; a removed schedule is forgotten, and starts afresh when back', async () => {
    const w = world('2026-11-26T12:00:30Z');
    let defs = [agent('editor', [{ name: 'report', cron: '*/5 * * * *', task: 'Report.', missed: 'run_once' }])];
    const t = w.ticker(() => defs);
    await t.round();
    w.clock.now = at('2026-11-26T12:05:00.300Z');
    expect((await t.round()).map((f) => f.tick)).toEqual([at('2026-11-26T12:05:00Z')]);
    defs = [agent('editor', [{ name: 'report', cron: '*/2 * * * *', task: 'Report.', missed: 'run_once' }])];
    w.clock.now = at('2026-11-26T12:06:00.300Z');
    expect((await t.round()).map((f) => f.tick)).toEqual([at('2026-11-26T12:06:00Z')]);
    defs = [agent('editor', [])];
    await t.round();
    expect(await w.state.read([scheduleField('editor', 'report')])).toEqual(new Map([[scheduleField('editor', 'report'), { checkedThrough: undefined, lastFired: undefined }]]));
    // Back a day later: no missed run for the day it was gone.
    w.clock.now = at('2026-11-27T12:00:30Z');
    defs = [agent('editor', [{ name: 'report', cron: '*/2 * * * *', task: 'Report.', missed: 'run_once' }])];
    expect(await t.round()).toEqual([]);
  });

  it('a task text is redacted before it reaches Redis', async () => {
    const w = world('2026-11-26T12:00:30Z');
    const defs = [agent('leaky', [{ name: 'ping', cron: '* * * * *', task: `Call the API with ${SECRET} and report.` }])];
    const t = w.ticker(() => defs);
    await t.round();
    w.clock.now = at('2026-11-26T12:01:00.100Z');
    await t.round();
    const [task] = await w.drain('leaky');
    expect(task?.text).toBe('Call the API with [redacted] and report.');
    expect(JSON.stringify(await redis.hgetall(`${w.prefix}:task-bodies:leaky`))).not.toContain(SECRET);
  });

  it('a full inbox makes the tick wait, said once; it is added when there is room', async () => {
    const w = world('2026-11-26T12:00:30Z');
    const small = new TaskInbox(redis, w.prefix, { maxPending: 1 });
    await small.add('busy', { id: 'webhook:x:1', source: 'webhook', name: 'x', text: 'earlier work', createdAt: w.clock.now });
    const defs = [agent('busy', [{ name: 'tick', cron: '* * * * *', task: 'Tick.' }])];
    const t = w.ticker(() => defs, { inbox: small });
    await t.round();
    w.clock.now = at('2026-11-26T12:01:00.100Z');
    expect(await t.round()).toEqual([]);
    w.clock.now += 1_000;
    expect(await t.round()).toEqual([]);
    expect(w.logs.filter((l) => l.includes('task inbox is full'))).toHaveLength(1);
    await small.settle('busy', 'webhook:x:1');
    w.clock.now += 1_000;
    expect(await t.round()).toEqual([{ agent: 'busy', schedule: 'tick', tick: at('2026-11-26T12:01:00Z'), added: true }]);
  });

  it('one schedule that cannot be read does not stop the others', async () => {
    const w = world('2026-11-26T12:00:30Z');
    const good = agent('good', [{ name: 'tick', cron: '* * * * *', task: 'Tick.' }]);
    const bad = agent('bad', [{ name: 'tick', cron: '* * * * *', task: 'Tick.' }]);
    // Past the schema (which refuses it), as a definition read by an older, laxer warren could be.
    const broken: AgentDefinition = { ...bad, config: { ...bad.config, schedules: [{ ...bad.config.schedules[0]!, cron: 'not a cron' }] } };
    const t = w.ticker(() => [broken, good]);
    await t.round();
    w.clock.now = at('2026-11-26T12:01:00.100Z');
    expect(await t.round()).toEqual([{ agent: 'good', schedule: 'tick', tick: at('2026-11-26T12:01:00Z'), added: true }]);
    expect(w.logs.some((l) => l.includes('could not queue a scheduled task') && l.includes('"agent":"bad"'))).toBe(true);
  });
});
