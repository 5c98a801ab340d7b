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
import { AgentStateStore, utcDay } from '../scheduler/agent-state.ts';
import { ActivationRecords } from '../activation/activation-records.ts';
import { activationRecord } from './support/activation-record.ts';

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

/** Attempt n of a run: BullMQ's lock token and start number. */
const attempt = (n: number) => ({ token: `attempt-${n}`, started: n });

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
    // Started, its inbox not read yet: its job holds all of it.
    expect(await held()).toBe(Infinity);
    const claim = claims.forRun('ann', first!, attempt(1), 60_000);
    expect(await held()).toBe(Infinity);
    await claim.open(2);
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
    const claim2 = claims.forRun('ann', second.id!, attempt(1), 60_000);
    await claim.settle(5); // a late write of the old run changes nothing
    await claim2.open(1);
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

  it('a run that read its inbox drops the notification follow-up kept before the read: it read everything itself', async () => {
    const { prefix, queue, claims, held, conn } = setup();
    const w = gatedWorker(prefix);
    const starting = w.nextStart();
    const id = await queue.enqueue('ann', 'notification');
    await starting;
    await queue.enqueue('ann', 'notification'); // kept as the follow-up
    const next = new RedisKeys(prefix).dedup('ann').next;
    expect(await conn.hget(next, 'name')).toBe('notification');
    await claims.forRun('ann', id!, attempt(2), 60_000).open(1); // as a retried attempt of the same job reads its inbox
    expect(await conn.exists(next)).toBe(0);
    expect(await held()).toBe(1);
    await queue.enqueue('ann', 'exploration'); // an exploration follow-up is not the run's to drop
    await claims.forRun('ann', id!, attempt(3), 60_000).open(1);
    expect(await conn.hget(next, 'name')).toBe('exploration');
    w.finish();
  });

  it('a follow-up kept while an earlier attempt\'s claim stood is kept: it may be for what came after the read', async () => {
    const { prefix, queue, claims, held, conn } = setup();
    const w = gatedWorker(prefix);
    const starting = w.nextStart();
    const id = await queue.enqueue('ann', 'notification');
    await starting;
    await claims.forRun('ann', id!, attempt(1), 60_000).open(2); // attempt 1 read two, then died without letting go
    expect(await held()).toBe(2);
    // Attempt 2 reads its inbox; a third mention comes after its read, and the intake (seeing attempt 1's claim of
    // two) keeps a follow-up for it.
    await queue.enqueue('ann', 'notification');
    const next = new RedisKeys(prefix).dedup('ann').next;
    await claims.forRun('ann', id!, attempt(2), 60_000).open(2);
    expect(await conn.hget(next, 'name')).toBe('notification');
    expect(await held()).toBe(Infinity); // the follow-up will read everything
    w.finish();
  });

  it('a later attempt takes over an earlier one\'s claim once it has read the inbox, and the earlier one can no longer write', async () => {
    const { queue, claims, held } = setup();
    const id = await queue.enqueue('ann', 'notification');
    const attempt1 = claims.forRun('ann', id!, attempt(1), 60_000);
    await attempt1.open(3);
    expect(await held()).toBe(3);
    const attempt2 = claims.forRun('ann', id!, attempt(2), 60_000);
    expect(await held()).toBe(3); // attempt 2 is reading: attempt 1's claim stands until then
    await attempt2.open(2);
    expect(await held()).toBe(2);
    // Attempt 1 lost its lock but still runs: its writes change nothing, and it is told so.
    await expect(attempt1.open(1)).rejects.toBeInstanceOf(InboxClaimLost);
    await expect(attempt1.release()).rejects.toMatchObject({ name: 'InboxClaimLost', step: 'release', agent: 'ann', attempt: 'attempt-1' });
    await expect(attempt1.settle(2)).rejects.toBeInstanceOf(InboxClaimLost);
    expect(await held()).toBe(2);
    // Attempt 2 is over and let go; attempt 1, still reading, opens late: a later attempt held the inbox, so it is refused.
    await attempt2.release();
    const late = claims.forRun('ann', id!, attempt(1), 60_000);
    await expect(late.open(1)).rejects.toMatchObject({ name: 'InboxClaimLost', step: 'claim' });
    expect(await held()).toBe(Infinity);
  });

  it('a run that never read its inbox (the read failed, the budget said no) has nothing to release', async () => {
    const { queue, claims, held, conn, prefix } = setup();
    const id = await queue.enqueue('ann', 'notification');
    const attempt1 = claims.forRun('ann', id!, attempt(1), 60_000);
    await attempt1.open(2);
    await attempt1.release();
    const v = await claims.version();
    const attempt2 = claims.forRun('ann', id!, attempt(2), 60_000);
    expect(attempt2.ending().call).toBeUndefined();
    await expect(attempt2.release()).resolves.toBeUndefined();
    expect(await claims.version()).toBe(v); // nothing was sent
    expect(await conn.hget(new RedisKeys(prefix).inboxHold('ann'), 'attempt')).toBe('attempt-1');
    expect(await held()).toBe(Infinity);
  });

  it('the phase scripts keep each guarantee: the claim with the kept answers, the answer dropped even by a lost claim, the release with the record', async () => {
    const { prefix, conn, queue, claims, held } = setup();
    const k = new RedisKeys(prefix);
    const id = await queue.enqueue('ann', 'notification');
    const attempt1 = claims.forRun('ann', id!, attempt(1), 60_000);
    // Opened in one command with what the activation reads of the agent as it starts, and what the outbox kept for
    // the notifications it will answer, in their order.
    await conn.hset(k.agentPaused, 'ann', '1');
    await conn.hset(k.agentDay(utcDay()), 'ann|comments', '4');
    await conn.set(k.outbox('ann', 'n2'), 'kept answer');
    expect(await held()).toBe(Infinity);
    expect(await attempt1.open(3, [k.outbox('ann', 'n1'), k.outbox('ann', 'n2')])).toEqual({ facts: { hold: { paused: true, backoffUntil: undefined }, today: { posts: 0, comments: 4 } }, kept: [undefined, 'kept answer'] });
    expect(await held()).toBe(3);
    // Answered: the kept answer goes with the settle.
    await attempt1.settle(1, k.outbox('ann', 'n2'));
    expect(await conn.exists(k.outbox('ann', 'n2'))).toBe(0);
    expect(await held()).toBe(2);

    // A later attempt read the inbox: the first one's claim is lost, and still its answer on the hub leaves nothing kept.
    const attempt2 = claims.forRun('ann', id!, attempt(2), 60_000);
    await attempt2.open(1);
    await conn.set(k.outbox('ann', 'n3'), 'posted by the old attempt');
    await expect(attempt1.settle(1, k.outbox('ann', 'n3'))).rejects.toMatchObject({ name: 'InboxClaimLost', step: 'settle' });
    expect(await conn.exists(k.outbox('ann', 'n3'))).toBe(0);
    await expect(attempt1.open(1, [k.outbox('ann', 'n1')])).rejects.toBeInstanceOf(InboxClaimLost);
    expect(await held()).toBe(1);

    // The end of attempt 2 releases with its state and record, in one command; release() then sends nothing more.
    const state = new AgentStateStore(conn, prefix);
    const records = new ActivationRecords(conn, prefix);
    const ending = attempt2.ending();
    const ended = await records.addEnding(activationRecord({ agent: 'ann', activation_id: 'act-2', started_at: new Date().toISOString() }), (t) => t, { activated: state.activatedCall('ann', { tokensInput: 5, tokensOutput: 1, costUsd: 0 }, { at: 42, resetBackoff: true }), release: ending.call });
    ending.sent();
    expect(ended).toMatchObject({ streakEnded: false, releaseLost: false });
    expect(await conn.hget(k.inboxHold('ann'), 'count')).toBeNull(); // released: it holds nothing it has not read
    expect((await state.getMany(['ann'])).get('ann')?.lastActivatedAt).toBe(42);
    expect((await records.recent({ agent: 'ann' })).map((r) => r.activation_id)).toEqual(['act-2']);
    const attempt3 = claims.forRun('ann', id!, attempt(3), 60_000);
    await attempt3.open(1);
    // Sent with the end already: were it sent again, attempt 3's claim would answer that it is lost.
    await expect(attempt2.release()).resolves.toBeUndefined();

    // The end of a run whose claim was lost: the state and record are written all the same, the loss reported.
    const late = attempt1.ending();
    const lost = await records.addEnding(activationRecord({ agent: 'ann', activation_id: 'act-1', started_at: new Date().toISOString() }), (t) => t, { release: late.call });
    expect(lost).toMatchObject({ releaseLost: true });
    expect((await records.recent({ agent: 'ann' })).map((r) => r.activation_id)).toEqual(['act-1', 'act-2']);
    await expect(attempt1.release()).rejects.toBeInstanceOf(InboxClaimLost); // not sent with an end: sent now
  });

  it('an answer that was the run\'s last write leaves the outbox with the end, or with release() when the end did not run, claim lost or not', async () => {
    const { prefix, conn, queue, claims, held } = setup();
    const k = new RedisKeys(prefix);
    const records = new ActivationRecords(conn, prefix);
    const record = (id: string) => activationRecord({ agent: 'ann', activation_id: id, started_at: new Date().toISOString() });
    const id = await queue.enqueue('ann', 'notification');

    // Carried by the end: nothing is sent at settleWithEnd, the end drops the answer and releases.
    const attempt1 = claims.forRun('ann', id!, attempt(1), 60_000);
    await attempt1.open(1);
    await conn.set(k.outbox('ann', 'n1'), 'the answer');
    attempt1.settleWithEnd(k.outbox('ann', 'n1'));
    expect(() => attempt1.settleWithEnd(k.outbox('ann', 'n0'))).toThrow(/only the run's last answer/); // the end carries one
    expect(await conn.exists(k.outbox('ann', 'n1'))).toBe(1);
    expect(await held()).toBe(1);
    const ending1 = attempt1.ending();
    expect(await records.addEnding(record('act-1'), (t) => t, { outbox: ending1.outbox, release: ending1.call })).toMatchObject({ releaseLost: false });
    ending1.sent();
    expect(await conn.exists(k.outbox('ann', 'n1'))).toBe(0);
    expect(await conn.hget(k.inboxHold('ann'), 'count')).toBeNull();

    // A later attempt took the claim: the end reports the loss, and the answer on the hub is dropped all the same.
    const attempt2 = claims.forRun('ann', id!, attempt(2), 60_000);
    await attempt2.open(1);
    await conn.set(k.outbox('ann', 'n2'), 'answer of a stale attempt');
    attempt2.settleWithEnd(k.outbox('ann', 'n2'));
    await claims.forRun('ann', id!, attempt(3), 60_000).open(1);
    const ending2 = attempt2.ending();
    expect(await records.addEnding(record('act-2'), (t) => t, { outbox: ending2.outbox, release: ending2.call })).toMatchObject({ releaseLost: true });
    expect(await conn.exists(k.outbox('ann', 'n2'))).toBe(0);

    // The end's command never ran (Redis failed it): release() drops the answer, then releases.
    const attempt4 = claims.forRun('ann', id!, attempt(4), 60_000);
    await attempt4.open(1);
    await conn.set(k.outbox('ann', 'n4'), 'the answer');
    attempt4.settleWithEnd(k.outbox('ann', 'n4'));
    await attempt4.release();
    expect(await conn.exists(k.outbox('ann', 'n4'))).toBe(0);
    expect(await conn.hget(k.inboxHold('ann'), 'count')).toBeNull();
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
