// The intake's pace (scheduler/intake-pacing.ts): the decision table, then a scheduler over a real BullMQ backlog on
// Redis, its hub listing the same 200 agents every round as a hub does until they reply.
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { MAX_BACKLOG_INTERVALS, MAX_BACKLOG_WAIT_MS, nextIntakeDelayMs, startedPerSecond, type IntakePace } from '../scheduler/intake-pacing.ts';
import type { HubAdapter } from '../hub-client/adapter.ts';
import type { BudgetCache } from '../scheduler/budget-cache.ts';
import { ACTIVATION_QUEUE } from '../redis/keys.ts';
import { keyLayout } from '../redis/key-layout.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { schedulerWorld, type SchedulerWorld } from './support/scheduler-world.ts';

const redisUrl = inject('redisUrl');

describe('the intake pace', () => {
  // The backoff given to the decision: its arguments, so the table shows what it was asked.
  const backoff = (baseMs: number, capMs: number, failures: number): number => Math.min(capMs, baseMs * 2 ** (failures - 1));
  const pace = (p: Partial<IntakePace>): IntakePace => ({ pollIntervalMs: 20, consecutiveFailures: 0, longPolling: true, sawWork: true, ...p });
  it('decides the wait before the next round', () => {
    const cases: Array<[string, IntakePace, number]> = [
      ['failing: two intervals, doubling', pace({ consecutiveFailures: 1 }), 40],
      ['failing long: capped at 64 intervals', pace({ consecutiveFailures: 20 }), 1_280],
      ['failing at a 1 s interval: capped at 30 s', pace({ pollIntervalMs: 1_000, consecutiveFailures: 20 }), 30_000],
      ['failing beats a backlog', pace({ consecutiveFailures: 1, backlog: { waiting: 500, startedPerSecond: 100 } }), 40],
      ['an empty long-poll waited on the hub: at once', pace({ sawWork: false }), 0],
      ['an empty plain poll: the interval', pace({ sawWork: false, longPolling: false }), 20],
      ['work, no backlog read: the interval', pace({}), 20],
      ['work, nothing waiting: the interval', pace({ backlog: { waiting: 0, startedPerSecond: 100 } }), 20],
      ['a backlog with no rate yet: the interval', pace({ backlog: { waiting: 500, startedPerSecond: undefined } }), 20],
      ['a backlog that does not move: the interval', pace({ backlog: { waiting: 500, startedPerSecond: 0 } }), 20],
      ['a backlog gone in less than two intervals: the interval', pace({ backlog: { waiting: 3, startedPerSecond: 100 } }), 20],
      ['a backlog: half the time it takes to start', pace({ backlog: { waiting: 10, startedPerSecond: 100 } }), 50],
      ['a large backlog: at most 16 intervals', pace({ backlog: { waiting: 600, startedPerSecond: 400 } }), 20 * MAX_BACKLOG_INTERVALS],
      ['a 1 s interval, 10,000 waiting at 50/s: 16 s', pace({ pollIntervalMs: 1_000, backlog: { waiting: 10_000, startedPerSecond: 50 } }), 16_000],
      ['a 5 s interval, 10,000 waiting at 50/s: at most 30 s', pace({ pollIntervalMs: 5_000, backlog: { waiting: 10_000, startedPerSecond: 50 } }), MAX_BACKLOG_WAIT_MS],
      ['an empty long-poll with a backlog left: at once', pace({ sawWork: false, backlog: { waiting: 500, startedPerSecond: 100 } }), 0],
    ];
    for (const [what, input, ms] of cases) expect(nextIntakeDelayMs(input, backoff), what).toBe(ms);
  });

  it('reads the rate waiting jobs start at from two counts and the adds between them', () => {
    const cases: Array<[string, Parameters<typeof startedPerSecond>, number | undefined]> = [
      ['100 waiting, 50 added, 50 left a second later', [{ waiting: 100, at: 0 }, 50, { waiting: 50, at: 1_000 }], 100],
      ['none started', [{ waiting: 100, at: 0 }, 0, { waiting: 100, at: 500 }], 0],
      ['more waiting than added (follow-ups put back): none started, never negative', [{ waiting: 10, at: 0 }, 0, { waiting: 30, at: 500 }], 0],
      ['no time between the counts', [{ waiting: 10, at: 5 }, 0, { waiting: 0, at: 5 }], undefined],
      ['a clock step backwards', [{ waiting: 10, at: 5 }, 0, { waiting: 0, at: 1 }], undefined],
    ];
    for (const [what, args, rate] of cases) expect(startedPerSecond(...args), what).toBe(rate);
  });
});

describe('an intake over a backlog (real BullMQ on Redis)', () => {
  const closers: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });

  const AGENTS = Array.from({ length: 200 }, (_, i) => `a${String(i).padStart(3, '0')}`);
  const defs = AGENTS.map((name) => ({ name, config: { behavior: {} } }) as unknown as AgentDefinition);
  const budget = { statusMany: () => Promise.resolve(new Map()) } as unknown as BudgetCache;

  /** A hub that lists every agent with one unread mention each round (none ever replies), its rounds' times kept. */
  function listingHub(): { hub: HubAdapter; rounds: number[] } {
    const rounds: number[] = [];
    const hub = {
      agentsWithNotifications: () => {
        rounds.push(Date.now());
        return Promise.resolve(AGENTS.map((name) => ({ id: name, name, notification_count: 1 })));
      },
    } as unknown as HubAdapter;
    return { hub, rounds };
  }

  function started(name: string, jobMs: number | undefined): { world: SchedulerWorld; rounds: number[] } {
    const { hub, rounds } = listingHub();
    const world = schedulerWorld(redisUrl, name, defs, { hub, budget, pollIntervalMs: 20 });
    closers.push(() => world.close());
    if (jobMs !== undefined) {
      // Workers that take a job every few ms: the backlog moves, about 100 a second.
      const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
      const worker = new Worker(ACTIVATION_QUEUE, () => new Promise((r) => setTimeout(r, jobMs)), { connection, prefix: keyLayout(world.prefix).shards[0]!.prefix, concurrency: 1 });
      closers.push(() => connection.quit(), () => worker.close());
    }
    world.scheduler.start();
    return { world, rounds };
  }

  const gaps = (rounds: readonly number[]): number[] => rounds.slice(1).map((t, i) => t - rounds[i]!);

  it('reads the hub less often while a moving backlog waits, each wait at most 16 intervals', { timeout: 60_000 }, async () => {
    const { world, rounds } = started('pace-backlog', 10);
    // Every agent queued at the first round; the worker starts about 100 a second, the hub lists all 200 each round.
    await expect.poll(() => rounds.length, { timeout: 30_000, interval: 20 }).toBeGreaterThanOrEqual(6);
    const counts = await world.queue.counts();
    expect(counts.prioritized).toBeGreaterThan(50); // still a backlog: the hub's listing re-queues those that ran
    const paced = gaps(rounds).slice(2); // the first round queues them, the second reads the first rate
    // Waiting ≈ 200 at ≈ 100 a second: half of 2 s, capped at 16 × 20 ms. Load only lengthens a gap.
    for (const gap of paced) expect(gap).toBeGreaterThanOrEqual(16 * 20 * 0.8);
    expect(Math.max(...gaps(rounds))).toBeLessThan(16 * 20 * 10); // never stuck: the cap holds (generous for a loaded machine)
  });

  it('keeps the configured pace when the backlog does not move (no worker): nothing says it will start sooner', { timeout: 60_000 }, async () => {
    const { rounds } = started('pace-still', undefined);
    await expect.poll(() => rounds.length, { timeout: 30_000, interval: 20 }).toBeGreaterThanOrEqual(12);
    const sorted = gaps(rounds).slice(2).sort((a, b) => a - b);
    // At 20 ms plus the round's own work; a paced wait would be ≥ 256 ms each.
    expect(sorted[Math.floor(sorted.length / 2)]!).toBeLessThan(200);
  });
});
