// The budget an agent's run read with its inbox stands for the hub's answer at the next intake while it is younger
// than the budget's TTL (scheduler/budget-cache.ts), on whichever daemon; older, the intake asks /system/budget-health
// only of an agent last read short of healthy, and leaves the others to their run, which reads it with its inbox.
// Real Redis and BullMQ; a counting hub.
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { HubAdapter } from '../hub-client/adapter.ts';
import type { BudgetStatus } from '../hub-client/types.ts';
import { RedisKeys } from '../redis/keys.ts';
import { addActivationRecordCall, redisScripts } from '../redis/scripts.ts';
import type { AgentStateStore } from '../scheduler/agent-state.ts';
import { BudgetCache } from '../scheduler/budget-cache.ts';
import { waitFor } from './support/hub-api.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { schedulerWorld } from './support/scheduler-world.ts';

const redisUrl = inject('redisUrl');
const logger = pino({ level: 'silent' });
const TTL_MS = 30_000;
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function agent(name: string): AgentDefinition {
  const config = AgentConfigSchema.parse({ name, description: 'x', type: 'llm', capabilities: { grants: [] }, brain: { model: 'm' } });
  return { name, config, systemPrompt: 'x', files: { config: 'c', prompt: 'p' } };
}

/**
 * A scheduler on its own prefix whose hub says `bob` has one unread mention and answers budget-health `hubSays`;
 * `before` runs before its first intake round. Resolves once that round queued bob or held him back.
 */
async function world(hubSays: BudgetStatus, before: (w: { state: AgentStateStore; conn: Redis; keys: RedisKeys; runRead: (status: BudgetStatus, at: number) => Promise<unknown> }) => Promise<unknown> = () => Promise.resolve()) {
  const asked: string[] = [];
  const hub = {
    capabilities: { longPoll: false },
    agentsWithNotifications: () => Promise.resolve([{ name: 'bob', notification_count: 1 }]),
    budgetHealth: (a: string) => {
      asked.push(a);
      return Promise.resolve({ status: hubSays });
    },
  } as unknown as HubAdapter;
  let decided!: () => void;
  const round = new Promise<void>((resolve) => (decided = resolve));
  const w = schedulerWorld(redisUrl, 'budget-seen', [agent('bob')], { hub, budget: new BudgetCache(hub, { ttlMs: TTL_MS, logger }), onHeld: () => decided() });
  closers.push(() => w.close());
  const { scheduler, queue, state, conn, held, prefix } = w;
  const queued: string[] = [];
  const enqueue = queue.enqueue.bind(queue);
  queue.enqueue = async (...args) => {
    queued.push(args[0]);
    const id = await enqueue(...args);
    decided();
    return id;
  };
  const keys = new RedisKeys(prefix);
  /** Stores a reading as a run's end does: its record and its budget part, in the one end-of-activation command. */
  const runRead = (status: BudgetStatus, at: number): Promise<unknown> =>
    redisScripts(conn).activationEnd({
      record: addActivationRecordCall([keys.activationRecords('bob'), keys.allActivationRecords, keys.recordBytes], '{}', keys.activationRecordsChannel, { perAgent: 10, overall: 10, perAgentBytes: 1e6, overallBytes: 1e6, maxAgeMs: 86_400_000 }, Date.now()),
      budget: state.budgetSeenCall('bob', { status, at }),
    });
  await before({ state, conn, keys, runRead });
  scheduler.start(); // its first round comes at once; the next one a minute later
  await round;
  return { asked, queued, held, state, conn, keys, runRead };
}

describe('the budget a run read, at the next intake', () => {
  const now = Date.now();
  it.each([
    // The run reads the budget with its inbox and is skipped when short (test/local-hub-round-trips.test.ts).
    ['no run read it: queued, the hub not asked (its run reads the budget)', undefined, 'critical', [], ['bob']],
    ['a healthy reading younger than the TTL: queued, the hub not asked', { status: 'healthy', age: 1_000 }, 'critical', [], ['bob']],
    ['a critical reading younger than the TTL: held, the hub not asked', { status: 'critical', age: 1_000 }, 'healthy', [], []],
    ['a healthy reading older than the TTL: queued, the hub not asked (its run reads the budget)', { status: 'healthy', age: TTL_MS + 1_000 }, 'critical', [], ['bob']],
    ['a critical reading older than the TTL: the hub is asked, and its answer decides', { status: 'critical', age: TTL_MS + 1_000 }, 'healthy', ['bob'], ['bob']],
    ['a critical reading older than the TTL, still critical: held', { status: 'critical', age: TTL_MS + 1_000 }, 'critical', ['bob'], []],
    ['a warning reading older than the TTL: the hub is asked', { status: 'warning', age: TTL_MS + 1_000 }, 'healthy', ['bob'], ['bob']],
    ['a warning reading: a mention still runs (only exploration waits from warning on)', { status: 'warning', age: 1_000 }, 'critical', [], ['bob']],
  ] as const)('%s', async (_what, reading, hubSays, asked, queued) => {
    const w = await world(hubSays, async ({ runRead }) => reading && runRead(reading.status, now - reading.age));
    expect(w.queued).toEqual(queued);
    expect(w.asked).toEqual(asked);
    if (queued.length === 0) await waitFor('bob held back for his budget', async () => ((await w.held.read(['bob'])).get('bob')?.reason === 'budget' ? true : undefined));
  });

  it('a reading this version cannot read is no reading: queued, its run reads the budget', async () => {
    const w = await world('critical', ({ conn, keys }) => conn.hset(keys.agentBudgetSeen, 'bob', 'splendid|12'));
    expect(w.queued).toEqual(['bob']);
    expect(w.asked).toEqual([]);
  });

  it.each([
    // [what, told by the hub (age), read by a run (age), asked]
    ['nothing known', undefined, undefined, false],
    ['told healthy, long ago', { status: 'healthy', age: 120_000 }, undefined, false],
    ['told critical, long ago', { status: 'critical', age: 120_000 }, undefined, true],
    ['told warning, long ago', { status: 'warning', age: 120_000 }, undefined, true],
    ['told critical long ago, a run read healthy since (also long ago)', { status: 'critical', age: 120_000 }, { status: 'healthy', age: 60_000 }, false],
    ['a run read critical long ago, told healthy since', { status: 'healthy', age: 60_000 }, { status: 'critical', age: 120_000 }, false],
    ['a run read critical long ago, nothing told', undefined, { status: 'critical', age: 120_000 }, true],
  ] as const)('when the run decides, the hub is asked only of an agent last read short: %s', async (_what, told, read, asked) => {
    let answer: BudgetStatus = told?.status ?? 'healthy';
    const calls: string[] = [];
    const hub = { budgetHealth: (a: string) => (calls.push(a), Promise.resolve({ status: answer })) } as unknown as HubAdapter;
    const cache = new BudgetCache(hub, { ttlMs: TTL_MS, logger });
    if (told) expect(await cache.status('bob', now - told.age)).toBe(told.status); // told then, as the hub answered
    calls.length = 0;
    answer = 'healthy';
    const statuses = await cache.statusMany(['bob'], { seen: () => read && { status: read.status, at: now - read.age }, now, runDecides: true });
    expect(calls).toEqual(asked ? ['bob'] : []);
    expect(statuses.get('bob')).toBe(asked ? 'healthy' : undefined);
  });

  it('the newer of what the daemon was told and what a run read decides', async () => {
    const hub = { budgetHealth: () => Promise.resolve({ status: 'critical' }) } as unknown as HubAdapter;
    const cache = new BudgetCache(hub, { ttlMs: TTL_MS, logger });
    expect(await cache.status('bob', now - 10_000)).toBe('critical'); // told 10 s ago
    const ask = (seen: { status: BudgetStatus; at: number }) => cache.statusMany(['bob'], { seen: () => seen, now }).then((m) => m.get('bob'));
    expect(await ask({ status: 'healthy', at: now - 15_000 })).toBe('critical'); // read before it was told
    expect(await ask({ status: 'healthy', at: now - 5_000 })).toBe('healthy'); // read since: the limit was raised
    expect(await ask({ status: 'critical', at: now - 8_000 })).toBe('healthy');
  });

  it('a run that read the budget earlier and ends later leaves the fresher reading', async () => {
    const w = await world('healthy');
    await w.runRead('critical', now - 1_000);
    await w.runRead('healthy', now - 5_000);
    expect(await w.conn.hget(w.keys.agentBudgetSeen, 'bob')).toBe(`critical|${now - 1_000}`);
    expect((await w.state.holdMany(['bob'])).get('bob')?.budgetSeen).toEqual({ status: 'critical', at: now - 1_000 });
  });
});
