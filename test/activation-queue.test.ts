// Per-agent deduplication on real BullMQ + Redis: one running and at most one pending activation per agent.
import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { ActivationJob } from '../scheduler/activation-job.ts';
import { ACTIVATION_QUEUE } from '../redis/keys.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { AgentStateStore, utcDay, type ExplorationFacts } from '../scheduler/agent-state.ts';
import { AGENTS_PER_SCRIPT } from '../redis/agent-pages.ts';
import { RedisKeys } from '../redis/keys.ts';
import { activationRetryDelay, MAX_RETRY_AFTER_MS, NO_RETRY } from '../scheduler/retry-delay.ts';
import { ACTIVATION_WORKER_SETTINGS } from '../activation/worker.ts';
import { startPrivateRedis } from './support/redis-server.ts';

const redisUrl = inject('redisUrl');
const logger = pino({ level: 'silent' });
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function setup(): { queue: ActivationQueue; prefix: string; conn: Redis } {
  const prefix = `warren-q-${randomUUID().slice(0, 8)}`;
  const conn = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const queue = new ActivationQueue(conn, { prefix, logger });
  closers.push(async () => conn.quit(), () => queue.close());
  return { queue, prefix, conn };
}

describe('activation queue', () => {
  it('absorbs repeated enqueues while an activation waits', async () => {
    const { queue } = setup();
    const ids = new Set<string | undefined>();
    for (let i = 0; i < 50; i++) ids.add(await queue.enqueue('alice', 'notification'));
    ids.add(await queue.enqueue('bob', 'notification'));
    expect(ids.size).toBe(2);
    expect(await queue.queue.getJobCountByTypes('wait', 'prioritized')).toBe(2);
  });

  it('queues exactly one follow-up for input that arrives while the agent runs, never two at once', async () => {
    const { queue, prefix } = setup();
    let running = 0;
    let maxRunning = 0;
    const runs: number[] = [];
    let release!: () => void;
    const firstRunGate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const firstStarted = new Promise<void>((r) => (started = r));
    const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const worker = new Worker<ActivationJob>(
      ACTIVATION_QUEUE,
      async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        runs.push(Date.now());
        if (runs.length === 1) {
          started();
          await firstRunGate;
        }
        running--;
      },
      { connection: conn, prefix, concurrency: 10 },
    );
    closers.push(async () => conn.quit(), () => worker.close());

    await queue.enqueue('alice', 'notification');
    await firstStarted;
    for (let i = 0; i < 20; i++) await queue.enqueue('alice', 'notification');
    release();
    const deadline = Date.now() + 5_000;
    while (runs.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300)); // would a third run appear?
    expect(runs).toHaveLength(2);
    expect(maxRunning).toBe(1);
  });

  it('puts ids only into job data', async () => {
    const { queue } = setup();
    const id = await queue.enqueue('alice', 'notification');
    const job = await queue.queue.getJob(id!);
    expect(Object.keys(job!.data).sort()).toEqual(['agent', 'enqueuedAt', 'trigger']);
    expect(job!.opts.priority).toBe(1);
  });

  it('hands waiting notifications to workers before exploration, whatever the order they were queued in', async () => {
    const { queue, prefix } = setup();
    await queue.enqueue('explorer-1', 'exploration');
    await queue.enqueue('explorer-2', 'exploration');
    await queue.enqueue('mentioned-1', 'notification');
    await queue.enqueue('explorer-3', 'exploration');
    await queue.enqueue('mentioned-2', 'notification');
    const order: string[] = [];
    const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const worker = new Worker<ActivationJob>(ACTIVATION_QUEUE, (job) => Promise.resolve(void order.push(job.data.agent)), { connection: conn, prefix, concurrency: 1 });
    closers.push(async () => conn.quit(), () => worker.close());
    const deadline = Date.now() + 5_000;
    while (order.length < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['mentioned-1', 'mentioned-2', 'explorer-1', 'explorer-2', 'explorer-3']);
  });
});

describe('retries', () => {
  it('waits out exponential backoff with jitter, or what the provider asked for (capped at an hour)', () => {
    expect([1, 2, 3].map((n) => activationRetryDelay(n, new Error('x'), () => 0))).toEqual([1_000, 2_000, 4_000]);
    expect([1, 2, 3].map((n) => activationRetryDelay(n, new Error('x'), () => 0.999_999))).toEqual([1_999, 3_999, 7_999]);
    const limited = Object.assign(new Error('rate limited'), { retryAfterMs: 90_000 });
    expect(activationRetryDelay(1, limited, () => 0)).toBe(90_000);
    expect(activationRetryDelay(1, Object.assign(new Error('x'), { retryAfterMs: 10 }), () => 0)).toBe(1_000); // never sooner than the backoff
    expect(activationRetryDelay(1, Object.assign(new Error('x'), { retryAfterMs: MAX_RETRY_AFTER_MS }), () => 0)).toBe(MAX_RETRY_AFTER_MS);
    expect(activationRetryDelay(1, Object.assign(new Error('x'), { retryAfterMs: 5 * 3_600_000 }), () => 0)).toBe(NO_RETRY); // fails now
    expect(activationRetryDelay(1, Object.assign(new Error('x'), { retryAfterMs: 'soon' }), () => 0)).toBe(1_000);
  });

  it('a failed activation that names a reset time is tried again no sooner, on real BullMQ', async () => {
    const { queue, prefix } = setup();
    const starts: number[] = [];
    const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const worker = new Worker<ActivationJob>(
      ACTIVATION_QUEUE,
      () => {
        starts.push(Date.now());
        if (starts.length === 1) throw Object.assign(new Error('usage limit; resets soon'), { retryAfterMs: 2_500 });
        return Promise.resolve();
      },
      { connection: conn, prefix, settings: ACTIVATION_WORKER_SETTINGS },
    );
    closers.push(async () => conn.quit(), () => worker.close());
    await queue.enqueue('alice', 'notification');
    const deadline = Date.now() + 15_000;
    while (starts.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(starts).toHaveLength(2);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(2_500);
  });
});

describe('exploration facts', () => {
  it('leaves out agents with an activation queued or running, and reads the others\' state and today\'s writes', async () => {
    const { queue, prefix, conn } = setup();
    const state = new AgentStateStore(conn, prefix);
    expect(await state.explorationFacts([])).toEqual([]);
    const empty: ExplorationFacts = { lastActivatedAt: undefined, paused: false, backoffUntil: undefined, today: { posts: 0, comments: 0 } };
    expect(await state.explorationFacts(['alice', 'bob'])).toEqual([empty, empty]);
    await queue.enqueue('alice', 'notification');
    await state.recordActivated('bob', { tokensInput: 1, tokensOutput: 1, costUsd: 0 }, { at: 1_000 });
    await state.setPaused('bob', true);
    await state.holdUntil('bob', 5_000);
    const keys = new RedisKeys(prefix);
    await conn.hset(keys.agentDay(utcDay()), 'bob|posts', 2, 'bob|comments', 3);
    await conn.hset(keys.agentDay(utcDay()), 'dave|comments', 4);
    await state.recordActivated('erin', { tokensInput: 0, tokensOutput: 0, costUsd: 0 }, { at: 7_000 });
    await conn.hdel(keys.agentDay(utcDay()), 'erin|posts', 'erin|comments');
    const facts = await state.explorationFacts(['alice', 'bob', 'carol', 'dave', 'erin', 'alice']);
    expect(facts).toEqual([
      undefined,
      { lastActivatedAt: 1_000, paused: true, backoffUntil: 5_000, today: { posts: 2, comments: 3 } },
      empty,
      { ...empty, today: { posts: 0, comments: 4 } },
      { ...empty, lastActivatedAt: 7_000 },
      undefined,
    ]);
  });

  it('reads many agents a bounded page per command, in the order asked', async () => {
    // A Redis of its own: the commands it counts are this test's alone (the run's shared one serves other files).
    const own = await startPrivateRedis();
    const conn = new Redis(own.url);
    try {
      const prefix = `facts-${randomUUID().slice(0, 8)}`;
      const state = new AgentStateStore(conn, prefix);
      const names = Array.from({ length: 2_500 }, (_, i) => `agent-${i}`);
      for (const [i, at] of [[999, 41], [1_000, 42], [2_499, 43]] as const) await state.recordActivated(`agent-${i}`, { tokensInput: 0, tokensOutput: 0, costUsd: 0 }, { at });
      await state.explorationFacts(['warm-the-script-cache']);
      const scriptCalls = async (): Promise<number> => {
        const info = await conn.info('commandstats');
        return Number(/cmdstat_evalsha:calls=(\d+)/.exec(info)?.[1] ?? 0) + Number(/cmdstat_eval:calls=(\d+)/.exec(info)?.[1] ?? 0);
      };
      const before = await scriptCalls();
      const facts = await state.explorationFacts(names);
      // One command per page of AGENTS_PER_SCRIPT agents, never one over all of them.
      expect((await scriptCalls()) - before).toBe(Math.ceil(names.length / AGENTS_PER_SCRIPT));
      expect(facts).toHaveLength(2_500);
      expect([facts[999]?.lastActivatedAt, facts[1_000]?.lastActivatedAt, facts[2_499]?.lastActivatedAt, facts[998]?.lastActivatedAt]).toEqual([41, 42, 43, undefined]);
      expect(facts[0]).toEqual({ lastActivatedAt: undefined, paused: false, backoffUntil: undefined, today: { posts: 0, comments: 0 } });
    } finally {
      conn.disconnect();
      await own.stop();
    }
  });
});
