// Inbox holds read from real BullMQ state on real Redis: at no moment between two runs does an agent's
// inbox look unowned, which is what keeps a mention during a run to exactly one follow-up.
import { randomUUID } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { ActivationJob } from '../scheduler/activation-job.ts';
import { ACTIVATION_QUEUE } from '../redis/keys.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { InboxClaims } from '../scheduler/inbox-claims.ts';
import { RedisKeys } from '../redis/keys.ts';
import { InboxClaimLost } from '../redis/scripts.ts';

const redisUrl = inject('redisUrl');
const logger = pino({ level: 'silent' });
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** A worker whose runs start and end when the test says. */
function gatedWorker(prefix: string) {
  const conn = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const started: Array<Job<ActivationJob>> = [];
  const gates: Array<() => void> = [];
  let onStart: (() => void) | undefined;
  const worker = new Worker<ActivationJob>(
    ACTIVATION_QUEUE,
    async (job) => {
      started.push(job);
      onStart?.();
      await new Promise<void>((r) => gates.push(r));
    },
    { connection: conn, prefix, concurrency: 5 },
  );
  closers.push(async () => conn.quit(), () => worker.close(true));
  return {
    started,
    nextStart: () => new Promise<void>((r) => (onStart = r)),
    finish: () => gates.shift()?.(),
  };
}

function setup() {
  const prefix = `warren-ic-${randomUUID().slice(0, 8)}`;
  const conn = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const queue = new ActivationQueue(conn, { prefix, logger });
  closers.push(async () => conn.quit(), () => queue.close());
  const claims = new InboxClaims(conn, prefix);
  const held = async (agent = 'ann') => (await claims.heldByMany([agent])).get(agent)?.held ?? 0;
  return { prefix, conn, queue, claims, held };
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('inbox holds from BullMQ state', () => {
  it('nobody holds the inbox of an agent with no activation', async () => {
    const { held, claims } = setup();
    expect(await held()).toBe(0);
    expect(await claims.heldByMany([])).toEqual(new Map());
  });

  it('a queued notification run holds everything; a queued exploration run nothing', async () => {
    const { queue, held } = setup();
    await queue.enqueue('ann', 'notification');
    await queue.enqueue('bob', 'exploration');
    expect(await held('ann')).toBe(Infinity);
    expect(await held('bob')).toBe(0);
  });

  it('from start to finish of two runs, the inbox is never unowned', async () => {
    const { prefix, queue, claims, held } = setup();
    const w = gatedWorker(prefix);
    let starting = w.nextStart();
    const first = await queue.enqueue('ann', 'notification');
    await starting;
    // Started, and its claim not written yet: the moment the old claim-at-start left open.
    expect(await held()).toBe(Infinity);
    const claim = claims.forRun('ann', first!, 'attempt-1', 60_000);
    await claim.begin();
    expect(await held()).toBe(Infinity);
    await claim.claim(2);
    expect(await held()).toBe(2);
    const v0 = await claims.version();
    await claim.settle(1);
    expect(await held()).toBe(1);
    expect(await claims.version()).toBeGreaterThan(v0);
    expect((await claims.heldByMany(['ann'])).get('ann')?.version).toBe(await claims.version());

    // New input during the run: BullMQ keeps one follow-up, which will read everything.
    const follow = await queue.enqueue('ann', 'notification');
    expect(follow).toBe(first); // the add was kept as the active job's follow-up
    expect(await held()).toBe(Infinity);

    await claim.release();
    expect(await held()).toBe(Infinity);
    starting = w.nextStart();
    w.finish();
    await starting;
    const second = w.started[1]!;
    expect(second.id).not.toBe(first);
    // The follow-up started and has not claimed: it holds everything, and the first run's claim counts no more.
    expect(await held()).toBe(Infinity);
    const claim2 = claims.forRun('ann', second.id!, 'attempt-1', 60_000);
    await claim.settle(5); // a late write of the old run changes nothing
    await claim2.begin();
    await claim2.claim(1);
    expect(await held()).toBe(1);
    await claim2.settle(1);
    await claim2.release();
    w.finish();
    await until('the agent to have no activation', async () => (await held()) === 0);
  });

  it('an exploration run holds nothing, and a notification follow-up kept behind it holds everything', async () => {
    const { prefix, queue, held } = setup();
    const w = gatedWorker(prefix);
    const starting = w.nextStart();
    await queue.enqueue('ann', 'exploration');
    await starting;
    expect(await held()).toBe(0);
    await queue.enqueue('ann', 'notification');
    expect(await held()).toBe(Infinity);
    w.finish();
  });

  it('a retried attempt drops the notification follow-up kept behind its earlier attempt: it reads everything itself', async () => {
    const { prefix, queue, claims, held, conn } = setup();
    const w = gatedWorker(prefix);
    const starting = w.nextStart();
    const id = await queue.enqueue('ann', 'notification');
    await starting;
    await queue.enqueue('ann', 'notification'); // kept as the follow-up
    const next = new RedisKeys(prefix).dedup('ann').next;
    expect(await conn.hget(next, 'name')).toBe('notification');
    await claims.forRun('ann', id!, 'attempt-2', 60_000).begin(); // as a retried attempt of the same job begins
    expect(await conn.exists(next)).toBe(0);
    expect(await held()).toBe(Infinity);
    await queue.enqueue('ann', 'exploration'); // an exploration follow-up is not the run's to drop
    await claims.forRun('ann', id!, 'attempt-3', 60_000).begin();
    expect(await conn.hget(next, 'name')).toBe('exploration');
    w.finish();
  });

  it('a restarted attempt voids what an earlier attempt claimed, and the earlier one can no longer write', async () => {
    const { queue, claims, held } = setup();
    const id = await queue.enqueue('ann', 'notification');
    const attempt1 = claims.forRun('ann', id!, 'attempt-1', 60_000);
    await attempt1.begin();
    await attempt1.claim(3);
    expect(await held()).toBe(3);
    const attempt2 = claims.forRun('ann', id!, 'attempt-2', 60_000);
    await attempt2.begin();
    expect(await held()).toBe(Infinity);
    // Attempt 1 lost its lock but still runs: its writes change nothing, and it is told so.
    await expect(attempt1.claim(1)).rejects.toBeInstanceOf(InboxClaimLost);
    await expect(attempt1.release()).rejects.toMatchObject({ name: 'InboxClaimLost', step: 'release', agent: 'ann', attempt: 'attempt-1' });
    expect(await held()).toBe(Infinity);
    await attempt2.claim(2);
    await expect(attempt1.settle(2)).rejects.toBeInstanceOf(InboxClaimLost);
    expect(await held()).toBe(2);
  });

  it('the deduplication keys are where BullMQ keeps them', async () => {
    const { prefix, queue, conn } = setup();
    const w = gatedWorker(prefix);
    const starting = w.nextStart();
    const id = await queue.enqueue('ann', 'notification');
    await starting;
    await queue.enqueue('ann', 'notification');
    const keys = new RedisKeys(prefix).dedup('ann');
    expect(await conn.get(keys.current)).toBe(id);
    expect(await conn.hget(`${keys.jobPrefix}${id}`, 'name')).toBe('notification');
    expect(await conn.hget(keys.next, 'name')).toBe('notification');
    w.finish();
  });
});
