// A task from outside the hub whose run stops for approval (README "Approvals"): an A2A caller's task does not look
// stuck or answered while the call waits. It stays WORKING with a status message naming what waits and the
// approval's id; once someone approves, the run that goes on in the daemon completes the caller's task with its
// answer (GetTask shows it), and a denial completes it with what the model made of the operator's note.
import { TaskState, type Task } from '@a2a-js/sdk';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ApprovalDesk } from '../scheduler/approval-desk.ts';
import { ApprovalStore } from '../scheduler/approval-store.ts';
import { TaskInbox } from '../scheduler/task-inbox.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { a2aClient, textMessage } from './support/a2a-caller.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

/** Each wait's ceiling: the machine may be busy (a daemon in this process, others beside it). */
const WAIT_MS = 60_000;

const redisUrl = inject('redisUrl');
let fake: FakeOpenAI;
let conn: Redis;
const harnesses: Harness[] = [];

beforeAll(async () => {
  fake = await startFakeOpenAI();
  conn = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  // The model searches the hub first (a call that needs approval here), then answers with what it got.
  fake.setResponder((req) => {
    const messages = (req.body as { messages: Array<{ role: string; content: string | null }> }).messages;
    const result = messages.findLast((m) => m.role === 'tool');
    if (result) return { content: `Searched. The tool said: ${result.content}` };
    return { tool_calls: [{ name: 'hub_search', arguments: { query: 'deploy 4711' } }] };
  });
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.stop();
});
afterAll(async () => {
  conn?.disconnect();
  await fake?.close();
});

async function start(): Promise<Harness> {
  const config = `name: clerk
description: Looks deploys up.
type: llm
brain: {provider: openai, model: fake-gpt, api_base: ${fake.url}, api_key_env: CLERK_MODEL_KEY}
capabilities: {grants: [hub:read]}
approvals: {tools: [hub_search]}
a2a: {serve: true}
`;
  const h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ clerk: { config, prompt: 'You are a clerk.' } }, { withGreeter: false }), env: { CLERK_MODEL_KEY: 'sk-clerk' } });
  harnesses.push(h);
  return h;
}

const statusText = (t: Task): string => (t.status?.message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const answerOf = (t: Task): string => t.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

describe('an A2A task whose run waits for approval', { timeout: PROCESS_TEST_MS }, () => {
  it.each([
    { decision: 'approved' as const, note: '', answer: /^Searched\. The tool said: (?!Not run)/ },
    { decision: 'denied' as const, note: 'no searching today', answer: /^Searched\. The tool said: Not run: a person denied this call to hub_search\. Their note: no searching today/ },
  ])('stays WORKING saying it waits, then completes with the answer of the run that goes on ($decision)', async ({ decision, note, answer }) => {
    fake.requests.length = 0;
    const h = await start();
    const client = await a2aClient(`${h.daemon.ingressUrl!}/a2a/clerk/`);
    const submitted = (await client.sendMessage(textMessage('Is deploy 4711 out?', { returnImmediately: true }))) as Task;
    const store = new ApprovalStore(conn, h.prefix);
    const approval = await waitFor('the approval request', async () => (await store.open()).find((e) => e.request.agent === 'clerk')?.request.id, WAIT_MS, 50);

    const waiting = await waitFor('the task saying it waits', async () => {
      const t = await client.getTask({ tenant: '', id: submitted.id });
      return statusText(t).includes('approval') ? t : undefined;
    }, WAIT_MS, 50);
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(statusText(waiting)).toBe(`waiting for a person's approval of hub_search (approval ${approval}); the task goes on once someone decides`);
    expect(waiting.artifacts).toEqual([]);
    // No search was made: the call waits.
    expect(fake.requests.filter((r) => JSON.stringify(r.body).includes(`"role":"tool"`))).toEqual([]);

    const tasks = new TaskInbox(conn, h.prefix);
    await new ApprovalDesk(store, { add: (agent, task) => tasks.add(agent, task) }).decide(approval, decision, { by: 'admin', note });
    const done = await waitFor('the task completed', async () => {
      const t = await client.getTask({ tenant: '', id: submitted.id });
      return t.status?.state === TaskState.TASK_STATE_COMPLETED ? t : undefined;
    }, WAIT_MS, 50);
    expect(answerOf(done)).toMatch(answer);
    // The caller is told before the request is marked done (a crash in between tells again): wait for the mark.
    await waitFor('the request done', async () => ((await store.isOpen(approval)) ? undefined : true), WAIT_MS, 50);
  });

  it('a streaming caller hears it: WORKING, then WORKING saying it waits for approval, then the answer and COMPLETED', async () => {
    const h = await start();
    const client = await a2aClient(`${h.daemon.ingressUrl!}/a2a/clerk/`);
    const store = new ApprovalStore(conn, h.prefix);
    const tasks = new TaskInbox(conn, h.prefix);
    const seen: string[] = [];
    for await (const e of client.sendMessageStream(textMessage('Is deploy 4712 out?'))) {
      const p = e.payload;
      if (p?.$case === 'task') seen.push(`task:${TaskState[p.value.status!.state]}`);
      if (p?.$case === 'artifactUpdate') seen.push('artifact');
      if (p?.$case === 'statusUpdate') {
        const said = (p.value.status?.message?.parts ?? []).map((x) => (x.content?.$case === 'text' ? x.content.value : '')).join('');
        seen.push(said.startsWith('waiting for a person') ? 'WAITING_FOR_APPROVAL' : TaskState[p.value.status!.state]);
        if (said.startsWith('waiting for a person')) {
          const approval = (await store.open()).find((x) => x.request.agent === 'clerk')!.request.id;
          await new ApprovalDesk(store, { add: (agent, task) => tasks.add(agent, task) }).decide(approval, 'approved', { by: 'admin' });
        }
      }
    }
    // (The plain WORKING may be read together with the waiting one when both are written between two reads.)
    expect(seen.filter((x) => x !== 'TASK_STATE_WORKING')).toEqual(['task:TASK_STATE_SUBMITTED', 'WAITING_FOR_APPROVAL', 'artifact', 'TASK_STATE_COMPLETED']);
  });
});
