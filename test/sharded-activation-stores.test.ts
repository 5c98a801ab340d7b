// The activation stores, the hub adapters' state, the Moltbook budget ledger, the request pacer, the A2A day count
// and the loaded definitions on a private 3-master Redis Cluster with a 3-shard layout (redis/key-layout.ts): an
// agent's keys land under its shard's prefix, fleet-wide keys under home, nothing CROSSSLOTs (a script or MULTI
// mixing shards would fail here), and the fleet reads (records of all agents, held records, last records, summary
// ticks, budget health) give what the same writes on one shard give.
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import type { ExecutionEventBus, RequestContext } from '@a2a-js/sdk/server';
import { Cluster } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivationRecords, heldRecord, type ActivationRecord } from '../activation/activation-records.ts';
import { ActivitySummaryLedger } from '../activation/activity-summary-ledger.ts';
import { RedisErrorPostLedger } from '../activation/error-post-ledger.ts';
import { RedisNotificationFailures } from '../activation/notification-failures.ts';
import { RedisReplyOutbox } from '../activation/reply-outbox.ts';
import { SpawnNotes } from '../activation/spawn-notes.ts';
import { StatusPostLedger } from '../activation/status-post-ledger.ts';
import { WarrenAgentExecutor } from '../daemon/a2a/a2a-executor.ts';
import { agentMessage } from '../daemon/a2a/a2a-messages.ts';
import type { A2ANews } from '../daemon/a2a/a2a-news.ts';
import { RedisA2ATaskStore } from '../daemon/a2a/a2a-task-store.ts';
import { LoadedDefinitionsPublisher, readLoadedDefinitions } from '../daemon/ops/loaded-definitions.ts';
import { BlueskyState } from '../hub-client/bluesky/state.ts';
import { LocalBudgetLedger } from '../hub-client/moltbook/budget-ledger.ts';
import { MoltbookState } from '../hub-client/moltbook/state.ts';
import { RequestPacer } from '../hub-client/request-pacer.ts';
import type { Notification } from '../hub-client/types.ts';
import { layoutOf, type KeyLayout } from '../redis/key-layout.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { waitFor } from './support/hub-api.ts';
import { startPrivateRedisCluster, type PrivateRedisCluster } from './support/redis-cluster.ts';
import { activationRecord } from './support/activation-record.ts';

let cluster: PrivateRedisCluster;
let client: Cluster;
beforeAll(async () => {
  cluster = await startPrivateRedisCluster();
  client = new Cluster(cluster.urls.map((u) => ({ host: '127.0.0.1', port: Number(new URL(u).port) })), { redisOptions: { maxRetriesPerRequest: null } });
}, 60_000);
afterAll(async () => {
  client?.disconnect();
  await cluster?.stop();
});

/** A fresh 3-shard layout (its own hash tags) and a one-shard prefix beside it, per test. */
function spaces(): { layout: KeyLayout; one: string } {
  const id = randomUUID().slice(0, 8);
  return { layout: layoutOf({ prefix: `{t-${id}}`, shards: 3, cluster: cluster.urls }), one: `{u-${id}}` };
}

/** Agents named so that no name holds another (`ag-01`, not `ag-1` inside `ag-10`), spread over every shard. */
const agents = Array.from({ length: 12 }, (_, i) => `ag-${String(i + 1).padStart(2, '0')}`);

/** Every key under `prefix…` on every master, with the master's port. */
async function keysOnMasters(match: string): Promise<Array<{ key: string; port: number }>> {
  const out: Array<{ key: string; port: number }> = [];
  for (const node of client.nodes('master')) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      out.push(...keys.map((key) => ({ key, port: node.options.port ?? 0 })));
      cursor = next;
    } while (cursor !== '0');
  }
  return out;
}

/**
 * Checks where the layout's keys landed: each one under home or a shard, every key naming an agent under that
 * agent's shard (and none at home unless `homeNamed` allows it), every shard's keys on one master and the three
 * shards on three masters. Returns the keys by place.
 */
async function expectLanded(layout: KeyLayout, opts: { homeNamed?: RegExp } = {}): Promise<{ home: string[]; shards: string[][]; ports: Array<Set<number>> }> {
  const base = /\{([^}]+)\}/.exec(layout.home.prefix)![1]!;
  const found = await keysOnMasters(`{${base}*`);
  const home: string[] = [];
  const shards: string[][] = layout.shards.map(() => []);
  const portsOf: Array<Set<number>> = layout.shards.map(() => new Set());
  for (const { key, port } of found) {
    const named = agents.filter((a) => key.includes(a));
    expect(named.length, key).toBeLessThanOrEqual(1);
    if (key.startsWith(`${layout.home.prefix}:`)) {
      home.push(key);
      if (named.length) expect(opts.homeNamed?.test(key), `an agent's key at home: ${key}`).toBe(true);
      continue;
    }
    const i = layout.shards.findIndex((s) => key.startsWith(`${s.prefix}:`));
    expect(i, `a key under no prefix of the layout: ${key}`).toBeGreaterThanOrEqual(0);
    shards[i]!.push(key);
    portsOf[i]!.add(port);
    for (const a of named) expect(layout.indexOf(a), `${key} is not in ${a}'s shard`).toBe(i);
  }
  for (const ports of portsOf) expect(ports.size).toBeLessThanOrEqual(1);
  return { home, shards, ports: portsOf };
}

let n = 0;
function record(agent: string, at: number): ActivationRecord {
  return activationRecord({ activation_id: `act-${++n}`, agent, started_at: new Date(at).toISOString(), duration_ms: 500 });
}

const ids = (rs: readonly ActivationRecord[]): string[] => rs.map((r) => r.activation_id);

describe('the 3-shard layout on a cluster', () => {
  it('spreads the test agents over every shard', () => {
    const { layout } = spaces();
    expect(new Set(agents.map((a) => layout.indexOf(a))).size).toBe(3);
  });
});

describe('activation records on three shards', () => {
  it("keeps each agent's records in its shard and merges the fleet's newest first, as one shard lists them", async () => {
    const { layout, one } = spaces();
    const sharded = new ActivationRecords(client, layout);
    const single = new ActivationRecords(client, one);
    // Interleaved over the agents, each later than the last: the order `warren logs` must show back.
    // Recent: records past the retention's age (7 days) are dropped, so a fixed date failed once it was a week old.
    const t0 = Date.now() - 3_600_000;
    const written: ActivationRecord[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [i, a] of agents.entries()) {
        const r = record(a, t0 + (round * agents.length + i) * 1_000);
        written.push(r);
        await sharded.add(r);
        await single.add(r);
      }
    }
    const newestFirst = ids([...written].reverse());

    expect(ids(await sharded.recent({ limit: 1_000 }))).toEqual(newestFirst);
    expect(ids(await sharded.recent({ limit: 1_000 }))).toEqual(ids(await single.recent({ limit: 1_000 })));
    // The limit counts over the fleet, not per shard.
    expect(ids(await sharded.recent({ limit: 7 }))).toEqual(newestFirst.slice(0, 7));
    expect(ids(await sharded.recent())).toEqual(ids(await single.recent()));
    for (const a of agents) expect(ids(await sharded.recent({ agent: a }))).toEqual(ids(await single.recent({ agent: a })));

    // The newest of each agent, in the caller's order (an agent with none left out).
    const asked = [...agents].reverse().concat('nobody');
    const last = await sharded.lastOf(asked);
    expect([...last.keys()]).toEqual([...agents].reverse());
    expect([...last.values()].map((r) => r.activation_id)).toEqual(ids([...(await single.lastOf(asked)).values()]));

    const { home, shards, ports } = await expectLanded(layout);
    expect(home).toEqual([]);
    // Three shards, three masters (the layout's tags fall in each master's share of the slots).
    expect(new Set(ports.flatMap((p) => [...p])).size).toBe(3);
    for (const [i, keys] of shards.entries()) {
      const s = layout.shards[i]!;
      const mine = agents.filter((a) => layout.indexOf(a) === i);
      expect(keys.sort()).toEqual([...mine.map((a) => s.activationRecords(a)), s.allActivationRecords, s.recordBytes].sort());
      // The shard's byte totals count its own lists exactly.
      const totals = await client.hgetall(s.recordBytes);
      for (const list of [s.allActivationRecords, ...mine.map((a) => s.activationRecords(a))]) {
        const items = await client.lrange(list, 0, -1);
        expect(Number(totals[list])).toBe(items.reduce((sum, x) => sum + Buffer.byteLength(x), 0));
      }
    }
  });

  it('merges held-mention lines over the shards the same way, apart from the records', async () => {
    const { layout, one } = spaces();
    const sharded = new ActivationRecords(client, layout);
    const single = new ActivationRecords(client, one);
    const t0 = Date.now() - 3_600_000; // recent, as above
    for (const [i, a] of [...agents, ...agents.slice(0, 5)].entries()) {
      const line = heldRecord(a, { reason: 'quiet_hours', runs_at: new Date(t0 + 3_600_000).toISOString(), waiting: 2, since: new Date(t0).toISOString() }, new Date(t0 + i * 1_000));
      await sharded.addHeld(line);
      await single.addHeld(line);
    }
    const all = await sharded.recentHeld({ limit: 100 });
    expect(all).toHaveLength(agents.length + 5);
    expect(ids(all)).toEqual(ids(await single.recentHeld({ limit: 100 })));
    expect(ids(await sharded.recentHeld({ limit: 4 }))).toEqual(ids(all).slice(0, 4));
    expect(ids(await sharded.recentHeld({ agent: agents[0]! }))).toEqual(ids(await single.recentHeld({ agent: agents[0]! })));
    expect(await sharded.recent()).toEqual([]);
    const { home, shards } = await expectLanded(layout);
    expect(home).toEqual([]);
    for (const [i, keys] of shards.entries()) expect(keys).toContain(layout.shards[i]!.allHeldRecords);
  });

  it('announces records on the one home channel, and bounds the fleet list by `overall` shared among the shards', async () => {
    const { layout } = spaces();
    const records = new ActivationRecords(client, layout, { retention: { overall: 6 } });
    expect(records.channel).toBe(layout.home.activationRecordsChannel);
    const sub = client.duplicate();
    const heard: string[] = [];
    sub.on('message', (_channel: string, text: string) => heard.push((JSON.parse(text) as ActivationRecord).activation_id));
    await sub.subscribe(records.channel);
    try {
      const t0 = Date.now() - 3_600_000; // recent, as above
      const written = agents.map((a, i) => record(a, t0 + i * 1_000));
      for (const r of written) await records.add(r);
      await waitFor('every record announced', () => (heard.length === written.length ? true : undefined));
      // As a set: a cluster forwards each master's PUBLISH over its bus, so shards' messages may cross on the way.
      expect([...heard].sort()).toEqual(ids(written).sort());
      // Each shard keeps 2 of the 6: the fleet's list holds no more than `overall`, the newest of each shard.
      const fleet = await records.recent({ limit: 100 });
      expect(fleet.length).toBeLessThanOrEqual(6);
      expect(fleet[0]!.activation_id).toBe(written.at(-1)!.activation_id);
      // Every agent's own list keeps its record.
      for (const r of written) expect(ids(await records.recent({ agent: r.agent }))).toEqual([r.activation_id]);
    } finally {
      sub.disconnect();
    }
  });
});

describe("the activation pipeline's per-agent stores on three shards", () => {
  it("write into the agent's shard and read back there", async () => {
    const { layout } = spaces();
    const outbox = new RedisReplyOutbox(client, layout);
    const failures = new RedisNotificationFailures(client, layout);
    const errors = new RedisErrorPostLedger(client, layout);
    const notes = new SpawnNotes(client, layout);
    for (const a of agents) {
      await outbox.put(a, 'n1', `answer of ${a}`);
      expect(await outbox.get(a, 'n1')).toBe(`answer of ${a}`);
      expect(await failures.increment(a, 'n1')).toBe(1);
      expect(await failures.increment(a, 'n1')).toBe(2);
      expect(await errors.claim(a, 'TypeError: x', 60_000, 1_000)).toEqual({ first: true });
      await errors.remember(a, 'TypeError: x', `post-${a}`);
      expect(await errors.claim(a, 'TypeError: x', 60_000, 2_000)).toEqual({ first: false, count: 2, postId: `post-${a}`, firstAt: 1_000 });
      await notes.add(a, 'ap-2', `second of ${a}`);
      await notes.add(a, 'ap-1', `first of ${a}`);
    }
    const landed = await expectLanded(layout);
    expect(landed.home).toEqual([]);
    // Four keys per agent: its outbox entry, failure counts, error post and notes.
    expect(landed.shards.flat()).toHaveLength(agents.length * 4);
    for (const a of agents) {
      expect(await notes.take(a)).toEqual([`first of ${a}`, `second of ${a}`]);
      await outbox.clear(a, 'n1');
      await failures.clear(a, 'n1');
      await errors.forget(a, 'TypeError: x');
    }
    expect((await expectLanded(layout)).shards.flat()).toEqual([]);
  });

  it("keeps activity summary ticks in each shard's hash, read for the fleet in the caller's order", async () => {
    const { layout, one } = spaces();
    const sharded = new ActivitySummaryLedger(client, layout);
    const single = new ActivitySummaryLedger(client, one);
    for (const [i, a] of agents.entries()) {
      for (const l of [sharded, single]) {
        await l.start(a, 1_000 + i);
        await l.start(a, 9_999); // set already: kept
      }
      expect(await sharded.claim(a, 2_000)).toBe(true);
      expect(await sharded.claim(a, 2_000)).toBe(false);
      if (i % 2 === 0) await sharded.finish(a, 2_000);
      else await sharded.release(a, 2_000);
      if (i % 2 === 0) await single.finish(a, 2_000);
    }
    const asked = ['nobody', ...[...agents].reverse()];
    const done = await sharded.done(asked);
    expect([...done]).toEqual([...(await single.done(asked))]);
    expect([...done.keys()]).toEqual([...agents].reverse());
    const landed = await expectLanded(layout);
    expect(landed.home).toEqual([]);
    // Each shard: its hash of ticks and the claims its agents kept (the finished ones).
    for (const [i, keys] of landed.shards.entries()) {
      const s = layout.shards[i]!;
      const finished = agents.filter((a, j) => j % 2 === 0 && layout.indexOf(a) === i);
      expect(keys.sort()).toEqual([s.activitySummaries, ...finished.map((a) => s.activitySummaryClaim(a, 2_000))].sort());
    }
  });

  it('keeps status posts and paused agents at home', async () => {
    const { layout } = spaces();
    const ledger = new StatusPostLedger(client, layout);
    expect(await ledger.claim('paused:ag-01:act-1', 60_000)).toBe(true);
    expect(await ledger.claim('paused:ag-01:act-1', 60_000)).toBe(false);
    for (const a of agents) expect(await ledger.markPaused(a, `act-${a}`)).toBe(true);
    expect(await ledger.takePaused(agents[3]!)).toBe(`act-${agents[3]}`);
    const landed = await expectLanded(layout);
    expect(landed.home.sort()).toEqual([layout.home.statusPost('paused:ag-01:act-1'), layout.home.statusPaused].sort());
    expect(landed.shards.flat()).toEqual([]);
  });
});

const note = (agent: string, id: string, at: string): Notification => ({ id, type: 'mention', post_id: `p-${id}`, content: `@${agent} hi`, created_at: at, read: false, from: { id: 'u1', name: 'alice' } });

describe("the hub adapters' state on three shards", () => {
  it("Moltbook: an agent's notifications, answers, DMs, challenges and write limits in its shard; the write ledger at home", async () => {
    const { layout } = spaces();
    const state = new MoltbookState(client, layout);
    const day = '2026-11-27';
    for (const a of agents) {
      await state.addPending(a, [note(a, `${a}-n2`, '2026-11-27T02:00:00Z'), note(a, `${a}-n1`, '2026-11-27T01:00:00Z')]);
      await state.markHandled(a, [`${a}-n2`]);
      expect((await state.pending(a)).map((x) => x.id)).toEqual([`${a}-n1`]);
      expect(await state.handled(a, [`${a}-n1`, `${a}-n2`])).toEqual(new Set([`${a}-n2`]));
      await state.markAnswered(a, 'post-1');
      expect(await state.answered(a, ['post-1', 'post-2'])).toEqual(new Set(['post-1']));
      await state.setDmSeen(a, 'conv-1', '2026-11-27T01:00:00Z');
      expect(await state.dmSeen(a, 'conv-1')).toBe('2026-11-27T01:00:00Z');
      expect(await state.challengeFailed(a)).toBe(1);
      expect(await state.reserveWrite(a, 'comment', 5_000, day, 1)).toBe(true);
      expect(await state.reserveWrite(a, 'comment', 6_000, day, 1)).toBe(false);
      expect(await state.reserveWrite(a, 'post', 7_000, day, 1)).toBe(true);
      expect(await state.writeHistory(a, day)).toEqual({ lastPostAt: 7_000, lastCommentAt: 5_000, commentsToday: 1 });
      await state.setLedger(`w-${a}`, { state: 'done', agent: a, kind: 'comment', contentHash: 'h' });
      expect(await state.ledger(`w-${a}`)).toMatchObject({ state: 'done', agent: a });
      expect(await state.claimAction(`vote-${a}`)).toBe(true);
      expect(await state.claimAction(`vote-${a}`)).toBe(false);
    }
    const landed = await expectLanded(layout, { homeNamed: /:moltbook:write:/ });
    expect(landed.home.sort()).toEqual(agents.flatMap((a) => [layout.home.moltbookWrite(`w-${a}`), layout.home.moltbookWrite(`vote-${a}`)]).sort());
    // Each agent: pending, handled, answered, dm-seen, challenge failures, last comment, last post, the day's comments.
    expect(landed.shards.flat()).toHaveLength(agents.length * 8);
  });

  it("Bluesky: an agent's notifications and cursor in its shard; record keys at home", async () => {
    const { layout } = spaces();
    const state = new BlueskyState(client, layout);
    for (const a of agents) {
      await state.addPending(a, [note(a, `at://${a}/1`, '2026-11-27T01:00:00Z')]);
      await state.markHandled(a, [`at://${a}/1`]);
      expect(await state.pendingCount(a)).toBe(0);
      expect(await state.since(a, '2026-11-27T00:00:00Z')).toBe('2026-11-27T00:00:00Z');
      expect(await state.since(a, '2026-11-28T00:00:00Z')).toBe('2026-11-27T00:00:00Z');
      expect(await state.rkeyOf(`w-${a}`, 'rk1')).toBe('rk1');
      expect(await state.rkeyOf(`w-${a}`, 'rk2')).toBe('rk1');
    }
    const landed = await expectLanded(layout, { homeNamed: /:bluesky:rkey:/ });
    expect(landed.home.sort()).toEqual(agents.map((a) => layout.home.blueskyRkey(`w-${a}`)).sort());
    // Each agent: handled and since (the pending hash emptied).
    expect(landed.shards.flat()).toHaveLength(agents.length * 2);
  });

  it("the budget ledger: each agent's spend in its shard, the fleet's and the reports seen at home, health as on one shard", async () => {
    const { layout, one } = spaces();
    const now = (): number => Date.parse('2026-11-27T03:00:00Z');
    const config = { defaultDailyLimitUsd: 1, defaultMonthlyLimitUsd: 10, fleetDailyLimitUsd: 5, fleetMonthlyLimitUsd: 50 };
    const sharded = new LocalBudgetLedger(client, layout, config, now);
    const single = new LocalBudgetLedger(client, one, config, now);
    for (const [i, a] of agents.entries()) {
      for (const l of [sharded, single]) {
        await l.record(a, 0.1 * (i + 1), `r-${a}`);
        await l.record(a, 0.1 * (i + 1), `r-${a}`); // a retried report: counted once
        await l.record(a, 0.05, undefined);
      }
    }
    for (const a of agents) expect(await sharded.health(a)).toEqual(await single.health(a));
    const h = await sharded.health(agents[11]!);
    // 0.1 + … + 1.2 plus 12 × 0.05: the fleet's day over every shard's agents.
    expect((h as { fleet?: { daily_used: number } }).fleet?.daily_used).toBeCloseTo(7.8 + 0.6, 6);
    expect(h.daily_used).toBeCloseTo(1.25, 6);
    const landed = await expectLanded(layout, { homeNamed: /:moltbook:budget-seen:r-/ });
    expect(landed.home.filter((k) => k.includes(':budget-fleet:'))).toHaveLength(2);
    expect(landed.home.filter((k) => k.includes(':budget-seen:'))).toHaveLength(agents.length);
    expect(landed.shards.flat()).toHaveLength(agents.length * 2);
  });

  it('the request pacer keeps its buckets at home (one take over an agent bucket and a host bucket)', async () => {
    const { layout } = spaces();
    const pacer = new RequestPacer(client, layout, () => 1_000_000);
    for (const a of agents) await pacer.take([{ key: `moltbook:agent:${a}`, perMinute: 60, burst: 2 }, { key: 'moltbook:host:h', perMinute: 600, burst: 100 }], { maxWaitMs: 0 });
    await pacer.penalise('moltbook:host:h', 1_060_000);
    expect(await pacer.available({ key: 'moltbook:host:h', perMinute: 600, burst: 100 })).toBe(0);
    const landed = await expectLanded(layout, { homeNamed: /:pace:moltbook:agent:/ });
    expect(landed.home).toHaveLength(agents.length + 1);
    expect(landed.shards.flat()).toEqual([]);
  });
});

describe('daemon stores on three shards', () => {
  it("counts an agent's A2A tasks of the day in its shard, the task itself at home", async () => {
    const { layout } = spaces();
    const store = new RedisA2ATaskStore(client, layout.home.prefix);
    const news = { publish: () => Promise.resolve() } as unknown as A2ANews;
    const published: unknown[] = [];
    const bus = { publish: (e: unknown) => void published.push(e), finished: () => undefined } as unknown as ExecutionEventBus;
    for (const a of agents.slice(0, 6)) {
      const executor = new WarrenAgentExecutor({
        agent: a,
        maxDailyTasks: 0, // every task refused: the day's count goes up and back down, and stays in Redis
        store,
        news,
        inbox: { add: () => Promise.reject(new Error('not reached')) },
        queue: { enqueue: () => Promise.reject(new Error('not reached')) },
        redis: client,
        prefix: layout,
        redact: (t) => t,
        logger: pino({ level: 'silent' }),
      });
      const userMessage = { ...agentMessage({ id: `task-${a}`, contextId: `c-${a}` }, 'hello', `m-${a}`), role: Role.ROLE_USER };
      await executor.execute({ taskId: `task-${a}`, contextId: `c-${a}`, userMessage, task: undefined, context: undefined } as unknown as RequestContext, bus);
      expect((await store.read(`task-${a}`))?.task.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    }
    const day = new Date().toISOString().slice(0, 10);
    for (const a of agents.slice(0, 6)) expect(await client.get(layout.of(a).a2aDay(a, day))).toBe('0');
    const landed = await expectLanded(layout, { homeNamed: /:a2a-task/ });
    expect(landed.shards.flat().sort()).toEqual(agents.slice(0, 6).map((a) => layout.of(a).a2aDay(a, day)).sort());
    expect(landed.home.sort()).toEqual([layout.home.a2aTasks, ...agents.slice(0, 6).map((a) => layout.home.a2aTask(`task-${a}`))].sort());
  });

  it('publishes and reads the loaded definitions at home', async () => {
    const { layout } = spaces();
    const defs = agents.map((name) => ({ name, hash: `h-${name}` }) as unknown as AgentDefinition);
    await new LoadedDefinitionsPublisher(client, layout).publish(defs, new Date('2026-11-27T03:00:00Z'));
    const read = await readLoadedDefinitions(client, layout);
    expect([...(read ?? new Map()).keys()].sort()).toEqual(agents);
    expect(await readLoadedDefinitions(client, layout.home.prefix)).toEqual(read);
    const landed = await expectLanded(layout);
    expect(landed.home).toEqual([layout.home.loadedDefinitions]);
    expect(landed.shards.flat()).toEqual([]);
  });
});
