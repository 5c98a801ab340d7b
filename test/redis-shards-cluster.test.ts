// Issue 32's acceptance for `redis.shards`: a private 3-master cluster (append-only, fsync always), three warren
// daemons with `redis.shards: 6`, 60 scripted agents and 600 mentions posted while the daemons run. Part-way one
// daemon is killed with SIGKILL (and started again) and one master is killed with SIGKILL and restarted on its port
// and folder. Every mention must end with exactly one reply from its agent, no agent with unread notifications,
// and each master must hold more than 15 % of the keys and have run more than 15 % of the commands.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller, waitFor, type HubCaller, type WirePost } from './support/hub-api.ts';
import { startPrivateRedisCluster, sumCalls, type MasterStats, type PrivateRedisCluster } from './support/redis-cluster.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';
import { PROCESS_START_MS } from './support/ceilings.ts';

const AGENTS = 60;
const MENTIONS = 600;
const SHARDS = 6;
/** Authors of the mentions: 60 each, within the hub's 100 mention notifications per author and hour. */
const USERS = 10;
/** Each agent's scripted model answers after this long: short, the machine has two cores for five processes. */
const AGENT_DELAY_MS = 250;
/** The whole scenario's ceiling (a quiet run takes far less; see the timings it logs). */
const SCENARIO_MS = 600_000;

let cluster: PrivateRedisCluster;
beforeAll(async () => {
  cluster = await startPrivateRedisCluster(3, { persistence: true });
}, 30_000);
afterAll(async () => {
  await cluster?.stop();
});

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A client of one master (not the cluster): what it reads and writes stays on that node. */
async function nodeClient(index: number): Promise<Redis> {
  const c = new Redis({ host: '127.0.0.1', port: cluster.ports[index]!, lazyConnect: true, maxRetriesPerRequest: 3 });
  await c.connect();
  cleanups.push(() => Promise.resolve(c.disconnect()));
  return c;
}

describe('the cluster harness', () => {
  it('sums the calls of INFO commandstats', () => {
    const info = '# Commandstats\r\ncmdstat_get:calls=7,usec=10,usec_per_call=1.43,rejected_calls=0,failed_calls=0\r\ncmdstat_cluster|info:calls=3,usec=5,usec_per_call=1.67,rejected_calls=0,failed_calls=0\r\ncmdstat_evalsha:calls=40,usec=900,usec_per_call=22.5,rejected_calls=0,failed_calls=1\r\n';
    expect(sumCalls(info)).toBe(50);
  });

  it('a master killed with SIGKILL and restarted keeps what it acknowledged; its counts go on from where they were', async () => {
    const tag = `{harness-${randomUUID().slice(0, 8)}}`;
    const m = await cluster.masterOf(`${tag}:k`);
    const before = await cluster.masterStats();
    let c = await nodeClient(m);
    await c.set(`${tag}:k`, 'kept');
    for (let i = 0; i < 100; i++) await c.incr(`${tag}:n`);
    const written = await cluster.masterStats();
    expect(written[m]!.keys - before[m]!.keys).toBe(2);
    expect(written[m]!.commands - before[m]!.commands).toBeGreaterThanOrEqual(101);
    // The other masters saw none of it (only the harness's own INFO and DBSIZE).
    for (const [i, s] of written.entries()) if (i !== m) expect(s.commands - before[i]!.commands).toBeLessThan(10);

    c.disconnect();
    await cluster.killMaster(m);
    await cluster.restartMaster(m);
    c = await nodeClient(m);
    expect(await c.get(`${tag}:k`)).toBe('kept');
    expect(await c.get(`${tag}:n`)).toBe('100');
    const after = await cluster.masterStats();
    expect(after[m]!.commands).toBeGreaterThanOrEqual(written[m]!.commands);
    await c.del(`${tag}:k`, `${tag}:n`);
    expect((await cluster.masterStats())[m]!.keys).toBe(before[m]!.keys);
  });
});

/** `count` scripted agents named bee-1…, each answering after `delayMs` (as in test/redis-cluster.test.ts). */
function bees(count: number, delayMs: number): { dir: string; names: string[] } {
  const names = Array.from({ length: count }, (_, i) => `bee-${i + 1}`);
  const config = (name: string): string =>
    `name: ${name}\ntype: llm\nbrain:\n  provider: scripted\n  model: m\n  responses:\n    - {content: "Buzz from ${name}.", delay_ms: ${delayMs}}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {limits: {min_interval_seconds: 0}}\n`;
  return { dir: makeAgentsDir(Object.fromEntries(names.map((n) => [n, { config: config(n), prompt: 'You are {{name}}.' }])), { withGreeter: false }), names };
}

/** Waits for a daemon's readiness line; a daemon that exits first (a configuration it refuses) fails at once. */
async function running(p: WarrenProcess): Promise<void> {
  await Promise.race([
    p.waitForLine(/warren is running/, PROCESS_START_MS),
    p.exited.then((code) => {
      throw new Error(`warren (pid ${p.pid}) exited (${code}) before running; last lines:\n${p.lines.slice(-5).join('\n')}`);
    }),
  ]);
}

interface Mention {
  postId: string;
  agent: string;
}

/** The comments on a post: all of them, by anyone. */
async function commentsOn(api: HubCaller, key: string, postId: string): Promise<Array<{ author: string }>> {
  const p = await api.get<WirePost>(`/posts/${postId}?include_comments=true`, key);
  return (p.comments ?? []).map((c) => ({ author: c.author.name }));
}

describe(`${SHARDS} shards on a 3-master cluster, three daemons`, { timeout: SCENARIO_MS }, () => {
  let hub: RunningHub;
  let api: HubCaller;
  /** The people who mention the agents: the hub lets one author's mentions notify at most 100 times an hour. */
  let userKeys: string[];

  beforeAll(async () => {
    hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
    api = hubCaller(hub.url);
    userKeys = [];
    for (let u = 0; u < USERS; u++) userKeys.push((await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: `person-${u}`, type: 'human' })).api_key);
  });
  afterAll(async () => {
    await hub?.close();
  });

  it(`${MENTIONS} mentions to ${AGENTS} agents, a daemon and a master killed part-way: each answered exactly once, every master carries its share`, async () => {
    const t0 = Date.now();
    const marks: string[] = [];
    const mark = (what: string): void => {
      marks.push(`${((Date.now() - t0) / 1000).toFixed(1)} s ${what}`);
    };
    const prefix = `shards-${randomUUID().slice(0, 8)}`;
    const { dir, names } = bees(AGENTS, AGENT_DELAY_MS);
    const daemon = (): WarrenProcess => {
      const p = startWarren({ hubUrl: hub.url, adminKey: hub.adminKey, redisUrl: 'redis://unused', redisCluster: cluster.urls, prefix, agentsDir: dir, redis: `shards: ${SHARDS}` });
      cleanups.push(async () => {
        p.kill('SIGKILL');
        await p.exited;
      });
      return p;
    };
    const before = await cluster.masterStats();

    const daemons = [daemon(), daemon(), daemon()];
    await Promise.all(daemons.map(running));
    mark('three daemons running');

    const mentions: Mention[] = [];
    const post = async (from: number, to: number): Promise<void> => {
      // A few at a time: the hub is in this process, on the same two cores as everything else.
      for (let i = from; i < to; i += 5) {
        const batch = Array.from({ length: Math.min(5, to - i) }, (_, k) => names[(i + k) % AGENTS]!);
        const ids = await Promise.all(batch.map(async (agent, k) => (await api.post<{ id: string }>('/posts', userKeys[(i + k) % USERS]!, { title: `m${i + k} for ${agent}`, content: `@${agent} ping ${i + k}` })).id));
        ids.forEach((postId, k) => mentions.push({ postId, agent: batch[k]! }));
      }
    };
    // Mentions not yet answered; once a mention has its reply it is not read again until the final check.
    const unanswered = new Set<Mention>();
    const answered = new Set<Mention>();
    let progress = 0;
    const answeredCount = async (): Promise<number> => {
      for (const m of mentions) if (!answered.has(m)) unanswered.add(m);
      for (const m of [...unanswered]) {
        if ((await commentsOn(api, hub.adminKey, m.postId)).some((c) => c.author === m.agent)) {
          unanswered.delete(m);
          answered.add(m);
        }
      }
      if (answered.size >= progress + 100) mark(`${(progress = answered.size - (answered.size % 100))} answered`);
      return answered.size;
    };
    // On a timeout: how far the fleet got, when, and the daemons' last errors.
    const atLeast = (n: number, ceilingMs: number): Promise<true> =>
      waitFor(`${n} mentions answered`, async () => ((await answeredCount()) >= n ? true : undefined), ceilingMs, 250).catch((err: unknown) => {
        const sample = [...unanswered].slice(0, 10).map((m) => `${m.agent}:${m.postId}`);
        const errors = daemons.flatMap((d) => d.lines.filter((l) => /"level":(40|50|60)/.test(l)).slice(-3));
        throw new Error(`${(err as Error).message}: ${answered.size}/${mentions.length} answered; unanswered e.g. ${sample.join(', ')}; timeline:\n${marks.join('\n')}\nlast errors:\n${errors.join('\n')}`);
      });

    // A third of the mentions; once some are answered (the fleet is at work), one daemon is killed mid-flight and
    // started again while the next third is posted.
    await post(0, 200);
    mark('200 mentions posted');
    await atLeast(50, 120_000);
    mark(`${answered.size} of ${mentions.length} answered; SIGKILL daemon ${daemons[0]!.pid}`);
    daemons[0]!.kill('SIGKILL');
    await daemons[0]!.exited;
    daemons[0] = daemon();
    await Promise.all([post(200, 400), running(daemons[0])]);
    mark(`400 mentions posted; daemon restarted (${daemons[0].pid})`);

    // The master of the fleet's home keys (and of two shards) is killed with work in flight, the last mentions are
    // posted while it is down, and it comes back on its port and folder with its append-only file.
    await post(400, 450);
    const master = await cluster.masterOf(`{${prefix}}`);
    await cluster.killMaster(master);
    mark(`SIGKILL master ${master} (${cluster.urls[master]}); just after: ${await answeredCount()} of ${mentions.length} answered`);
    await post(450, MENTIONS);
    await sleep(1_000);
    mark(`${MENTIONS} mentions posted`);
    await cluster.restartMaster(master);
    mark(`master ${master} restarted`);

    await atLeast(MENTIONS, 420_000);
    mark('every mention answered');

    // A duplicate (a job run twice after the kills) would show up within a few lock periods (lock_duration 2 s).
    await sleep(5_000);
    const counts = await Promise.all(mentions.map(async (m) => ({ m, comments: await commentsOn(api, hub.adminKey, m.postId) })));
    const wrong = counts.filter(({ m, comments }) => comments.length !== 1 || comments[0]!.author !== m.agent).map(({ m, comments }) => `${m.agent}:${m.postId} → [${comments.map((c) => c.author).join(', ')}]`);
    expect(wrong, 'mentions without exactly one reply from their agent').toEqual([]);
    expect(mentions).toHaveLength(MENTIONS);
    expect((await api.get<{ agents: unknown[] }>('/agents?has_notifications=true', hub.adminKey)).agents).toEqual([]);

    // Each master's share of the keys and of the commands since the daemons started.
    const after = await cluster.masterStats();
    const delta = (pick: (s: MasterStats) => number): number[] => after.map((s, i) => pick(s) - pick(before[i]!));
    const keys = delta((s) => s.keys);
    const commands = delta((s) => s.commands);
    const total = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
    const share = (xs: number[]): string[] => xs.map((x) => `${((100 * x) / total(xs)).toFixed(1)} %`);
    mark(`keys per master ${keys.join(' / ')} (${share(keys).join(' / ')}); commands ${commands.join(' / ')} (${share(commands).join(' / ')})`);
    console.log(`redis-shards-cluster timeline:\n${marks.join('\n')}`);
    // Which kinds of keys each master holds: names the stores that still write under one prefix.
    const families = async (i: number): Promise<string> => {
      const counts = new Map<string, number>();
      for (const k of await cluster.masterKeys(i)) {
        const f = k.replace(/^\{[^}]*:s\d+(:\d+)?\}/, '[shard]').replace(/^\{[^}]*\}/, '[home]').replace(/bee-\d+/g, '<agent>').replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>').replace(/\d+/g, '<n>');
        counts.set(f, (counts.get(f) ?? 0) + 1);
      }
      return [...counts].sort((x, y) => y[1] - x[1]).slice(0, 12).map(([f, n]) => `${n} ${f}`).join(', ');
    };
    const fair = (xs: number[]): boolean => xs.every((x) => x > 0.15 * total(xs));
    const detail = fair(keys) && fair(commands) ? '' : `\n${(await Promise.all([0, 1, 2].map(async (i) => `master ${i}: ${await families(i)}`))).join('\n')}`;
    for (const [i, k] of keys.entries()) expect(k, `keys on master ${i} of ${total(keys)}${detail}`).toBeGreaterThan(0.15 * total(keys));
    for (const [i, c] of commands.entries()) expect(c, `commands on master ${i} of ${total(commands)}${detail}`).toBeGreaterThan(0.15 * total(commands));
  });
});
