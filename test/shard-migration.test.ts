// `warren shards migrate` (daemon/shards/shard-migration.ts) as an operator runs it: state laid out by the real
// stores under one shard (queued, delayed and stalled activations with a kept follow-up, tasks, paused and failing
// agents, day counters, records, held mentions, inbox holds), moved to three shards and back by the CLI. Every
// agent's job, key, hash field, set member and record must sit in its agent's shard afterwards, once, unchanged.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivationRecords, type ActivationRecord } from '../activation/activation-records.ts';
import { migrationPlan, ShardMigrationRefused } from '../daemon/shards/shard-migration.ts';
import { openQueueReader } from '../daemon/shards/queue-reader.ts';
import { fieldAgent, keyKind } from '../redis/key-kinds.ts';
import { layoutOf, type KeyLayout } from '../redis/key-layout.ts';
import { ACTIVATION_QUEUE, RedisKeys } from '../redis/keys.ts';
import type { RedisClient } from '../redis/scripts.ts';
import type { ActivationJob } from '../scheduler/activation-job.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { HeldMentionStore } from '../scheduler/held-mentions.ts';
import { InboxClaims } from '../scheduler/inbox-claims.ts';
import { TaskInbox } from '../scheduler/task-inbox.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { startPrivateRedisCluster, type PrivateRedisCluster } from './support/redis-cluster.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';
import { activationRecord } from './support/activation-record.ts';

const WARREN = resolve('bin/warren.js');
const run = promisify(execFile);
const logger = pino({ level: 'silent' });
const PENDING = ['wait', 'prioritized', 'delayed', 'active'] as const;

/** Spread over three shards: ada, bob, cyd → 0; eve → 1; dee, fay → 2 (checked below). */
const AGENTS = ['ada', 'bob', 'cyd', 'dee', 'eve', 'fay'];

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** `warren <args>` in a process of its own, with warren.yaml's `redis:` as given. */
async function warren(dir: string, redisYaml: string, args: string[]): Promise<CliResult> {
  const file = join(dir, 'warren.yaml');
  writeFileSync(file, `hub: {url: "http://127.0.0.1:9"}\nredis: ${redisYaml}\nstore: {path: agents}\n`);
  try {
    const r = await run(process.execPath, [WARREN, ...args, '--config', file], { timeout: PROCESS_START_MS, env: { ...process.env, REDIS_URL: '' } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function record(agent: string, i: number, held = false): ActivationRecord {
  return activationRecord({
    activation_id: `${held ? 'held' : 'act'}-${agent}-${i}`,
    agent,
    outcome: held ? 'no_action' : 'answered',
    reason: held ? 'held: quiet hours' : 'done',
    started_at: new Date(Date.UTC(2026, 10, 27, 1, 0, i * 7 + agent.charCodeAt(0) % 7)).toISOString(),
    duration_ms: 10,
  });
}

interface Laid {
  /** Per agent, the pending activation it must have after any migration. */
  jobs: Map<string, { trigger: ActivationJob['trigger']; enqueuedAt: number }>;
}

/** The fleet's state under one shard (the home prefix), laid out through the stores a daemon uses. */
async function layOut(redis: RedisClient, workerConn: RedisClient, prefix: string): Promise<Laid> {
  const queue = new ActivationQueue(redis, { prefix, logger });
  const worker = new Worker(ACTIVATION_QUEUE, null, { connection: workerConn, prefix, autorun: false });
  const jobs: Laid['jobs'] = new Map();
  let adaLock: string | undefined;
  const enqueuedAt = async (id: string | undefined): Promise<number> => ((await queue.queue.getJob(id!)) as Job<ActivationJob>).data.enqueuedAt;
  try {
    // ada: an activation taken by a worker of a daemon since stopped (stalled: active, its lock expired), with the
    // follow-up BullMQ keeps for after it (a task came during the run).
    const adaId = await queue.enqueue('ada', 'notification');
    const ada = (await worker.getNextJob('ada-token', { block: false })) as Job<ActivationJob>;
    expect(ada.id).toBe(adaId);
    adaLock = `${prefix}:${ACTIVATION_QUEUE}:${adaId}:lock`;
    await queue.enqueue('ada', 'task');
    expect(await redis.exists(new RedisKeys(prefix).dedup('ada').next)).toBe(1);
    jobs.set('ada', { trigger: 'notification', enqueuedAt: await enqueuedAt(adaId) });
    // cyd: a failed attempt waiting out its retry delay.
    const cydId = await queue.enqueue('cyd', 'exploration');
    const cyd = (await worker.getNextJob('cyd-token', { block: false })) as Job<ActivationJob>;
    expect(cyd.id).toBe(cydId);
    await cyd.moveToDelayed(Date.now() + 3_600_000, 'cyd-token');
    jobs.set('cyd', { trigger: 'exploration', enqueuedAt: await enqueuedAt(cydId) });
    // The rest wait (bob twice: absorbed into one).
    for (const [agent, trigger] of [['bob', 'task'], ['bob', 'notification'], ['dee', 'notification'], ['eve', 'exploration']] as const) {
      const id = await queue.enqueue(agent, trigger);
      if (!jobs.has(agent)) jobs.set(agent, { trigger, enqueuedAt: await enqueuedAt(id) });
    }
    // fay has no job: only state.
  } finally {
    await worker.close();
    await queue.close();
  }
  // The stopped daemon's lock on ada's job has run out.
  expect(await redis.del(adaLock)).toBe(1);

  const tasks = new TaskInbox(redis, prefix);
  for (const agent of ['ada', 'dee', 'fay']) for (let i = 0; i < 2; i++) expect(await tasks.add(agent, { id: `webhook:h:${agent}-${i}`, source: 'webhook', name: 'h', text: `task ${i} of ${agent}`, createdAt: 1_764_000_000_000 + i })).toBe('added');
  const state = new AgentStateStore(redis, prefix);
  await state.setPaused('bob', true);
  await state.setPaused('eve', true);
  await state.recordFailure('dee', [60_000, 120_000]);
  await state.recordFailure('dee', [60_000, 120_000]);
  await state.recordFailure('fay', [3_600_000]);
  for (const agent of AGENTS) await state.recordActivated(agent, { tokensInput: 10, tokensOutput: 5, costUsd: 0.01 });
  const k = new RedisKeys(prefix);
  await redis.hset(k.scheduleFired, 'fay/digest', '1764201600000', 'eve/digest', '1764201600000');
  await new HeldMentionStore(redis, prefix).replace(new Map([['eve', { reason: 'quiet_hours', runs_at: new Date(Date.now() + 3_600_000).toISOString(), waiting: 2, since: new Date().toISOString() }]]));
  const records = new ActivationRecords(redis, prefix);
  for (let i = 0; i < 3; i++) for (const agent of AGENTS) await records.add(record(agent, i));
  await records.addHeld(record('eve', 9, true));
  await records.addHeld(record('bob', 9, true));
  // A run of dee's that read its inbox (a hold, with its TTL) when its daemon stopped.
  await new InboxClaims(redis, prefix).forRun('dee', '999', { token: 'attempt-1', started: 1 }, 600_000).open(3);
  // Fleet keys (HOME): never moved.
  await redis.set(k.once('final:act-1:1'), '1');
  await redis.zadd(k.approvalsOpen, 1, 'ap-1');
  return { jobs };
}

type Census = Map<string, Array<{ prefix: string; value: string; ttl: boolean }>>;

/** Every key under any of the prefixes (each master of a cluster), nested shard prefixes left to their own scan. */
async function keysUnder(redis: RedisClient, prefix: string, all: readonly string[]): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const nested = all.filter((o) => o !== prefix && o.startsWith(`${prefix}:`)).map((o) => `${o}:`);
  const out: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}:*`, 'COUNT', 1000);
      cursor = next;
      out.push(...keys.filter((key) => !nested.some((n) => key.startsWith(n))));
    } while (cursor !== '0');
  }
  return out;
}

/** A key's type and content, in an order that does not depend on how Redis encodes it. */
async function contentOf(redis: RedisClient, key: string): Promise<string> {
  const type = await redis.type(key);
  switch (type) {
    case 'string':
      return `string ${await redis.get(key)}`;
    case 'hash':
      return `hash ${JSON.stringify(Object.entries(await redis.hgetall(key)).sort())}`;
    case 'list':
      return `list ${JSON.stringify(await redis.lrange(key, 0, -1))}`;
    case 'set':
      return `set ${JSON.stringify((await redis.smembers(key)).sort())}`;
    case 'zset':
      return `zset ${JSON.stringify(await redis.zrange(key, 0, -1, 'WITHSCORES'))}`;
    default:
      throw new Error(`${key}: a ${type}, which warren does not make`);
  }
}

/**
 * Every agent's piece of state, wherever it is: whole keys by name (value: their content), hash fields and set members by key
 * name and field, records by their text, and which HOME keys are where. A piece met under two prefixes is doubled.
 */
async function census(redis: RedisClient, prefixes: readonly string[]): Promise<{ pieces: Census; agentOf: Map<string, string>; home: Map<string, string[]> }> {
  const pieces: Census = new Map();
  const agentOf = new Map<string, string>();
  const home = new Map<string, string[]>();
  const put = (id: string, agent: string, at: { prefix: string; value: string; ttl: boolean }): void => {
    agentOf.set(id, agent);
    pieces.set(id, [...(pieces.get(id) ?? []), at]);
  };
  for (const prefix of prefixes) {
    for (const key of await keysUnder(redis, prefix, prefixes)) {
      const rest = key.slice(prefix.length + 1);
      const kind = keyKind(rest);
      const ttl = (await redis.pttl(key)) > 0;
      switch (kind.kind) {
        case 'agent':
          put(`key ${rest}`, kind.agent, { prefix, value: await contentOf(redis, key), ttl });
          break;
        case 'agent-fields':
          for (const [field, value] of Object.entries(await redis.hgetall(key))) {
            const agent = fieldAgent(kind.fields, field, prefix);
            if (agent !== undefined) put(`field ${rest} ${kind.fields === 'key' ? field.slice(prefix.length) : field}`, agent, { prefix, value, ttl });
          }
          break;
        case 'agent-members':
          for (const m of await redis.smembers(key)) put(`member ${rest} ${m}`, m, { prefix, value: m, ttl });
          break;
        case 'all-records':
          for (const r of await redis.lrange(key, 0, -1)) put(`record ${rest} ${r}`, (JSON.parse(r) as { agent: string }).agent, { prefix, value: r, ttl });
          break;
        case 'stays':
          home.set(rest, [...(home.get(rest) ?? []), prefix]);
          break;
        case 'bullmq':
          break;
        case 'unknown':
          throw new Error(`a key no member of RedisKeys makes: ${key}`);
      }
    }
  }
  return { pieces, agentOf, home };
}

/** Every pending activation of the prefixes' queues. */
async function pendingJobs(redis: RedisClient, prefixes: readonly string[]): Promise<Array<{ prefix: string; agent: string; trigger: string; enqueuedAt: number }>> {
  const out: Array<{ prefix: string; agent: string; trigger: string; enqueuedAt: number }> = [];
  for (const prefix of prefixes) {
    const q = openQueueReader(redis, prefix); // an ActivationQueue would write its queue's meta hash
    try {
      for (const j of (await q.getJobs([...PENDING], 0, -1)) as Array<Job<ActivationJob>>) out.push({ prefix, agent: j.data.agent, trigger: j.data.trigger, enqueuedAt: j.data.enqueuedAt });
    } finally {
      await q.close();
    }
  }
  return out.sort((a, b) => a.agent.localeCompare(b.agent));
}

/** The state after a migration is the state before, each piece once and in its agent's shard of `layout`. */
function expectPlaced(before: Awaited<ReturnType<typeof census>>, after: Awaited<ReturnType<typeof census>>, layout: KeyLayout, homePrefix: string): void {
  expect([...after.pieces.keys()].sort()).toEqual([...before.pieces.keys()].sort());
  const misplaced: string[] = [];
  for (const [id, at] of after.pieces) {
    const was = before.pieces.get(id)!;
    const want = layout.of(after.agentOf.get(id)!).prefix;
    if (at.length !== 1) misplaced.push(`${id}: ${at.length} copies (${at.map((a) => a.prefix).join(', ')})`);
    else if (at[0]!.prefix !== want) misplaced.push(`${id}: under ${at[0]!.prefix}, not ${want}`);
    else if (at[0]!.value !== was[0]!.value && !id.startsWith('field record-bytes')) misplaced.push(`${id}: changed`);
    else if (at[0]!.ttl !== was[0]!.ttl) misplaced.push(`${id}: TTL ${was[0]!.ttl ? 'lost' : 'gained'}`);
  }
  expect(misplaced).toEqual([]);
  // The fleet's keys stay home; nothing of a shard is left under a prefix the layout does not use.
  for (const rest of ['once:final:act-1:1', 'approvals-open', 'shard-count']) expect(after.home.get(rest)).toEqual([homePrefix]);
  const used = new Set(layout.shards.map((s) => s.prefix));
  for (const [rest, where] of after.home) {
    const kind = keyKind(rest);
    if (kind.kind === 'stays' && kind.why === 'shard') expect(where.filter((w) => !used.has(w)), rest).toEqual([]);
  }
}

function expectJobs(jobs: Awaited<ReturnType<typeof pendingJobs>>, laid: Laid, layout: KeyLayout): void {
  expect(jobs.map((j) => j.agent)).toEqual([...laid.jobs.keys()].sort());
  for (const j of jobs) {
    expect({ agent: j.agent, prefix: j.prefix, trigger: j.trigger, enqueuedAt: j.enqueuedAt }).toEqual({ agent: j.agent, prefix: layout.of(j.agent).prefix, ...laid.jobs.get(j.agent)! });
  }
}

describe('migrationPlan', () => {
  it.each([
    [null, 1, { verdict: 'noop', count: 1 }],
    [null, 3, { verdict: 'migrate', from: 1, to: 3, resumed: false }],
    ['3', 3, { verdict: 'noop', count: 3 }],
    ['3', 1, { verdict: 'migrate', from: 3, to: 1, resumed: false }],
    ['1->3', 3, { verdict: 'migrate', from: 1, to: 3, resumed: true }],
  ] as const)('recorded %s, configured %i', (recorded, configured, plan) => {
    expect(migrationPlan(recorded, configured)).toEqual(plan);
  });
  it('refuses to start another migration over an unfinished one', () => {
    expect(() => migrationPlan('1->3', 2)).toThrow(ShardMigrationRefused);
    expect(() => migrationPlan('1->3', 2)).toThrow(/set redis.shards to 3/);
    expect(() => migrationPlan('x', 2)).toThrow(ShardMigrationRefused);
    expect(() => migrationPlan(null, 0)).toThrow(ShardMigrationRefused);
  });
});

describe('warren shards migrate on one Redis', { timeout: PROCESS_TEST_MS }, () => {
  let server: PrivateRedis;
  let redis: Redis;
  let workerConn: Redis;
  let dir: string;
  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
    workerConn = new Redis(server.url, { maxRetriesPerRequest: null });
    dir = mkdtempSync(join(tmpdir(), 'warren-shards-'));
    mkdirSync(join(dir, 'agents'));
  });
  afterAll(async () => {
    await Promise.all([redis?.quit(), workerConn?.quit()]);
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the agents spread over all three shards', () => {
    expect(new Set(AGENTS.map((a) => layoutOf({ prefix: 'x', shards: 3 }).indexOf(a)))).toEqual(new Set([0, 1, 2]));
  });

  it(
    'moves every pending job, task, flag and record from one shard to three, to two and back to one, once each',
    async () => {
      const prefix = `mig-${randomUUID().slice(0, 8)}`;
      const yaml = (shards: number): string => `{url: "${server.url}", prefix: ${prefix}, shards: ${shards}}`;
      const one = layoutOf({ prefix, shards: 1 });
      const three = layoutOf({ prefix, shards: 3 });
      const all = [prefix, ...three.shards.map((s) => s.prefix)];
      const laid = await layOut(redis, workerConn, prefix);
      const before = await census(redis, all);
      expect(before.pieces.size).toBeGreaterThan(60);
      expectJobs(await pendingJobs(redis, all), laid, one);

      const status = await warren(dir, yaml(3), ['shards', 'status', '--json']);
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ recorded: { count: 1 }, configured: 3, verdict: 'migrate' });

      const up = await warren(dir, yaml(3), ['shards', 'migrate']);
      expect(up.code, up.stderr).toBe(0);
      expect(up.stdout).toMatch(/moved 5 pending jobs/);
      expect(up.stdout).toMatch(/absorbed/); // ada's kept follow-up joined its moved job
      expect(await redis.get(one.home.shardCount)).toBe('3');
      expectPlaced(before, await census(redis, all), three, prefix);
      expectJobs(await pendingJobs(redis, all), laid, three);
      // The old queue is gone, whole; the new ones have their agents' jobs and deduplication as the producer makes it.
      expect(await redis.exists(`${prefix}:${ACTIVATION_QUEUE}:meta`, `${prefix}:${ACTIVATION_QUEUE}:id`)).toBe(0);
      const s0 = new ActivationQueue(redis, { prefix: three.shards[0]!.prefix, logger });
      try {
        const bob = await s0.enqueue('bob', 'exploration'); // absorbed by bob's moved job
        expect((await s0.queue.getJob(bob!))?.data.trigger).toBe('task');
      } finally {
        await s0.close();
      }
      // The stores read each agent's state under its new shard's prefix.
      const s2 = three.of('dee').prefix;
      expect(await new TaskInbox(redis, s2).pending('dee')).toBe(2);
      expect(await new TaskInbox(redis, s2).pending('fay')).toBe(2);
      expect(await new TaskInbox(redis, prefix).pending('dee')).toBe(0);
      expect((await new AgentStateStore(redis, s2).getMany(['dee'])).get('dee')).toMatchObject({ failures: 2 });
      expect((await new AgentStateStore(redis, three.of('eve').prefix).getMany(['eve'])).get('eve')).toMatchObject({ paused: true });

      const again = await warren(dir, yaml(3), ['shards', 'migrate']);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/nothing to migrate/);

      // Three to two: shards 0 and 1 stay where they are (same prefixes), and keep the agents that stay in them.
      const two = layoutOf({ prefix, shards: 2 });
      const mid = await warren(dir, yaml(2), ['shards', 'migrate']);
      expect(mid.code, mid.stderr).toBe(0);
      expect(await redis.get(one.home.shardCount)).toBe('2');
      expectPlaced(before, await census(redis, all), two, prefix);
      expectJobs(await pendingJobs(redis, all), laid, two);
      expect(await redis.exists(`${three.shards[2]!.prefix}:${ACTIVATION_QUEUE}:meta`)).toBe(0);

      const down = await warren(dir, yaml(1), ['shards', 'migrate']);
      expect(down.code, down.stderr).toBe(0);
      expect(await redis.get(one.home.shardCount)).toBe('1');
      expectPlaced(before, await census(redis, all), one, prefix);
      expectJobs(await pendingJobs(redis, all), laid, one);
      for (const s of three.shards) expect(await redis.exists(`${s.prefix}:${ACTIVATION_QUEUE}:meta`)).toBe(0);
    },
    PROCESS_TEST_MS,
  );

  it(
    'refuses while a scheduler holds a lease or a job is locked, and moves nothing',
    async () => {
      const prefix = `mig-${randomUUID().slice(0, 8)}`;
      const yaml = `{url: "${server.url}", prefix: ${prefix}}`;
      const k = new RedisKeys(prefix);
      const q = new ActivationQueue(redis, { prefix, logger });
      await q.enqueue('ada', 'notification');
      await q.close();
      await redis.set(k.leader, 'daemon-1', 'PX', 60_000);
      const refused = await warren(dir, yaml, ['shards', 'migrate', '--to', '3']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/daemon is running.*scheduler lease/);
      expect(await redis.exists(k.shardCount)).toBe(0);
      expect(await pendingJobs(redis, [prefix])).toHaveLength(1);
      await redis.del(k.leader);

      // A scheduling daemon between two leases is still in the roster; one whose entry ran out is not.
      await redis.hset(k.schedulerRoster, 'daemon-2', `${Date.now() + 60_000}|*`, 'daemon-gone', `${Date.now() - 1}|*`);
      const rostered = await warren(dir, yaml, ['shards', 'migrate', '--to', '3']);
      expect(rostered.code).toBe(1);
      expect(rostered.stderr).toMatch(/daemon daemon-2 is in the scheduler roster/);
      expect(rostered.stderr).not.toMatch(/daemon-gone/);
      await redis.hdel(k.schedulerRoster, 'daemon-2');

      // A worker's lock on a job it took (a daemon stopped moments ago) stops it too, without --force.
      const worker = new Worker(ACTIVATION_QUEUE, null, { connection: workerConn, prefix, autorun: false });
      expect(await worker.getNextJob('t-1', { block: false })).toBeTruthy();
      await worker.close();
      const locked = await warren(dir, yaml, ['shards', 'migrate', '--to', '3']);
      expect(locked.code).toBe(1);
      expect(locked.stderr).toMatch(/locked by a worker/);
      expect(await redis.exists(k.shardCount)).toBe(0);

      const forced = await warren(dir, yaml, ['shards', 'migrate', '--to', '3', '--force']);
      expect(forced.code, forced.stderr).toBe(0);
      const three = layoutOf({ prefix, shards: 3 });
      expect(await pendingJobs(redis, [prefix, ...three.shards.map((s) => s.prefix)])).toMatchObject([{ agent: 'ada', prefix: three.of('ada').prefix }]);
    },
    PROCESS_TEST_MS,
  );

  it(
    'finishes an interrupted migration when run again',
    async () => {
      const prefix = `mig-${randomUUID().slice(0, 8)}`;
      const yaml = `{url: "${server.url}", prefix: ${prefix}}`;
      const three = layoutOf({ prefix, shards: 3 });
      const all = [prefix, ...three.shards.map((s) => s.prefix)];
      const laid = await layOut(redis, workerConn, prefix);
      const before = await census(redis, all);
      // Interrupted after its record and some of its moves: two agents' tasks are already in their new shard.
      await redis.set(three.home.shardCount, '1->3');
      for (const agent of ['dee', 'fay']) {
        for (const key of [three.home.tasks(agent), three.home.taskBodies(agent)]) {
          const rest = key.slice(prefix.length + 1);
          await redis.restore(`${three.of(agent).prefix}:${rest}`, 0, await redis.dumpBuffer(key), 'REPLACE');
        }
      }
      const status = await warren(dir, yaml, ['shards', 'status']);
      expect(status.stdout).toMatch(/a migration from 1 to 3 that did not finish/);
      expect(status.stdout).toMatch(/refuses to start/);
      const wrong = await warren(dir, yaml, ['shards', 'migrate', '--to', '2']);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/set redis.shards to 3/);
      const done = await warren(dir, yaml, ['shards', 'migrate', '--to', '3']);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toMatch(/resuming the migration from 1 to 3/);
      expectPlaced(before, await census(redis, all), three, prefix);
      expectJobs(await pendingJobs(redis, all), laid, three);
    },
    PROCESS_TEST_MS,
  );
});

describe('a daemon with three shards after the migration', { timeout: PROCESS_TEST_MS }, () => {
  let server: PrivateRedis;
  let redis: Redis;
  let dir: string;
  let h: Harness | undefined;
  beforeAll(async () => {
    server = await startPrivateRedis();
    redis = new Redis(server.url, { maxRetriesPerRequest: 1 });
    dir = mkdtempSync(join(tmpdir(), 'warren-shards-'));
    mkdirSync(join(dir, 'agents'));
  });
  afterAll(async () => {
    await h?.stop();
    await redis?.quit();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'answers the work queued under one shard once each, from the agents\' new shards',
    async () => {
      const prefix = `mig-${randomUUID().slice(0, 8)}`;
      const agents = ['ada', 'eve', 'dee']; // shards 0, 1 and 2
      const three = layoutOf({ prefix, shards: 3 });
      expect(agents.map((a) => three.indexOf(a))).toEqual([0, 1, 2]);
      // Queued with one shard, by a daemon since stopped: each agent's task and its task activation.
      const queue = new ActivationQueue(redis, { prefix, logger });
      for (const agent of agents) {
        expect(await new TaskInbox(redis, prefix).add(agent, { id: `webhook:deploys:${agent}`, source: 'webhook', name: 'deploys', text: `Summarise deploy ${agent}.`, createdAt: Date.now() })).toBe('added');
        await queue.enqueue(agent, 'task');
      }
      await queue.close();

      const up = await warren(dir, `{url: "${server.url}", prefix: ${prefix}, shards: 3}`, ['shards', 'migrate']);
      expect(up.code, up.stderr).toBe(0);
      expect(up.stdout).toMatch(/moved 3 pending jobs/);

      const clerk = (name: string): string => `name: ${name}\ntype: llm\nbrain: {provider: scripted, model: m, responses: ["Deploy summarised."]}\ncapabilities: {grants: [hub:read]}\n`;
      h = await startHarness({
        redisUrl: server.url,
        agentsDir: makeAgentsDir(Object.fromEntries(agents.map((a) => [a, { config: clerk(a), prompt: 'You are a clerk.' }])), { withGreeter: false }),
        config: (c) => {
          c.redis.prefix = prefix;
          c.redis.shards = 3;
        },
      });
      const harness = h;
      for (const agent of agents) {
        await waitFor(`${agent}'s task answered`, () => harness.outcomes.some((o) => o.agent === agent && o.trigger === 'task') || undefined, PROCESS_START_MS);
        await waitFor(`${agent}'s task settled`, async () => (await new TaskInbox(redis, three.of(agent).prefix).pending(agent)) === 0 || undefined, PROCESS_START_MS);
      }
      await new Promise((r) => setTimeout(r, 1_000)); // a second run would show up now
      for (const agent of agents) {
        const runs = harness.outcomes.filter((o) => o.agent === agent && o.trigger === 'task');
        // The task ran once. The scheduler may also have queued a task activation while the moved one had started
        // and not yet claimed the task (as it may on one shard): that follow-up finds no task and does nothing.
        expect(runs.filter((o) => o.outcome.kind !== 'skipped').map((o) => o.outcome.kind), agent).toEqual(['answered']);
        expect(runs.filter((o) => o.outcome.kind === 'skipped').map((o) => JSON.stringify(o.outcome)), agent).toEqual(runs.length > 1 ? ['{"kind":"skipped","reason":"no_task"}'] : []);
      }
      expect(await pendingJobs(redis, [prefix, ...three.shards.map((s) => s.prefix)])).toEqual([]);
    },
    PROCESS_TEST_MS,
  );
});

describe('warren shards migrate on a Redis Cluster', { timeout: PROCESS_TEST_MS }, () => {
  let cluster: PrivateRedisCluster;
  let redis: Cluster;
  let workerConn: Cluster;
  let dir: string;
  beforeAll(async () => {
    cluster = await startPrivateRedisCluster(3);
    const nodes = cluster.urls.map((u) => ({ host: '127.0.0.1', port: Number(new URL(u).port) }));
    redis = new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
    workerConn = new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } });
    dir = mkdtempSync(join(tmpdir(), 'warren-shards-'));
    mkdirSync(join(dir, 'agents'));
  }, PROCESS_START_MS);
  afterAll(async () => {
    await Promise.all([redis?.quit(), workerConn?.quit()]);
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'moves one shard to three shards on three masters, each agent into its shard, once',
    async () => {
      const base = `mig-${randomUUID().slice(0, 8)}`;
      const prefix = `{${base}}`;
      const yaml = `{cluster: [${cluster.urls.map((u) => `"${u}"`).join(', ')}], prefix: ${base}}`;
      const three = layoutOf({ prefix, shards: 3, cluster: true });
      const all = [prefix, ...three.shards.map((s) => s.prefix)];
      const laid = await layOut(redis, workerConn, prefix);
      const before = await census(redis, all);
      const up = await warren(dir, yaml, ['shards', 'migrate', '--to', '3']);
      expect(up.code, up.stderr).toBe(0);
      expectPlaced(before, await census(redis, all), three, prefix);
      expectJobs(await pendingJobs(redis, all), laid, three);
      // Each shard on its own master.
      const owners = await Promise.all(
        three.shards.map(async (s) => {
          for (const [i, node] of redis.nodes('master').entries()) if ((await keysUnder(node, s.prefix, all)).length) return i;
          return -1;
        }),
      );
      expect(new Set(owners).size).toBe(3);
    },
    PROCESS_TEST_MS,
  );
});
