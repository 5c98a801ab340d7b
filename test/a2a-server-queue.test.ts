// A2A tasks share the agent's one queue (issue 29 item 2): one active turn per agent, further tasks SUBMITTED until
// their turn, each answered with its own answer; a full inbox REJECTS the task with the reason, and such a refusal
// is not one of the day's tasks (a2a.max_daily_tasks). Through the real daemon, the A2A SDK's own client and a model
// on real HTTP (the fake OpenAI server) that counts how many turns are at it at once.
import { TaskState, type Task } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { llmDaemonSuite } from './support/llm-daemon-suite.ts';
import { a2aClient, textMessage } from './support/a2a-caller.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';

const suite = llmDaemonSuite({ redis: false });
const redisUrl = suite.redisUrl;

async function start(config: string): Promise<Harness> {
  const h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ clerk: { config, prompt: 'You are a clerk.' } }, { withGreeter: false }), env: { CLERK_KEY: 'sk-clerk-queue' } });
  suite.defer(() => h.stop());
  return h;
}

const base = (h: Harness): string => `${h.daemon.ingressUrl!}/a2a/clerk/`;
const textOf = (parts: Task['artifacts'][number]['parts'] | undefined): string => (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const said = (t: Pick<Task, 'status'>): string => textOf(t.status?.message?.parts);

describe('A2A tasks in the agent queue', { timeout: PROCESS_TEST_MS }, () => {
  it('three tasks at once: one turn at a time, the others SUBMITTED until theirs; each answered with its own answer', async () => {
    let inFlight = 0;
    let most = 0;
    let gate!: () => void;
    const opened = new Promise<void>((r) => (gate = r));
    suite.fake.setResponder(async (req) => {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        await opened;
        await new Promise((r) => setTimeout(r, 200)); // a turn that takes a while: a second one would overlap it
        const build = /build (\d+)/.exec(JSON.stringify(req.body))?.[1] ?? '?';
        return `Build ${build} is green.`;
      } finally {
        inFlight--;
      }
    });
    const h = await start(`name: clerk
type: llm
brain: {provider: openai, model: fake-gpt, api_base: ${suite.fake.url}, api_key_env: CLERK_KEY}
capabilities: {grants: [hub:read]}
behavior: {limits: {min_interval_seconds: 0}}
a2a: {serve: true}
`);
    const client = await a2aClient(base(h));
    const builds = ['4711', '4712', '4713'];
    const tasks: Task[] = [];
    for (const b of builds) tasks.push((await client.sendMessage(textMessage(`Summarise build ${b}.`, { returnImmediately: true }))) as Task);
    expect(tasks.map((t) => t.status?.state)).toEqual([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_SUBMITTED]);

    // The first turn is at the model (held there): one task WORKING, the others wait SUBMITTED.
    await waitFor('a turn at the model', () => (inFlight > 0 ? true : undefined), PROCESS_START_MS, 20);
    const states = await waitFor('one task WORKING', async () => {
      const now = await Promise.all(tasks.map(async (t) => (await client.getTask({ tenant: '', id: t.id })).status?.state));
      return now.includes(TaskState.TASK_STATE_WORKING) ? now : undefined;
    }, PROCESS_START_MS, 50);
    expect(states.filter((s) => s === TaskState.TASK_STATE_WORKING)).toHaveLength(1);
    expect(states.filter((s) => s === TaskState.TASK_STATE_SUBMITTED)).toHaveLength(2);
    // However long the held turn waits, no second turn of the agent starts beside it.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(inFlight).toBe(1);

    gate();
    const done = await waitFor('all three answered', async () => {
      const now = await Promise.all(tasks.map((t) => client.getTask({ tenant: '', id: t.id })));
      return now.every((t) => t.status?.state === TaskState.TASK_STATE_COMPLETED) ? now : undefined;
    }, 60_000, 100);
    expect(done.map((t) => textOf(t.artifacts[0]?.parts))).toEqual(builds.map((b) => `Build ${b} is green.`));
    expect(most).toBe(1);
    await waitFor('three task turns told', () => (h.outcomes.filter((o) => o.trigger === 'task' && o.reason !== 'no_task').length >= 3 ? true : undefined), PROCESS_START_MS);
    expect(h.outcomes.filter((o) => o.trigger === 'task' && o.reason !== 'no_task')).toHaveLength(3);
  });

  it("a full inbox: the task is REJECTED with the reason, and the refusal is not one of the day's tasks", async () => {
    // Quiet hours all day: every task waits in the inbox (100 per agent at most), none runs.
    const h = await start(`name: clerk
type: llm
brain: {provider: scripted, model: m, responses: ['Done.']}
capabilities: {grants: [hub:read]}
behavior: {quiet_hours: {start: "00:00", end: "23:59", timezone: UTC}}
a2a: {serve: true, max_daily_tasks: 101}
`);
    const client = await a2aClient(base(h));
    const waiting: Task[] = [];
    for (let i = 0; i < 100; i++) waiting.push((await client.sendMessage(textMessage(`Task ${i}.`, { returnImmediately: true }))) as Task);
    expect(new Set(waiting.map((t) => t.status?.state))).toEqual(new Set([TaskState.TASK_STATE_SUBMITTED]));

    const refused = (await client.sendMessage(textMessage('One too many.', { returnImmediately: true }))) as Task;
    expect(refused.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(said(refused)).toBe('agent clerk has too many tasks waiting; try again later');

    // A waiting task cancelled makes room; the day has had 100 tasks of its 101, so the next one is taken.
    expect((await client.cancelTask({ tenant: '', id: waiting[0]!.id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const next = (await client.sendMessage(textMessage('Room again.', { returnImmediately: true }))) as Task;
    expect([next.status?.state, said(next)]).toEqual([TaskState.TASK_STATE_SUBMITTED, expect.not.stringMatching(/max_daily_tasks/)]);
  });
});
