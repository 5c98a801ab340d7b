// Schedules through real daemons: three daemons on one Redis and one hub, each with the schedule ticker on a clock the
// test advances (no minutes of waiting). Every tick of a cron of every minute is one activation, not three; a tick
// during a pause is held and, after a long pause, `missed` decides; after downtime `run_once` gives one run.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { ActivationOutcome } from '../activation/activation.ts';
import { startDaemon, type RunningDaemon } from '../daemon/daemon.ts';
import { createLogger } from '../daemon/logger.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { startTestHub, watchSessionCookie } from '../local-hub/testing.ts';
import type { FleetAgent } from '../local-hub/watch/fleet.ts';
import { readAgentStatuses } from '../daemon/ops/agent-statuses.ts';
import { fleetSource } from '../daemon/ops/fleet-source.ts';
import { formatStatus } from '../daemon/ops/status.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { TaskInbox } from '../scheduler/task-inbox.ts';
import { WarrenConfigSchema, type WarrenConfig } from '../services/config.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller, waitFor } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const at = (iso: string): number => Date.parse(iso);
/** How long a test waits at most for what a busy machine makes slow (an activation, a round). */
const WAIT_MS = 60_000;

function agentYaml(name: string, schedule: string): string {
  return `name: ${name}
type: llm
brain: {provider: scripted, model: m, responses: ["Done."]}
capabilities: {grants: [hub:read]}
schedules:
${schedule}
`;
}

interface Fleet {
  hub: RunningHub;
  config: WarrenConfig;
  clock: { now: number };
  outcomes: ActivationOutcome[];
  daemons: Array<{ daemon: RunningDaemon; logs: string[] }>;
  redis: Redis;
  start(): Promise<void>;
  stopAll(): Promise<void>;
  /** Resolves once every running daemon's ticker has done a round at the clock's time now (or later). */
  roundsAtNow(): Promise<void>;
  /** The task activations that ran a task, with the tick each was for (from the task text the agent was given). */
  runs(agent: string): string[];
}

async function fleet(agents: Record<string, string>, start: string): Promise<Fleet> {
  const hub: RunningHub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
  cleanups.push(() => hub.close());
  // A value that is a whole config.yaml is taken as it is; otherwise it is the `schedules:` list of a scripted agent.
  const agentsDir = makeAgentsDir(Object.fromEntries(Object.entries(agents).map(([n, s]) => [n, { config: s.startsWith('name:') ? s : agentYaml(n, s), prompt: 'You are {{name}}.' }])), { withGreeter: false });
  const config = WarrenConfigSchema.parse({
    hub: { url: hub.url, embedded: false },
    redis: { url: redisUrl, prefix: `sched-${randomUUID().slice(0, 8)}`, allow_unauthenticated: true },
    store: { path: agentsDir },
    scheduler: { poll_interval: '50ms' },
    workers: { concurrency: 2, shutdown_grace: '2s' },
    metrics: { enabled: false },
  });
  const redis = new Redis(redisUrl);
  cleanups.push(() => redis.quit());
  const f: Fleet = {
    hub,
    config,
    clock: { now: at(start) },
    outcomes: [],
    daemons: [],
    redis,
    async start() {
      const logs: string[] = [];
      const logger = createLogger({ level: 'debug', destination: new Writable({ write: (chunk: Buffer, _e, done) => (logs.push(chunk.toString()), done()) }) });
      const daemon = await startDaemon({ config, logger, env: { WARREN_HUB_ADMIN_KEY: hub.adminKey }, onOutcome: (o) => f.outcomes.push(o), hubMcp: null, scheduleClock: () => f.clock.now });
      cleanups.push(() => daemon.stop());
      f.daemons.push({ daemon, logs });
    },
    async stopAll() {
      for (const d of f.daemons.splice(0)) await d.daemon.stop();
    },
    async roundsAtNow() {
      const now = f.clock.now;
      const roundAt = (line: string): number | undefined => (line.includes('"msg":"schedule round"') ? Date.parse((JSON.parse(line) as { now: string }).now) : undefined);
      await waitFor('a schedule round of every daemon at the clock\'s time', () => (f.daemons.every((d) => d.logs.some((l) => (roundAt(l) ?? 0) >= now)) ? true : undefined), WAIT_MS);
    },
    runs(agent) {
      return f.outcomes
        .filter((o) => o.agent === agent && o.trigger === 'task' && o.reason !== 'no_task')
        .map((o) => /Scheduled task \\"[a-z-]+\\" \((\S+?)\)/.exec(JSON.stringify(o.events.find((e) => e.type === 'user_message')))?.[1] ?? `? ${o.outcome.kind} ${o.reason}`);
    },
  };
  return f;
}

/** Waits until nothing of `agent` is queued, running or waiting in its task inbox. */
async function settled(f: Fleet, agent: string): Promise<void> {
  const inbox = new TaskInbox(f.redis, f.config.redis.prefix);
  await waitFor(`${agent}'s tasks done`, async () => ((await inbox.pending(agent)) === 0 ? true : undefined), WAIT_MS);
}

describe('schedules in daemons', { timeout: PROCESS_TEST_MS }, () => {
  it('three daemons on one Redis, a cron of every minute over 10 ticks: exactly 10 activations, one per tick', async () => {
    const f = await fleet({ ticker: `  - {name: every-minute, cron: "* * * * *", task: "Say done."}` }, '2026-11-26T12:00:30Z');
    await Promise.all([f.start(), f.start(), f.start()]);
    await f.roundsAtNow(); // each has seen the schedule (nothing from before it runs)
    const ticks: string[] = [];
    for (let i = 1; i <= 10; i++) {
      const tick = at('2026-11-26T12:00:00Z') + i * 60_000;
      ticks.push(new Date(tick).toISOString());
      f.clock.now = tick + 500;
      await waitFor(`the activation of tick ${i}`, () => (f.runs('ticker').length >= i ? true : undefined), WAIT_MS);
    }
    // Every daemon has looked at the last tick too, and everything queued has run: no second run of any tick.
    await f.roundsAtNow();
    await settled(f, 'ticker');
    const queue = new ActivationQueue(f.redis, { prefix: f.config.redis.prefix, logger: createLogger({ level: 'silent' }) });
    cleanups.push(() => queue.close());
    await waitFor('the queue idle', async () => {
      const c = await queue.counts();
      return c.active + c.waiting + c.prioritized + c.delayed === 0 ? true : undefined;
    }, WAIT_MS);
    expect(f.runs('ticker')).toEqual(ticks);
    // Exactly 10 activations: no empty `task` activation (one that found its tick taken) beside them.
    expect(f.outcomes.filter((o) => o.agent === 'ticker').map((o) => `${o.trigger} ${o.outcome.kind} ${o.reason}`).filter((o) => !o.startsWith('task answered'))).toEqual([]);
    expect(f.outcomes.filter((o) => o.agent === 'ticker')).toHaveLength(10);
    // Each tick queued by one daemon only.
    const queued = f.daemons.flatMap((d) => d.logs.filter((l) => l.includes('"msg":"scheduled task queued"')));
    expect(queued).toHaveLength(10);

    // `warren status` and the watch page: the last tick queued, and the next one (from now, the real clock).
    const defs = f.daemons[0]!.daemon.registry.all();
    const sources = { redis: f.redis, prefix: f.config.redis.prefix, minStalenessMs: 60_000 };
    const status = await readAgentStatuses(sources, defs);
    const schedules = status.agents.find((a) => a.name === 'ticker')?.schedules;
    expect(schedules).toMatchObject([{ name: 'every-minute', cron: '* * * * *', timezone: 'UTC', missed: 'skip', last_at: ticks[9] }]);
    expect(Date.parse(schedules![0]!.next_at)).toBeGreaterThan(Date.now() - 1_000);
    expect(formatStatus({ redis: { url: redisUrl, ok: true }, hub: { url: 'hub', ok: true }, leader: null, queue: null, running: [], agents: status.agents, defined: 1, broken: 0 }, new Date())).toContain(`ticker/every-minute  * * * * * UTC`);
    const watch = await startTestHub({ fleet: fleetSource({ sources, definitions: () => defs, state: new AgentStateStore(f.redis, f.config.redis.prefix) }) });
    cleanups.push(() => watch.close());
    // Read as the page reads it: with the session the operator link gives.
    const fleetJson = (await (await fetch(`${watch.hub.url}/watch/api/fleet`, { headers: { cookie: await watchSessionCookie(watch.hub.watchUrl) } })).json()) as { agents: FleetAgent[] };
    const shown = fleetJson.agents.find((a) => a.name === 'ticker')?.schedules;
    expect(shown?.map(({ next_at: _next, ...rest }) => rest)).toEqual([{ name: 'every-minute', cron: '* * * * *', timezone: 'UTC', last_at: ticks[9] }]);
    expect(Date.parse(shown![0]!.next_at)).toBeGreaterThanOrEqual(Date.parse(schedules![0]!.next_at));
  });

  it('a tick during a pause is held; a long pause: run_once runs it once at resume, skip not at all', async () => {
    const f = await fleet(
      {
        oncer: `  - {name: digest, cron: "0 9 * * *", timezone: Europe/Berlin, task: "Digest.", missed: run_once}`,
        skipper: `  - {name: digest, cron: "0 9 * * *", timezone: Europe/Berlin, task: "Digest."}`,
      },
      '2026-11-26T07:00:00Z',
    );
    await f.start();
    await f.roundsAtNow();
    const state = new AgentStateStore(f.redis, f.config.redis.prefix);
    await state.setPaused('oncer', true);
    await state.setPaused('skipper', true);
    f.clock.now = at('2026-11-26T08:00:01Z'); // 09:00:01 in Berlin
    await f.roundsAtNow();
    f.clock.now = at('2026-11-26T08:30:00Z');
    await f.roundsAtNow();
    expect(f.runs('oncer')).toEqual([]);
    await state.setPaused('oncer', false);
    await state.setPaused('skipper', false);
    f.clock.now = at('2026-11-26T08:30:01Z');
    await waitFor('oncer\'s run at resume', () => (f.runs('oncer').length > 0 ? true : undefined), WAIT_MS);
    await f.roundsAtNow();
    await settled(f, 'oncer');
    expect(f.runs('oncer')).toEqual(['2026-11-26T08:00:00.000Z']);
    expect(f.runs('skipper')).toEqual([]);
    expect(f.daemons[0]!.logs.some((l) => l.includes('schedule skipper/digest: ticks missed'))).toBe(true);
  });

  it('missed: run_once after downtime gives one run (the newest tick); skip gives none', async () => {
    const f = await fleet(
      {
        oncer: `  - {name: digest, cron: "0 9 * * *", timezone: Europe/Berlin, task: "Digest.", missed: run_once}`,
        skipper: `  - {name: digest, cron: "0 9 * * *", timezone: Europe/Berlin, task: "Digest."}`,
      },
      '2026-11-24T06:00:00Z',
    );
    await f.start();
    await f.roundsAtNow();
    await f.stopAll();
    f.clock.now = at('2026-11-26T10:00:00Z'); // three 09:00s passed with no daemon
    await Promise.all([f.start(), f.start()]);
    await waitFor('oncer\'s one run', () => (f.runs('oncer').length > 0 ? true : undefined), WAIT_MS);
    f.clock.now += 60_000;
    await f.roundsAtNow();
    await settled(f, 'oncer');
    expect(f.runs('oncer')).toEqual(['2026-11-26T08:00:00.000Z']);
    expect(f.runs('skipper')).toEqual([]);
  });

  it('the daily digest of the README at 09:00 Berlin: one post on the hub at the tick, with two daemons', async () => {
    const digest = `name: digest
type: llm
brain:
  provider: scripted
  model: m
  responses:
    - tool_calls: [{name: hub_post, arguments: {title: Digest, content: "Today in m/general: quiet.", community: m/general}}]
    - Posted the digest.
capabilities: {grants: [hub:read, hub:write]}
schedules:
  - name: morning
    cron: "0 9 * * *"
    timezone: Europe/Berlin
    task: Post a short digest of m/general to m/general with hub_post.
    missed: run_once
`;
    const f = await fleet({ digest }, '2026-11-26T07:59:58Z'); // 08:59:58 in Berlin
    await Promise.all([f.start(), f.start()]);
    await f.roundsAtNow();
    const api = hubCaller(f.hub.url);
    const posts = async (): Promise<Array<{ title: string; author: { name: string } }>> => (await api.get<{ posts: Array<{ title: string; author: { name: string } }> }>('/posts?community=m/general&limit=50', f.hub.adminKey)).posts.filter((p) => p.author.name === 'digest');
    expect(await posts()).toEqual([]);
    f.clock.now = at('2026-11-26T08:00:00.300Z');
    await waitFor('the digest on the hub', async () => ((await posts()).length > 0 ? true : undefined), WAIT_MS);
    f.clock.now += 60_000;
    await f.roundsAtNow();
    await settled(f, 'digest');
    expect((await posts()).map((p) => p.title)).toEqual(['Digest']);
    expect(f.runs('digest')).toEqual(['2026-11-26T08:00:00.000Z']);
  });
});
