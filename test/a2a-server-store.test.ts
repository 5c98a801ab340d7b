// The Redis A2A task store on a real Redis: a task only moves forward and its end is written once, however many
// turns tell it (a retried activation after a SIGKILL ends the task again: its caller hears the first end only);
// each caller sees only its own tasks.
import { randomUUID } from 'node:crypto';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { A2ANews, type A2ANewsItem } from '../daemon/a2a/a2a-news.ts';
import { RedisA2ATaskStore } from '../daemon/a2a/a2a-task-store.ts';
import { A2ATaskTurns, waitingTask } from '../daemon/a2a/a2a-task-turns.ts';
import { waitFor } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
const conns: Redis[] = [];
afterEach(() => {
  for (const c of conns.splice(0)) c.disconnect();
});
const conn = (): Redis => {
  const c = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  conns.push(c);
  return c;
};
const as = (caller: string): ServerCallContext => new ServerCallContext({ user: { isAuthenticated: true, userName: caller } });
const submitted = (id: string): Task => ({ id, contextId: 'ctx', status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [], metadata: { agent: 'clerk' } });

describe('RedisA2ATaskStore', () => {
  it("the SDK's echo of a status warren forwarded never overwrites a newer word at the same stage (a task waiting for approval)", async () => {
    // The relay forwards WORKING to a streaming caller; the SDK saves what it forwarded, possibly after the run has
    // since written WORKING with "waiting for a person's approval": that newer word must stay.
    const store = new RedisA2ATaskStore(conn(), `a2a-store-${randomUUID().slice(0, 8)}`);
    const id = randomUUID();
    await store.save(submitted(id), as('ci'));
    const working: Task = { ...submitted(id), status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() } };
    expect(await store.write(working, 'clerk', 'ci')).toBe(true);
    const waiting = waitingTask(working, 'ap_1', ['hub_search'], new Date());
    expect(await store.write(waiting, 'clerk', 'ci')).toBe(true);
    await store.save(working, as('ci')); // the SDK's late echo
    const text = (t: Task | undefined): string => (t?.status?.message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    expect(text(await store.load(id, as('ci')))).toContain("waiting for a person's approval of hub_search (approval ap_1)");
    // The SDK moving a task forward (a cancel's CANCELED) is still kept.
    await store.save({ ...working, status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: new Date().toISOString() } }, as('ci'));
    expect((await store.load(id, as('ci')))?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
  });

  it('answers once: a second end (a retried turn) is refused and announced to no one', async () => {
    const prefix = `a2a-store-${randomUUID().slice(0, 8)}`;
    const store = new RedisA2ATaskStore(conn(), prefix);
    const news = new A2ANews(conn(), conn(), prefix, pino({ level: 'silent' }));
    await news.start();
    const heard: A2ANewsItem[] = [];
    const id = randomUUID();
    news.listen(id, (n) => heard.push(n));
    await store.save(submitted(id), as('ci'));
    const turns = new A2ATaskTurns({ store, news, redact: (t) => t, logger: pino({ level: 'silent' }) });
    const inboxTask = { id: `a2a:${id}`, source: 'a2a' as const, name: 'ci', text: 'Summarise.', createdAt: Date.now(), meta: { taskId: id, contextId: 'ctx' } };
    const watch = await turns.start('clerk', inboxTask, 'act-1');
    watch.close();
    await turns.end('clerk', inboxTask, { kind: 'answered', text: 'First answer.', activationId: 'act-1' });
    await turns.end('clerk', inboxTask, { kind: 'answered', text: 'Second answer.', activationId: 'act-1' });
    await turns.end('clerk', inboxTask, { kind: 'failed', message: 'late failure', activationId: 'act-1' });
    await waitFor('the news of WORKING and the end', () => heard.length >= 2 || undefined, 10_000);
    const got = await store.load(id, as('ci'));
    expect(got?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got?.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === 'text' ? p.content.value : ''))).toEqual(['First answer.']);
    // The SDK writing an older state afterwards changes nothing.
    await store.save(submitted(id), as('ci'));
    expect((await store.load(id, as('ci')))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Another caller sees nothing of it.
    expect(await store.load(id, as('someone-else'))).toBeUndefined();
    expect((await store.list({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined, includeArtifacts: false }, as('someone-else'))).tasks).toEqual([]);
    expect((await store.recent(10)).map((t) => [t.agent, t.caller, t.state])).toEqual([['clerk', 'ci', 'completed']]);
    // Two announcements only: WORKING and the first end (a marker sent last on the same connection arrives after
    // anything sent before it).
    await news.publish({ kind: 'cancel', taskId: id });
    await waitFor('the marker', () => heard.some((n) => n.kind === 'cancel') || undefined, 10_000);
    expect(heard).toEqual([{ kind: 'changed', taskId: id }, { kind: 'changed', taskId: id }, { kind: 'cancel', taskId: id }]);
  });
});
