// A daemon with `redis.shards: 3` on one Redis: each agent's activations run from its shard's queue, its keys live
// under its shard's prefix, one daemon leads every shard, and two daemons share the shards' leases out, a stopped
// one handing its shards to the other.
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { layoutOf } from '../redis/key-layout.ts';
import { ShardLeadership } from '../scheduler/shard-leadership.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';

let redis: PrivateRedis;
let client: Redis;
beforeAll(async () => {
  redis = await startPrivateRedis();
  client = new Redis(redis.url, { maxRetriesPerRequest: null });
}, 30_000);
afterAll(async () => {
  client?.disconnect();
  await redis?.stop();
});

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const names = Array.from({ length: 9 }, (_, i) => `ant-${i + 1}`);
const agent = (name: string): string =>
  `name: ${name}\ntype: llm\nbrain:\n  provider: scripted\n  model: m\n  responses:\n    - {content: "Hi from ${name}."}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {limits: {min_interval_seconds: 0}}\n`;

async function keysUnder(prefix: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    out.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return out;
}

describe('one daemon, three shards', () => {
  let h: Harness;
  it('answers each mention once from the agent\'s shard, with the agent\'s keys under that shard', async () => {
    h = await startHarness({ redisUrl: redis.url, agentsDir: makeAgentsDir(Object.fromEntries(names.map((n) => [n, { config: agent(n), prompt: 'You are {{name}}.' }])), { withGreeter: false }), config: (c) => void (c.redis.shards = 3) });
    cleanups.push(() => h.stop());
    const layout = layoutOf({ prefix: h.prefix, shards: 3 });
    expect(layout.shards.map((s) => s.prefix)).toEqual([0, 1, 2].map((i) => `${h.prefix}:s${i}`));
    // Every shard holds some of the nine agents (else the test would not show a spread).
    expect(new Set(names.map((n) => layout.indexOf(n))).size).toBe(3);

    const key = await h.registerUser('alice');
    const posts = await Promise.all(names.map(async (n) => [n, (await h.api.post<{ id: string }>('/posts', key, { content: `@${n} hello` })).id] as const));
    await waitFor('every mention answered', async () => {
      for (const [n, id] of posts) {
        const p = await h.api.get<WirePost>(`/posts/${id}?include_comments=true`, key);
        if (!(p.comments ?? []).some((c) => c.author.name === n)) return undefined;
      }
      return true;
    }, 60_000, 100);
    await new Promise((r) => setTimeout(r, 1_000)); // a duplicate would show up now
    for (const [n, id] of posts) {
      const p = await h.api.get<WirePost>(`/posts/${id}?include_comments=true`, key);
      expect((p.comments ?? []).filter((c) => c.author.name === n), `replies of ${n}`).toHaveLength(1);
    }

    const token = await client.get(`${layout.shards[0]!.prefix}:scheduler:leader`);
    expect(token).toBeTruthy();
    for (const shard of layout.shards) {
      // One daemon: it leads every shard, under one token.
      expect(await client.get(`${shard.prefix}:scheduler:leader`)).toBe(token);
      const keys = await keysUnder(shard.prefix);
      const mine = names.filter((n) => layout.of(n) === shard);
      // The shard's BullMQ queue ran its agents' activations, and their records are kept there.
      expect(keys).toContain(`${shard.prefix}:activations:meta`);
      for (const n of mine) expect(keys, `${n}'s records in ${shard.prefix}`).toContain(`${shard.prefix}:activation-records:${n}`);
      for (const n of names.filter((x) => !mine.includes(x))) expect(keys.some((k) => k.endsWith(`:${n}`)), `${n} has no key in ${shard.prefix}`).toBe(false);
    }
    // Nothing of an agent stays under the home prefix but fleet keys.
    const home = (await keysUnder(h.prefix)).filter((k) => !layout.shards.some((s) => k.startsWith(`${s.prefix}:`)));
    for (const n of names) expect(home.filter((k) => k.includes(`:${n}`)), `home keys naming ${n}`).toEqual([]);
  }, 120_000);
});

describe('the shard count the keys were laid out for', () => {
  it('a daemon configured for another count than the recorded one refuses to start, naming the migration', async () => {
    const prefix = `laid-out-${Date.now()}`;
    await client.set(`${prefix}:shard-count`, '1');
    const start = startHarness({ redisUrl: redis.url, agentsDir: makeAgentsDir({}), config: (c) => void ((c.redis.shards = 3), (c.redis.prefix = prefix)) });
    await expect(start).rejects.toThrow(/1 shard.*3|3.*1 shard|warren shards migrate/s);
    await expect(start).rejects.toThrow(/warren shards migrate/);
    // Nothing was written under the new layout's shards.
    for (const i of [0, 1, 2]) expect(await keysUnder(`${prefix}:s${i}`)).toEqual([]);
  }, 60_000);

  it('a fresh fleet records its count at the first start; the next start with it is fine', async () => {
    const prefix = `fresh-${Date.now()}`;
    const h = await startHarness({ redisUrl: redis.url, agentsDir: makeAgentsDir({}), config: (c) => void ((c.redis.shards = 4), (c.redis.prefix = prefix)) });
    cleanups.push(() => h.stop());
    expect(await client.get(`${prefix}:shard-count`)).toBe('4');
  }, 60_000);
});

describe('shard leadership among daemons', () => {
  it('two daemons split six shards; when one stops, the other owns them all', async () => {
    const layout = layoutOf({ prefix: `lead-${Date.now()}`, shards: 6 });
    const silent = pino({ level: 'silent' });
    const a = new ShardLeadership(client, layout, { token: 'daemon-a', ttlMs: 3_000, logger: silent });
    const b = new ShardLeadership(client, layout, { token: 'daemon-b', ttlMs: 3_000, logger: silent });
    await a.start();
    await b.start();
    cleanups.push(() => a.stop(), () => b.stop());
    await a.beat(); // a sees b now
    const ownsA = [0, 1, 2, 3, 4, 5].filter((i) => a.wants(i));
    const ownsB = [0, 1, 2, 3, 4, 5].filter((i) => b.wants(i));
    expect([...ownsA, ...ownsB].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    expect(ownsA.length).toBeGreaterThan(0);
    expect(ownsB.length).toBeGreaterThan(0);
    await b.stop();
    await a.beat();
    expect([0, 1, 2, 3, 4, 5].every((i) => a.wants(i))).toBe(true);
  });

  it('a daemon that died (no stop) drops out once its roster entry expires', async () => {
    const layout = layoutOf({ prefix: `lead2-${Date.now()}`, shards: 4 });
    const silent = pino({ level: 'silent' });
    const a = new ShardLeadership(client, layout, { token: 'daemon-a', ttlMs: 1_000, logger: silent });
    const dead = new ShardLeadership(client, layout, { token: 'daemon-dead', ttlMs: 1_000, logger: silent });
    await dead.beat();
    await a.start();
    cleanups.push(() => a.stop());
    const before = [0, 1, 2, 3].filter((i) => a.wants(i)).length;
    expect(before).toBeLessThan(4);
    await new Promise((r) => setTimeout(r, 1_200));
    await a.beat();
    expect([0, 1, 2, 3].every((i) => a.wants(i))).toBe(true);
    expect(await client.hexists(layout.home.schedulerRoster, 'daemon-dead')).toBe(0);
  });
});
