// Faults, with real processes and private Redis servers: leader failover, a SIGKILLed worker, a Redis
// restart, a hub outage, new input during a run, SIGTERM during a long activation. The invariant each time:
// every mention answered exactly once, nothing lost, nothing doubled.
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { ACTIVATION_QUEUE } from '../redis/keys.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { hubCaller, waitFor, type HubCaller, type WirePost } from './support/hub-api.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `count` scripted agents named bee-01…, each answering after `delayMs`. */
function bees(count: number, delayMs: number): { dir: string; names: string[] } {
  const names = Array.from({ length: count }, (_, i) => `bee-${String(i + 1).padStart(2, '0')}`);
  const agents = Object.fromEntries(
    names.map((name) => [
      name,
      {
        config: `name: ${name}\ntype: llm\nbrain:\n  provider: scripted\n  model: m\n  responses:\n    - {content: "Buzz from ${name}.", delay_ms: ${delayMs}}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {limits: {min_interval_seconds: 0}}\n`,
        prompt: 'You are {{name}}.',
      },
    ]),
  );
  return { dir: makeAgentsDir(agents, { withGreeter: false }), names };
}

interface World {
  redis: PrivateRedis;
  hub: RunningHub;
  api: HubCaller;
  prefix: string;
  client: Redis;
  queue: Queue;
  userKey: string;
}

async function world(opts: { appendonly?: boolean } = {}): Promise<World> {
  const redis = await startPrivateRedis(opts);
  cleanups.push(() => redis.stop());
  const hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
  cleanups.push(() => hub.close());
  const prefix = `faults-${randomUUID().slice(0, 8)}`;
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  client.on('error', () => undefined); // the Redis restart test takes it down on purpose
  cleanups.push(() => Promise.resolve(client.disconnect()));
  const queue = new Queue(ACTIVATION_QUEUE, { connection: client, prefix });
  cleanups.push(() => queue.close());
  const api = hubCaller(hub.url);
  const { api_key: userKey } = await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'dana', type: 'human' });
  return { redis, hub, api, prefix, client, queue, userKey };
}

function daemon(w: World, agentsDir: string, extra: Partial<Parameters<typeof startWarren>[0]> = {}): WarrenProcess {
  const p = startWarren({ hubUrl: w.hub.url, adminKey: w.hub.adminKey, redisUrl: w.redis.url, prefix: w.prefix, agentsDir, ...extra });
  cleanups.push(async () => {
    p.kill('SIGKILL');
    await p.exited;
  });
  return p;
}

async function mention(w: World, agent: string): Promise<string> {
  return (await w.api.post<{ id: string }>('/posts', w.userKey, { title: `for ${agent}`, content: `@${agent} ping` })).id;
}

async function repliesBy(w: World, postId: string, agent: string): Promise<number> {
  const p = await w.api.get<WirePost>(`/posts/${postId}?include_comments=true`, w.hub.adminKey);
  return (p.comments ?? []).filter((c) => c.author.name === agent).length;
}

/** Waits until each post has a reply from its agent, then checks, after a pause, that none has two. */
async function expectAnsweredOnce(w: World, posts: Array<[string, string]>, timeoutMs = 30_000): Promise<void> {
  await waitFor(
    'every mention answered',
    async () => {
      for (const [postId, agent] of posts) if ((await repliesBy(w, postId, agent)) === 0) return undefined;
      return true;
    },
    timeoutMs,
    100,
  );
  await sleep(1_500); // a duplicate would show up now
  for (const [postId, agent] of posts) expect(await repliesBy(w, postId, agent), `replies of ${agent}`).toBe(1);
  const unread = await w.api.get<{ agents: unknown[] }>('/agents?has_notifications=true', w.hub.adminKey);
  expect(unread.agents).toEqual([]);
}

const leaderPid = async (w: World): Promise<number | undefined> => {
  const token = await w.client.get(`${w.prefix}:scheduler:leader`);
  return token ? Number(token.split(':')[1]) : undefined;
};

describe('faults', { timeout: PROCESS_TEST_MS }, () => {
  it('two daemons: one leader; kill it and the other leads within two lease periods; nothing doubled', async () => {
    const w = await world();
    const { dir, names } = bees(6, 300);
    const a = daemon(w, dir);
    const b = daemon(w, dir);
    await Promise.all([a.waitForLine(/warren is running/), b.waitForLine(/warren is running/)]);
    const first = await waitFor('a leader', () => leaderPid(w));
    expect([a.pid, b.pid]).toContain(first);
    const posts: Array<[string, string]> = [];
    for (const n of names.slice(0, 3)) posts.push([await mention(w, n), n]);
    await expectAnsweredOnce(w, posts);

    const [leader, follower] = first === a.pid ? [a, b] : [b, a];
    leader.kill('SIGKILL');
    const killedAt = Date.now();
    await waitFor('the follower to lead', async () => ((await leaderPid(w)) === follower.pid ? true : undefined), 5_000, 10);
    const takeover = Date.now() - killedAt;
    expect(takeover).toBeLessThan(2 * 1_000); // lease_ttl is 1 s
    for (const n of names.slice(3)) posts.push([await mention(w, n), n]);
    await expectAnsweredOnce(w, posts);
    expect(follower.lines.some((l) => l.includes('scheduler leadership acquired'))).toBe(true);
  });

  it('roles: a scheduler-only and a worker-only process share the work; a worker alone schedules nothing', async () => {
    const w = await world();
    const { dir, names } = bees(2, 100);
    const worker = daemon(w, dir, { role: 'worker' });
    await worker.waitForLine(/warren is running/);
    const first = await mention(w, names[0]!);
    await sleep(1_000);
    expect(await repliesBy(w, first, names[0]!)).toBe(0); // nobody schedules yet
    expect(await leaderPid(w)).toBeUndefined();
    const scheduler = daemon(w, dir, { role: 'scheduler' });
    await scheduler.waitForLine(/warren is running/);
    const second = await mention(w, names[1]!);
    await expectAnsweredOnce(w, [
      [first, names[0]!],
      [second, names[1]!],
    ]);
    expect(await leaderPid(w)).toBe(scheduler.pid);
    // The activations ran in the worker process.
    expect(worker.lines.filter((l) => l.includes('"msg":"replied"'))).toHaveLength(2);
    expect(scheduler.lines.some((l) => l.includes('"msg":"replied"'))).toBe(false);
  });

  it('SIGKILL a worker with 20 activations in flight: after a restart each mention is answered exactly once', async () => {
    const w = await world();
    const { dir, names } = bees(20, 3_000);
    const p1 = daemon(w, dir);
    await p1.waitForLine(/warren is running/);
    const posts: Array<[string, string]> = [];
    for (const n of names) posts.push([await mention(w, n), n]);
    await waitFor('20 activations in flight', async () => ((await w.queue.getActiveCount()) === 20 ? true : undefined), 15_000, 20);
    p1.kill('SIGKILL');
    await p1.exited;
    for (const [postId, agent] of posts) expect(await repliesBy(w, postId, agent)).toBe(0);
    const p2 = daemon(w, dir);
    await p2.waitForLine(/warren is running/);
    await expectAnsweredOnce(w, posts, 40_000);
  });

  it('Redis restarts (appendonly) during activations: the daemon reconnects by itself and loses no job', async () => {
    const w = await world({ appendonly: true });
    const { dir, names } = bees(10, 1_500);
    const p = daemon(w, dir);
    await p.waitForLine(/warren is running/);
    const posts: Array<[string, string]> = [];
    for (const n of names) posts.push([await mention(w, n), n]);
    await waitFor('activations running', async () => ((await w.queue.getActiveCount()) >= 5 ? true : undefined), 15_000, 20);
    await w.redis.kill();
    await sleep(1_000);
    await w.redis.start();
    await expectAnsweredOnce(w, posts, 40_000);
    expect(p.child.exitCode).toBeNull();
    expect(p.lines.some((l) => l.includes('redis connection restored'))).toBe(true);
  });

  it('SIGTERM during a long activation: exits 0 within the grace period; the activation resumes elsewhere', async () => {
    const w = await world();
    const { dir, names } = bees(1, 4_000);
    const p1 = daemon(w, dir, { workers: 'shutdown_grace: 1s' });
    await p1.waitForLine(/warren is running/);
    const post = await mention(w, names[0]!);
    await waitFor('the activation to start', async () => ((await w.queue.getActiveCount()) === 1 ? true : undefined), 10_000, 20);
    const signalled = Date.now();
    p1.kill('SIGTERM');
    expect(await p1.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(1_000 + 2_000);
    expect(p1.lines.some((l) => l.includes('activations still running at the shutdown deadline'))).toBe(true);
    expect(await repliesBy(w, post, names[0]!)).toBe(0);
    const p2 = daemon(w, dir);
    await p2.waitForLine(/warren is running/);
    await expectAnsweredOnce(w, [[post, names[0]!]], 30_000);
  });
});

describe('faults in one process', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('a mention arriving while the agent runs triggers exactly one follow-up activation', async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const { dir, names } = bees(1, 1_500);
    const bee = names[0]!;
    h = await startHarness({ redisUrl: redis.url, agentsDir: dir, config: (c) => (c.scheduler.poll_interval = 20) });
    const harness = h;
    const client = new Redis(redis.url, { maxRetriesPerRequest: null });
    cleanups.push(() => Promise.resolve(client.disconnect()));
    const key = await h.registerUser('dana');
    const first = await h.api.post<{ id: string }>('/posts', key, { content: `@${bee} one` });
    // Once the first activation has read its inbox (its claim holds the one mention it read), new mentions are new work.
    await waitFor('the first activation to read its inbox', async () => ((await client.hget(`${harness.prefix}:inbox-hold:${bee}`, 'count')) === '1' ? true : undefined), 10_000, 5);
    const second = await h.api.post<{ id: string }>('/posts', key, { content: `@${bee} two` });
    const third = await h.api.post<{ id: string }>('/posts', key, { content: `@${bee} three` });
    for (const post of [first, second, third]) {
      await waitFor(`reply to ${post.id}`, async () => {
        const p = await harness.api.get<WirePost>(`/posts/${post.id}?include_comments=true`, key);
        return p.comments?.some((c) => c.author.name === bee) ? true : undefined;
      });
    }
    await sleep(800);
    // The first run answered "one"; exactly one follow-up answered both later mentions; nothing else ran.
    expect(h.outcomes.map((o) => o.handled.length)).toEqual([1, 2]);
    expect(h.outcomes.map((o) => o.outcome.kind)).toEqual(['answered', 'answered']);
  });

  it('the hub answers 503 for 30 s: no crash, backoff in the logs, all work done afterwards, no duplicate', async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const { dir, names } = bees(5, 200);
    h = await startHarness({ redisUrl: redis.url, agentsDir: dir });
    const harness = h;
    const key = await h.registerUser('dana');
    const posts: Array<[string, string]> = [];
    for (const n of names) posts.push([(await h.api.post<{ id: string }>('/posts', key, { content: `@${n} during the outage` })).id, n]);
    h.hub.faults.failWith5xx = true;
    const outageStart = harness.logs.length;
    await sleep(30_000);
    h.hub.faults.failWith5xx = false;
    const during = harness.logs.slice(outageStart).map((l) => JSON.parse(l) as { msg: string; failures?: number });
    const intakeFailures = during.filter((l) => l.msg === 'scheduler intake failed; will retry');
    // Backoff: the scheduler polls every 50 ms when healthy (600 times in 30 s); failing, it spaces its tries out.
    expect(intakeFailures.length).toBeGreaterThanOrEqual(3);
    expect(intakeFailures.length).toBeLessThan(40);
    expect(intakeFailures.map((l) => l.failures)).toEqual(intakeFailures.map((_, i) => i + 1));
    const w = { api: h.api, hub: h.hub } as unknown as World;
    await expectAnsweredOnce(w, posts, 60_000);
  }, 120_000);
});
