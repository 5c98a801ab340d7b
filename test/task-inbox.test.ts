// The task inbox on real Redis: a task is kept until settled, handed to one activation at a time (a retry of the
// same activation gets it back), returned when a claim lapses, and a second delivery of one id adds nothing.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Worker } from 'bullmq';
import { pino } from 'pino';
import { TaskInbox, TaskUnreadable, type AgentTask } from '../scheduler/task-inbox.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { activationIdOf } from '../scheduler/activation-job.ts';
import { ACTIVATION_QUEUE, RedisKeys } from '../redis/keys.ts';

const redisUrl = inject('redisUrl');
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function setup(opts: { maxPending?: number; seenTtlMs?: number } = {}) {
  const prefix = `warren-ti-${randomUUID().slice(0, 8)}`;
  const conn = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  closers.push(async () => conn.quit());
  return { conn, prefix, inbox: new TaskInbox(conn, prefix, opts) };
}

const task = (id: string, createdAt = 1_000, text = `do ${id}`): AgentTask => ({ id, source: 'webhook', name: 'deploys', text, createdAt });

describe('TaskInbox', () => {
  it('keeps a task once per id: a second delivery is a duplicate, also after it was done', async () => {
    const { inbox } = setup();
    expect(await inbox.add('ada', task('webhook:deploys:d1'))).toBe('added');
    expect(await inbox.add('ada', task('webhook:deploys:d1'))).toBe('duplicate');
    const got = await inbox.next('ada', 'act-1', 60_000);
    expect(got?.task.id).toBe('webhook:deploys:d1');
    await inbox.settle('ada', 'webhook:deploys:d1');
    expect(await inbox.add('ada', task('webhook:deploys:d1'))).toBe('duplicate');
    expect(await inbox.pending('ada')).toBe(0);
    // The same id for another agent is another task.
    expect(await inbox.add('grace', task('webhook:deploys:d1'))).toBe('added');
  });

  it('hands the oldest task to one activation at a time; a retry of that activation gets the same task back', async () => {
    const { inbox } = setup();
    await inbox.add('ada', task('b', 2_000));
    await inbox.add('ada', task('a', 1_000));
    const first = await inbox.next('ada', 'act-1', 60_000);
    expect(first).toEqual({ task: task('a', 1_000), claims: 1 });
    // Another activation gets the next one, not the held one.
    expect((await inbox.next('ada', 'act-2', 60_000))?.task.id).toBe('b');
    // A third finds nothing free.
    expect(await inbox.next('ada', 'act-3', 60_000)).toBeUndefined();
    // act-1 retried (same id) is given its task again, without counting a new claim.
    expect(await inbox.next('ada', 'act-1', 60_000)).toEqual({ task: task('a', 1_000), claims: 1 });
  });

  it('returns a task whose claim lapsed to the next activation, counting the claims', async () => {
    const { inbox } = setup();
    await inbox.add('ada', task('a'));
    const now = 10_000;
    expect((await inbox.next('ada', 'act-1', 5_000, now))?.claims).toBe(1);
    expect(await inbox.next('ada', 'act-2', 5_000, now + 4_999)).toBeUndefined();
    expect(await inbox.next('ada', 'act-2', 5_000, now + 5_000)).toEqual({ task: task('a'), claims: 2 });
  });

  it('a released task goes to the next activation without counting a claim', async () => {
    const { inbox } = setup();
    await inbox.add('ada', task('a'));
    await inbox.next('ada', 'act-1', 60_000);
    await inbox.release('ada', 'a', 'act-2'); // not the holder: nothing happens
    expect(await inbox.next('ada', 'act-3', 60_000)).toBeUndefined();
    await inbox.release('ada', 'a', 'act-1');
    expect(await inbox.next('ada', 'act-3', 60_000)).toEqual({ task: task('a'), claims: 1 });
  });

  it.each([
    { name: 'a free task', claimed: false, lapsed: false, waiting: true },
    { name: 'a held task', claimed: true, lapsed: false, waiting: false },
    { name: 'a task whose claim lapsed', claimed: true, lapsed: true, waiting: true },
  ])('agentsWithTasks lists the agent for $name: $waiting', async ({ claimed, lapsed, waiting }) => {
    const { inbox } = setup();
    await inbox.add('ada', task('a'));
    if (claimed) await inbox.next('ada', 'act-1', 1_000, 50_000);
    expect(await inbox.agentsWithTasks(lapsed ? 52_000 : 50_500)).toEqual(waiting ? ['ada'] : []);
  });

  it('agentsWithTasks leaves out an agent whose queued or starting task activation will take the task (no empty follow-up)', async () => {
    const { conn, inbox, prefix } = setup();
    const queue = new ActivationQueue(conn, { prefix, logger: pino({ level: 'silent' }) });
    closers.push(() => queue.close());
    await inbox.add('ada', task('a'));
    expect(await inbox.agentsWithTasks()).toEqual(['ada']);
    // Queued (waiting): it will claim the task.
    const jobId = await queue.enqueue('ada', 'task');
    expect(await inbox.agentsWithTasks()).toEqual([]);
    // Started but not yet at its claim (eligibility, budget): still on its way; a follow-up now would find nothing.
    const workerConn = new Redis(redisUrl, { maxRetriesPerRequest: null });
    closers.push(async () => workerConn.quit());
    const worker = new Worker(ACTIVATION_QUEUE, null, { connection: workerConn, prefix, autorun: false });
    closers.push(() => worker.close());
    const job: { id?: string; timestamp: number } | undefined = await worker.getNextJob('token-1');
    if (!job) throw new Error('the queued job was not handed out');
    expect(job.id).toBe(jobId);
    expect(await inbox.agentsWithTasks()).toEqual([]);
    // It claimed the task; a second task comes: that one needs an activation of its own…
    expect((await inbox.next('ada', activationIdOf(job), 60_000))?.task.id).toBe('a');
    await inbox.add('ada', task('b', 2_000));
    expect(await inbox.agentsWithTasks()).toEqual(['ada']);
    // …which the follow-up BullMQ keeps behind the running job is.
    await queue.enqueue('ada', 'task');
    expect(await inbox.agentsWithTasks()).toEqual([]);
    // A job of another trigger (a notification's) takes no task: the agent is listed.
    const other = setup();
    const q2 = new ActivationQueue(other.conn, { prefix: other.prefix, logger: pino({ level: 'silent' }) });
    closers.push(() => q2.close());
    await other.inbox.add('ada', task('a'));
    await q2.enqueue('ada', 'notification');
    expect(await other.inbox.agentsWithTasks()).toEqual(['ada']);
  });

  it('settling the last task takes the agent off the list', async () => {
    const { inbox } = setup();
    await inbox.add('ada', task('a'));
    expect(await inbox.agentsWithTasks()).toEqual(['ada']);
    await inbox.settle('ada', 'a');
    expect(await inbox.agentsWithTasks()).toEqual([]);
  });

  it('refuses tasks past maxPending, and takes them again once one is done', async () => {
    const { inbox } = setup({ maxPending: 2 });
    expect(await inbox.add('ada', task('a'))).toBe('added');
    expect(await inbox.add('ada', task('b'))).toBe('added');
    expect(await inbox.add('ada', task('c'))).toBe('full');
    await inbox.settle('ada', 'a');
    expect(await inbox.add('ada', task('c'))).toBe('added');
  });

  it('a task whose body cannot be read back is dropped with a typed error, and the next one runs', async () => {
    const { inbox, conn, prefix } = setup();
    await inbox.add('ada', task('a', 1_000));
    await inbox.add('ada', task('b', 2_000));
    await conn.hset(new RedisKeys(prefix).taskBodies('ada'), 'a', '{not json');
    await expect(inbox.next('ada', 'act-1', 60_000)).rejects.toBeInstanceOf(TaskUnreadable);
    expect((await inbox.next('ada', 'act-1', 60_000))?.task.id).toBe('b');
  });

  it('refuses a malformed task before it reaches Redis', async () => {
    const { inbox } = setup();
    await expect(inbox.add('ada', { ...task('a'), source: 'email' as never })).rejects.toThrow(/source/);
    expect(await inbox.pending('ada')).toBe(0);
  });
});
