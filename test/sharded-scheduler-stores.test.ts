// The scheduler floor's stores on a fleet spread over 3 shards of a private 3-master Redis Cluster (redis/key-layout.ts):
// every key an agent's state makes lands in its shard (a script that mixed shards would fail with CROSSSLOT here),
// every per-shard hash holds only its own shard's agents, and reads over many agents answer, in the order asked, what
// the same writes give on one shard.
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { layoutOf, type KeyLayout } from '../redis/key-layout.ts';
import { RedisKeys } from '../redis/keys.ts';
import { AgentStateStore, utcDay } from '../scheduler/agent-state.ts';
import { AGENTS_PER_SCRIPT } from '../redis/agent-pages.ts';
import { HeldMentionStore, type HeldMentions } from '../scheduler/held-mentions.ts';
import { InboxClaims, InboxVersionPerShard } from '../scheduler/inbox-claims.ts';
import { scheduleField, ScheduleStateStore } from '../scheduler/schedule-state.ts';
import { TaskInbox, type AgentTask } from '../scheduler/task-inbox.ts';
import { WriteAllowance, WriteRefused, type WriteRules } from '../scheduler/write-allowance.ts';
import { startPrivateRedisCluster, type PrivateRedisCluster } from './support/redis-cluster.ts';
import { ActivationRecords } from '../activation/activation-records.ts';
import { activationRecord } from './support/activation-record.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

let cluster: PrivateRedisCluster;
let client: Cluster;
beforeAll(async () => {
  cluster = await startPrivateRedisCluster();
  client = new Cluster(cluster.urls.map((u) => ({ host: '127.0.0.1', port: Number(new URL(u).port) })), { redisOptions: { maxRetriesPerRequest: 1 } });
  // Three redis-servers and redis-cli's joining of them: on a loaded machine (other test files starting processes)
  // a start took over 60 s, so the ceiling is a process test's.
}, PROCESS_TEST_MS);
afterAll(async () => {
  client?.disconnect();
  await cluster?.stop();
});

/** A fresh 3-shard layout under its own tag, and a one-shard prefix (another tag) to compare reads with. */
function fleet(): { tag: string; layout: KeyLayout; one: string } {
  const tag = `t-${randomUUID().slice(0, 8)}`;
  const layout = layoutOf({ prefix: `{${tag}}`, shards: 3, cluster: cluster.urls });
  return { tag, layout, one: `{one-${randomUUID().slice(0, 8)}}` };
}

/** `count` agent names, at least `perShard` in each of the layout's shards (checked, so the tests cover every shard). */
function agentsOver(layout: KeyLayout, count: number, perShard = 2): string[] {
  const names = Array.from({ length: count }, (_, i) => `bee-${i}`);
  const seen = new Array<number>(layout.shards.length).fill(0);
  for (const n of names) seen[layout.indexOf(n)]!++;
  expect(seen.every((c) => c >= perShard), `agents per shard: ${seen.join(', ')}`).toBe(true);
  return names;
}

/** Every key holding `tag`, on every master, with the master's port. */
async function keysOf(tag: string): Promise<Array<{ key: string; port: number }>> {
  const out: Array<{ key: string; port: number }> = [];
  for (const node of client.nodes('master')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `*${tag}*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) out.push({ key, port: node.options.port! });
    } while (cursor !== '0');
  }
  return out;
}

/** The name in a per-shard hash's field: `<agent>`, `<agent>|<counter>`, `<agent>/<schedule>`. */
const agentOfField = (field: string): string => field.split(/[|/]/)[0]!;

/**
 * Checks what `tag`'s keys show: each key is under the home prefix (only those `home` allows) or one shard's; a key
 * naming an agent is in that agent's shard; a hash's agent fields (a set's members) are its own shard's agents. Returns the keys by
 * shard index (home: -1), and the masters each shard's keys were found on.
 */
async function expectInShards(tag: string, layout: KeyLayout, agents: readonly string[], home: (key: string) => boolean = () => false): Promise<{ byShard: Map<number, string[]>; masters: Map<number, Set<number>> }> {
  const byShard = new Map<number, string[]>();
  const masters = new Map<number, Set<number>>();
  const named = new Set(agents);
  for (const { key, port } of await keysOf(tag)) {
    const shard = layout.shards.findIndex((k) => key.startsWith(`${k.prefix}:`));
    if (shard < 0) {
      expect(key.startsWith(`${layout.home.prefix}:`) && home(key), `key outside every shard: ${key}`).toBe(true);
      byShard.set(-1, [...(byShard.get(-1) ?? []), key]);
      continue;
    }
    byShard.set(shard, [...(byShard.get(shard) ?? []), key]);
    masters.set(shard, (masters.get(shard) ?? new Set()).add(port));
    const rest = key.slice(layout.shards[shard]!.prefix.length);
    for (const a of agents) if (new RegExp(`:${a}(:|$)`).test(rest)) expect(layout.indexOf(a), `${key} names ${a}`).toBe(shard);
    const type = await client.type(key);
    const fields = type === 'hash' ? await client.hkeys(key) : type === 'set' ? await client.smembers(key) : [];
    for (const field of fields) {
      const a = agentOfField(field);
      if (named.has(a)) expect(layout.indexOf(a), `${key} has a field of ${a}`).toBe(shard);
    }
  }
  return { byShard, masters };
}

/** Every shard's keys were found, each shard's on one master, the shards on three different masters. */
function expectSpread(masters: Map<number, Set<number>>): void {
  expect([...masters.keys()].sort()).toEqual([0, 1, 2]);
  for (const ports of masters.values()) expect(ports.size).toBe(1);
  expect(new Set([...masters.values()].map((p) => [...p][0])).size).toBe(3);
}

describe('AgentStateStore over 3 shards', () => {
  it('keeps each agent in its shard and reads many agents across shards as one shard would, in the order asked', async () => {
    const { tag, layout, one } = fleet();
    const agents = agentsOver(layout, 12);
    const sharded = new AgentStateStore(client, layout);
    const single = new AgentStateStore(client, one);
    const at = Date.UTC(2026, 10, 27, 9);
    const day = utcDay(at);
    const writes = async (s: AgentStateStore): Promise<void> => {
      for (const [i, a] of agents.entries()) {
        if (i % 3 === 0) await s.recordFailure(a, [60_000, 120_000], { at });
        if (i % 4 === 1) await s.holdUntil(a, at + 1_000 * i);
        if (i % 5 === 2) await s.setPaused(a, true);
        if (i % 2 === 0) await s.recordActivated(a, { tokensInput: 10 * i, tokensOutput: i, costUsd: 0.5 }, { at: at + i });
        if (i % 6 === 5) await s.recordAbandoned(a, i);
      }
      await s.setSkipped(new Map(agents.filter((_, i) => i % 4 === 3).map((a) => [a, `no key for ${a}`])));
      await s.setNotRunnable(agents, new Map(agents.filter((_, i) => i % 3 === 1).map((a) => [a, `no cli for ${a}`])));
    };
    await writes(sharded);
    await writes(single);
    expect(await sharded.once('final:x', 60_000)).toBe(true);
    expect(await sharded.once('final:x', 60_000)).toBe(false);

    const { masters, byShard } = await expectInShards(tag, layout, agents, (key) => key === `${layout.home.prefix}:once:final:x`);
    expectSpread(masters);
    expect(byShard.get(-1)).toEqual([`${layout.home.prefix}:once:final:x`]);

    // Asked in an order that mixes the shards (reversed), with an agent nobody wrote of.
    const asked = [...agents].reverse().concat('bee-unknown');
    const [getMany, holds, daily, skipped, notRunnable] = await Promise.all([sharded.getMany(asked), sharded.holdMany(asked), sharded.dailyMany(asked, day), sharded.skipped(asked), sharded.notRunnable(asked)]);
    expect([...getMany.keys()]).toEqual(asked);
    expect(getMany).toEqual(await single.getMany(asked));
    expect([...holds.keys()]).toEqual(asked);
    expect(holds).toEqual(await single.holdMany(asked));
    expect([...daily.keys()]).toEqual(asked);
    expect(daily).toEqual(await single.dailyMany(asked, day));
    expect(skipped).toEqual(await single.skipped(asked));
    expect(notRunnable).toEqual(await single.notRunnable(asked));
    // Not vacuous: what was written is there.
    expect(getMany.get(agents[0]!)).toMatchObject({ failures: 1, lastActivatedAt: at, paused: false });
    expect(getMany.get(agents[2]!)).toMatchObject({ paused: true, lastActivatedAt: at + 2 });
    expect(getMany.get(agents[11]!)?.abandoned).toBe(11);
    expect(daily.get(agents[4]!)).toEqual({ activations: 1, posts: 0, comments: 0, tokensInput: 40, tokensOutput: 4, costUsd: 0.5 });
    expect([...skipped.keys()].sort()).toEqual([agents[3], agents[7], agents[11]].sort());
    expect(notRunnable.get(agents[1]!)).toBe(`no cli for ${agents[1]}`);
    expect(notRunnable.size).toBe(4);
    expect((await sharded.activationStart(agents[2]!, day)).hold.paused).toBe(true);

    // A new skipped set replaces every shard's: the shards left without any of its agents are emptied.
    await sharded.setSkipped(new Map([[agents[0]!, 'gone']]));
    expect(await sharded.skipped(agents)).toEqual(new Map([[agents[0]!, 'gone']]));
    // A check of all of them with no reasons clears every shard's marks.
    await sharded.setNotRunnable(agents, new Map());
    expect((await sharded.notRunnable(agents)).size).toBe(0);
    // `warren resume` clears the backoff in the agent's shard.
    await sharded.clearBackoff(agents[0]!);
    expect((await sharded.getMany([agents[0]!])).get(agents[0]!)?.failures).toBe(0);
  });

  it(`pages exploration facts per shard (over ${AGENTS_PER_SCRIPT} agents in a shard) and puts them back in the order asked`, async () => {
    const { tag, layout, one } = fleet();
    const agents = agentsOver(layout, 3 * AGENTS_PER_SCRIPT + 150, AGENTS_PER_SCRIPT + 1);
    const sharded = new AgentStateStore(client, layout);
    const single = new AgentStateStore(client, one);
    const at = Date.UTC(2026, 10, 27, 9);
    const day = utcDay(at);
    const writes = async (s: AgentStateStore): Promise<void> => {
      await Promise.all(
        agents.map(async (a, i) => {
          if (i % 2 === 0) await s.recordActivated(a, { tokensInput: 1, tokensOutput: 1, costUsd: 0 }, { at: at + i });
          if (i % 7 === 0) await s.setPaused(a, true);
        }),
      );
    };
    await writes(sharded);
    await writes(single);
    // An activation queued for one agent of each shard: BullMQ's deduplication key in the agent's shard makes it busy.
    const busy = layout.byShard(agents).map((g) => g.items[1]!);
    for (const a of busy) await client.set(layout.of(a).dedup(a).current, 'job-1');
    for (const a of busy) await client.set(new RedisKeys(one).dedup(a).current, 'job-1');

    const asked = [...agents].reverse();
    const facts = await sharded.explorationFacts(asked, day);
    expect(facts).toHaveLength(asked.length);
    expect(facts).toEqual(await single.explorationFacts(asked, day));
    for (const a of busy) expect(facts[asked.indexOf(a)]).toBeUndefined();
    const idle = asked.findIndex((a) => !busy.includes(a) && agents.indexOf(a) % 14 === 0);
    expect(facts[idle]).toMatchObject({ paused: true, lastActivatedAt: at + agents.indexOf(asked[idle]!) });
    const { masters } = await expectInShards(tag, layout, agents);
    expectSpread(masters);
  });
});

describe('InboxClaims over 3 shards', () => {
  it('keeps each run`s hold in its agent`s shard, reads holds of agents of every shard, and versions per shard', async () => {
    const { tag, layout } = fleet();
    const agents = agentsOver(layout, 9);
    const claims = new InboxClaims(client, layout);
    // A run of each agent: BullMQ's deduplication key names its job, the run claims i + 1 notifications.
    const runs = agents.map((a) => claims.forRun(a, `job-${a}`, { token: 'attempt-1', started: 1 }, 60_000));
    for (const [i, a] of agents.entries()) {
      const k = layout.of(a);
      await client.set(k.dedup(a).current, `job-${a}`);
      await client.hset(`${k.dedup(a).jobPrefix}job-${a}`, 'name', 'notification');
      // With what the reply outbox kept for it (one command, lua/activation-open.lua: keys of its shard).
      await client.set(k.outbox(a, 'n1'), `kept by ${a}`);
      if (i % 3 !== 2) expect((await runs[i]!.open(i + 1, [k.outbox(a, 'n1'), k.outbox(a, 'n2')])).kept).toEqual([`kept by ${a}`, undefined]); // the others have not read their inbox yet: they hold all of it
    }
    const held = await claims.heldByMany([...agents].reverse());
    expect([...held.keys()]).toEqual([...agents].reverse());
    agents.forEach((a, i) => expect(held.get(a), a).toEqual({ held: i % 3 === 2 ? Infinity : i + 1, version: 0 }));

    // A settle bumps its shard's version only.
    const settled = agents[0]!;
    await runs[0]!.settle(1, layout.of(settled).outbox(settled, 'n1'));
    expect(await client.exists(layout.of(settled).outbox(settled, 'n1'))).toBe(0);
    const versions = await claims.versions();
    for (const a of agents) expect(versions.of(a), a).toBe(layout.indexOf(a) === layout.indexOf(settled) ? 1 : 0);
    expect((await claims.heldByMany([settled])).get(settled)).toEqual({ held: 0, version: 1 });
    await expect(claims.version()).rejects.toBeInstanceOf(InboxVersionPerShard);
    await runs[1]!.release();
    // A run's end: its state, its record and its release in one command (lua/activation-end.lua), all of its shard.
    const ender = agents[3]!;
    const ended = await new ActivationRecords(client, layout).addEnding(activationRecord({ agent: ender, activation_id: 'act-end', started_at: new Date().toISOString() }), (t) => t, {
      activated: new AgentStateStore(client, layout).activatedCall(ender, { tokensInput: 1, tokensOutput: 1, costUsd: 0 }, { resetBackoff: true }),
      release: runs[3]!.ending().call,
    });
    expect(ended).toMatchObject({ streakEnded: false, releaseLost: false });

    const { masters } = await expectInShards(tag, layout, agents);
    expectSpread(masters);
  });
});

describe('HeldMentionStore over 3 shards', () => {
  it('replaces every shard`s reading and reads agents of every shard', async () => {
    const { tag, layout } = fleet();
    const agents = agentsOver(layout, 9);
    const store = new HeldMentionStore(client, layout);
    const now = Date.UTC(2026, 10, 27, 9);
    const entry = (i: number): HeldMentions => ({ reason: i % 2 ? 'paused' : 'budget', runs_at: null, waiting: i + 1, since: new Date(now).toISOString() });
    await store.replace(new Map(agents.map((a, i) => [a, entry(i)])), now);
    const { masters } = await expectInShards(tag, layout, agents);
    expectSpread(masters);
    const read = await store.read([...agents].reverse(), now);
    expect([...read.keys()]).toEqual([...agents].reverse());
    agents.forEach((a, i) => expect(read.get(a)).toEqual(entry(i)));
    // The next round holds one agent only: the others' entries are gone in every shard.
    await store.replace(new Map([[agents[4]!, entry(4)]]), now);
    expect(await store.read(agents, now)).toEqual(new Map([[agents[4]!, entry(4)]]));
    await store.replace(new Map(), now);
    expect((await store.read(agents, now)).size).toBe(0);
  });
});

describe('ScheduleStateStore over 3 shards', () => {
  it('records each schedule in its agent`s shard, reads them all, and forgets across shards', async () => {
    const { tag, layout } = fleet();
    const agents = agentsOver(layout, 9);
    const store = new ScheduleStateStore(client, layout);
    const fields = agents.flatMap((a) => [scheduleField(a, 'daily'), scheduleField(a, 'hourly')]);
    await store.record(new Map(fields.map((f, i) => [f, 1_000 + i])), new Map(fields.filter((_, i) => i % 2 === 0).map((f, i) => [f, 500 + i])));
    const { masters } = await expectInShards(tag, layout, agents);
    expectSpread(masters);
    const asked = [...fields].reverse();
    const read = await store.read(asked);
    expect([...read.keys()]).toEqual(asked);
    fields.forEach((f, i) => expect(read.get(f)).toEqual({ checkedThrough: 1_000 + i, lastFired: i % 2 === 0 ? 500 + i / 2 : undefined }));
    // The hourly schedules are gone from every agent's definition.
    await store.forget((f) => f.endsWith('/hourly'));
    const after = await store.read(fields);
    fields.forEach((f, i) => expect(after.get(f)?.checkedThrough).toBe(f.endsWith('/hourly') ? undefined : 1_000 + i));
  });
});

describe('TaskInbox over 3 shards', () => {
  const task = (id: string, createdAt = 1_000): AgentTask => ({ id, source: 'webhook', name: 'deploys', text: `do ${id}`, createdAt });

  it('keeps each agent`s tasks in its shard and finds the agents with tasks waiting in every shard', async () => {
    const { tag, layout } = fleet();
    const agents = agentsOver(layout, 9);
    const inbox = new TaskInbox(client, layout);
    for (const a of agents) {
      expect(await inbox.add(a, task(`webhook:deploys:${a}`))).toBe('added');
      expect(await inbox.add(a, task(`webhook:deploys:${a}`))).toBe('duplicate');
    }
    const { masters } = await expectInShards(tag, layout, agents);
    expectSpread(masters);
    const now = 10_000;
    expect((await inbox.agentsWithTasks(now)).sort()).toEqual([...agents].sort());
    // One agent of each shard takes its task: the others still wait.
    const taken = layout.byShard(agents).map((g) => g.items[0]!);
    for (const a of taken) expect((await inbox.next(a, `act-${a}`, 60_000, now))?.task.id).toBe(`webhook:deploys:${a}`);
    expect((await inbox.agentsWithTasks(now)).sort()).toEqual(agents.filter((a) => !taken.includes(a)).sort());
    // A released claim returns the task; a settled one is gone.
    await inbox.release(taken[0]!, `webhook:deploys:${taken[0]}`, `act-${taken[0]}`);
    await inbox.settle(taken[1]!, `webhook:deploys:${taken[1]}`);
    expect(await inbox.pending(taken[1]!)).toBe(0);
    expect((await inbox.agentsWithTasks(now)).sort()).toEqual(agents.filter((a) => a !== taken[1] && a !== taken[2]).sort());
  });
});

describe('WriteAllowance over 3 shards', () => {
  const rules: WriteRules = { can_create_posts: true, limits: { max_daily_posts: 1, max_daily_comments: 5, max_responses_per_thread: 2, min_interval_seconds: 0 } };

  it('counts each agent`s writes in its shard, where its state store reads them, with limits per agent', async () => {
    const { tag, layout } = fleet();
    const agents = agentsOver(layout, 9);
    const writes = new WriteAllowance(client, layout);
    const now = Date.UTC(2026, 10, 27, 9);
    for (const a of agents) {
      await writes.reserve(a, rules, { kind: 'post', idempotencyKey: `p-${a}` }, now);
      // Every agent answers in the same thread: each has its own count there.
      // The first kept in the reply outbox in the same command (lua/reply-before.lua: a key of the agent's shard).
      await writes.reserve(a, rules, { kind: 'comment', postId: 'post-1', idempotencyKey: `c1-${a}` }, now, { key: layout.of(a).outbox(a, 'n1'), text: 'the answer', ttlSeconds: 60 });
      expect(await client.get(layout.of(a).outbox(a, 'n1'))).toBe('the answer');
      await writes.reserve(a, rules, { kind: 'comment', postId: 'post-1', idempotencyKey: `c2-${a}` }, now);
      // Refused: the answer is kept all the same (a retry posts it once the limit allows, as when they were two commands).
      await expect(writes.reserve(a, rules, { kind: 'comment', postId: 'post-1', idempotencyKey: `c3-${a}` }, now, { key: layout.of(a).outbox(a, 'n3'), text: 'refused for now', ttlSeconds: 60 })).rejects.toMatchObject({ limit: 'max_responses_per_thread' });
      expect(await client.get(layout.of(a).outbox(a, 'n3'))).toBe('refused for now');
      await expect(writes.reserve(a, rules, { kind: 'post', idempotencyKey: `p2-${a}` }, now)).rejects.toBeInstanceOf(WriteRefused);
    }
    // A replay passes uncounted; a released write is given back.
    const replay = await writes.reserve(agents[0]!, rules, { kind: 'post', idempotencyKey: `p-${agents[0]}` }, now);
    expect(replay.replay).toBe(true);
    await writes.release({ agent: agents[1]!, write: { kind: 'comment', postId: 'post-1', idempotencyKey: `c2-${agents[1]}` }, day: utcDay(now), at: now, replay: false });

    const { masters } = await expectInShards(tag, layout, agents);
    expectSpread(masters);
    const daily = await new AgentStateStore(client, layout).dailyMany(agents, utcDay(now));
    agents.forEach((a, i) => expect(daily.get(a), a).toMatchObject({ posts: 1, comments: i === 1 ? 1 : 2 }));
    expect(await new AgentStateStore(client, layout).contributionsToday(agents[2]!, utcDay(now))).toEqual({ posts: 1, comments: 2 });
  });
});
