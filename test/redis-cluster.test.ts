// warren on a Redis Cluster (3 masters, started by this file on free ports): `redis.cluster` in warren.yaml, the
// hash-tagged prefix, and the scripts reading BullMQ's keys, through the real daemon. The same guarantees as on one
// Redis: a mention answered once, one follow-up for input during a run, leader failover, recovery after SIGKILL.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { ACTIVATION_QUEUE } from '../redis/keys.ts';
import { RedisKeys } from '../redis/keys.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { hubCaller, waitFor, type HubCaller, type WirePost } from './support/hub-api.ts';
import { startPrivateRedisCluster, type PrivateRedisCluster } from './support/redis-cluster.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';

let cluster: PrivateRedisCluster;
let client: Cluster;
beforeAll(async () => {
  cluster = await startPrivateRedisCluster();
  client = new Cluster(cluster.urls.map((u) => ({ host: '127.0.0.1', port: Number(new URL(u).port) })), { redisOptions: { maxRetriesPerRequest: null } });
}, 30_000);
afterAll(async () => {
  client?.disconnect();
  await cluster?.stop();
});

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});
const warrenCli = (args: string[]): SpawnSyncReturns<string> => spawnSync(process.execPath, [resolve('bin/warren.js'), ...args], { encoding: 'utf8', env: { ...process.env, REDIS_URL: '' }, timeout: PROCESS_START_MS });
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** `count` scripted agents named bee-1…, each answering after `delayMs`. */
function bees(count: number, delayMs: number): { dir: string; names: string[] } {
  const names = Array.from({ length: count }, (_, i) => `bee-${i + 1}`);
  const config = (name: string): string =>
    `name: ${name}\ntype: llm\nbrain:\n  provider: scripted\n  model: m\n  responses:\n    - {content: "Buzz from ${name}.", delay_ms: ${delayMs}}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {limits: {min_interval_seconds: 0}}\n`;
  return { dir: makeAgentsDir(Object.fromEntries(names.map((n) => [n, { config: config(n), prompt: 'You are {{name}}.' }])), { withGreeter: false }), names };
}

async function repliesBy(api: HubCaller, key: string, postId: string, agent: string): Promise<number> {
  const p = await api.get<WirePost>(`/posts/${postId}?include_comments=true`, key);
  return (p.comments ?? []).filter((c) => c.author.name === agent).length;
}

/** Waits until each post has a reply from its agent, then checks, after a pause, that none has two and nothing is unread. */
async function expectAnsweredOnce(hub: RunningHub, posts: Array<[string, string]>, timeoutMs = 30_000): Promise<void> {
  const api = hubCaller(hub.url);
  await waitFor(
    'every mention answered',
    async () => {
      for (const [postId, agent] of posts) if ((await repliesBy(api, hub.adminKey, postId, agent)) === 0) return undefined;
      return true;
    },
    timeoutMs,
    100,
  );
  await sleep(1_000); // a duplicate would show up now
  for (const [postId, agent] of posts) expect(await repliesBy(api, hub.adminKey, postId, agent), `replies of ${agent}`).toBe(1);
  expect((await api.get<{ agents: unknown[] }>('/agents?has_notifications=true', hub.adminKey)).agents).toEqual([]);
}

describe('on Redis Cluster, in one process', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('answers a mention; every key of warren and BullMQ is under the hash-tagged prefix, in one slot', async () => {
    h = await startHarness({ redisUrl: 'redis://unused', redisCluster: cluster.urls, agentsDir: makeAgentsDir({}) });
    expect(h.prefix).toMatch(/^\{warren-test-[0-9a-f]{8}\}$/);
    const key = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', key, { content: '@greeter hello' });
    const harness = h;
    await waitFor('greeter reply', async () => ((await repliesBy(harness.api, key, post.id, 'greeter')) > 0 ? true : undefined));
    await waitFor('mention marked read', async () => ((await harness.api.get<{ unread_count: number }>('/notifications?agent_id=greeter', harness.adminKey)).unread_count === 0 ? true : undefined));
    expect(await repliesBy(h.api, key, post.id, 'greeter')).toBe(1);

    // The keys live on whichever master owns the tag's slot; scan them all, once the activation has been recorded.
    const allKeys = async (): Promise<string[]> => (await Promise.all(client.nodes('master').map((n) => n.keys(`${harness.prefix}:*`)))).flat();
    const keys = await waitFor('the activation recorded', async () => {
      const k = await allKeys();
      return k.includes(new RedisKeys(harness.prefix).agentLastActivated) ? k : undefined;
    });
    expect(keys.some((k) => k.startsWith(`${harness.prefix}:${ACTIVATION_QUEUE}:`))).toBe(true);
    const slots = new Set(await Promise.all(keys.map((k) => client.cluster('KEYSLOT', k))));
    expect(slots.size).toBe(1);
  });

  it('a mention arriving while the agent runs triggers exactly one follow-up activation', async () => {
    const { dir, names } = bees(1, 1_500);
    const bee = names[0]!;
    h = await startHarness({ redisUrl: 'redis://unused', redisCluster: cluster.urls, agentsDir: dir, config: (c) => (c.scheduler.poll_interval = 20) });
    const harness = h;
    const key = await h.registerUser('dana');
    const first = await h.api.post<{ id: string }>('/posts', key, { content: `@${bee} one` });
    // Once the first activation has read its inbox (its claim holds the one mention it read), new mentions are new work.
    await waitFor('the first activation to read its inbox', async () => ((await client.hget(new RedisKeys(harness.prefix).inboxHold(bee), 'count')) === '1' ? true : undefined), 10_000, 5);
    const second = await h.api.post<{ id: string }>('/posts', key, { content: `@${bee} two` });
    const third = await h.api.post<{ id: string }>('/posts', key, { content: `@${bee} three` });
    for (const post of [first, second, third]) await waitFor(`reply to ${post.id}`, async () => ((await repliesBy(harness.api, key, post.id, bee)) > 0 ? true : undefined));
    await sleep(800);
    // The first run answered "one"; exactly one follow-up answered both later mentions; nothing else ran.
    expect(h.outcomes.map((o) => o.handled.length)).toEqual([1, 2]);
    expect(h.outcomes.map((o) => o.outcome.kind)).toEqual(['answered', 'answered']);
  });
});

describe('on Redis Cluster, with real processes', { timeout: PROCESS_TEST_MS }, () => {
  let hub: RunningHub;
  let userKey: string;
  let prefix: string;
  let queue: Queue;

  beforeAll(async () => {
    hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
    userKey = (await hubCaller(hub.url).post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'dana', type: 'human' })).api_key;
  });
  afterAll(async () => {
    await hub?.close();
  });

  function daemon(agentsDir: string): WarrenProcess {
    const p = startWarren({ hubUrl: hub.url, adminKey: hub.adminKey, redisUrl: 'redis://unused', redisCluster: cluster.urls, prefix, agentsDir });
    cleanups.push(async () => {
      p.kill('SIGKILL');
      await p.exited;
    });
    return p;
  }

  const tagged = (): string => `{${prefix}}`;
  async function mention(agent: string): Promise<string> {
    return (await hubCaller(hub.url).post<{ id: string }>('/posts', userKey, { title: `for ${agent}`, content: `@${agent} ping` })).id;
  }
  async function leaderPid(): Promise<number | undefined> {
    const token = await client.get(new RedisKeys(tagged()).leader);
    return token ? Number(token.split(':')[1]) : undefined;
  }

  afterEach(async () => {
    await queue?.close();
  });
  function freshPrefix(): void {
    prefix = `cluster-${randomUUID().slice(0, 8)}`;
    queue = new Queue(ACTIVATION_QUEUE, { connection: client, prefix: tagged() });
  }

  it('two daemons: one leader; kill it and the other leads within two lease periods; nothing doubled', async () => {
    freshPrefix();
    const { dir, names } = bees(4, 200);
    const a = daemon(dir);
    const b = daemon(dir);
    await Promise.all([a.waitForLine(/warren is running/), b.waitForLine(/warren is running/)]);
    const first = await waitFor('a leader', () => leaderPid());
    expect([a.pid, b.pid]).toContain(first);
    const posts: Array<[string, string]> = [];
    for (const n of names.slice(0, 2)) posts.push([await mention(n), n]);
    await expectAnsweredOnce(hub, posts);

    const [leader, follower] = first === a.pid ? [a, b] : [b, a];
    leader.kill('SIGKILL');
    const killedAt = Date.now();
    await waitFor('the follower to lead', async () => ((await leaderPid()) === follower.pid ? true : undefined), 5_000, 10);
    expect(Date.now() - killedAt).toBeLessThan(2 * 1_000); // lease_ttl is 1 s
    for (const n of names.slice(2)) posts.push([await mention(n), n]);
    await expectAnsweredOnce(hub, posts);

    // The operations commands read and signal through the cluster too.
    const status = warrenCli(['status', '--json', '--config', follower.config]);
    expect(status.status, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as { redis: { ok: boolean; url: string }; leader: string | null };
    expect(report.redis).toEqual({ ok: true, url: `cluster ${cluster.urls.join(',')}` });
    expect(report.leader).toContain(`:${follower.pid}:`);
    const reload = warrenCli(['reload', '--config', follower.config]);
    expect(reload.stdout).toContain('reload sent to 1 daemon');
    await follower.waitForLine(/reload requested through Redis/, 5_000);
  });

  it('SIGKILL a daemon with activations in flight: after a restart each mention is answered exactly once', async () => {
    freshPrefix();
    const { dir, names } = bees(8, 2_000);
    const p1 = daemon(dir);
    await p1.waitForLine(/warren is running/);
    const posts: Array<[string, string]> = [];
    for (const n of names) posts.push([await mention(n), n]);
    await waitFor('8 activations in flight', async () => ((await queue.getActiveCount()) === 8 ? true : undefined), 15_000, 20);
    p1.kill('SIGKILL');
    await p1.exited;
    const api = hubCaller(hub.url);
    for (const [postId, agent] of posts) expect(await repliesBy(api, hub.adminKey, postId, agent)).toBe(0);
    const p2 = daemon(dir);
    await p2.waitForLine(/warren is running/);
    await expectAnsweredOnce(hub, posts, 30_000);
  });
});
