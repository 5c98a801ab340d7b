// Tasks from outside the hub through the real daemon: a task added to an agent's task inbox is run once by a
// `task` activation with its text as the agent's task, settled afterwards, and a paused agent's task waits.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ActivationRecords } from '../activation/activation-records.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { TaskInbox, type AgentTask } from '../scheduler/task-inbox.ts';
import { waitFor } from './support/hub-api.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';

const redisUrl = inject('redisUrl');
let h: Harness | undefined;
const conns: Redis[] = [];
afterEach(async () => {
  await h?.stop();
  h = undefined;
  for (const c of conns.splice(0)) await c.quit();
});

const echo = `name: clerk
type: llm
brain: {provider: scripted, model: m, responses: ["Deploy summarised."]}
capabilities: {grants: [hub:read]}
`;

async function start(): Promise<{ inbox: TaskInbox; records: ActivationRecords; state: AgentStateStore }> {
  h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ clerk: { config: echo, prompt: 'You are a clerk.' } }, { withGreeter: false }) });
  const conn = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  conns.push(conn);
  return { inbox: new TaskInbox(conn, h.prefix), records: new ActivationRecords(conn, h.prefix), state: new AgentStateStore(conn, h.prefix) };
}

const task = (id: string, text: string): AgentTask => ({ id, source: 'webhook', name: 'deploys', text, createdAt: Date.now() });

describe('task activations', () => {
  it('runs a task once, as a task activation, and settles it', async () => {
    const { inbox, records } = await start();
    const id = `webhook:deploys:${randomUUID()}`;
    expect(await inbox.add('clerk', task(id, 'Summarise the deploy of build 4711.'))).toBe('added');
    await waitFor('the task activation', () => h!.outcomes.some((o) => o.agent === 'clerk' && o.trigger === 'task') || undefined, 30_000);
    await waitFor('the task settled', async () => (await inbox.pending('clerk')) === 0 || undefined, 30_000);
    const outcome = h!.outcomes.find((o) => o.trigger === 'task')!;
    expect(outcome.outcome.kind).toBe('answered');
    // The task's text (headed by where it came from) was the agent's task.
    const asked = outcome.events.find((e) => e.type === 'user_message');
    expect(JSON.stringify(asked)).toContain('Webhook \\"deploys\\" delivered an event');
    expect(JSON.stringify(asked)).toContain('build 4711');
    // A second delivery of the same id adds nothing, and no second activation runs.
    expect(await inbox.add('clerk', task(id, 'Summarise the deploy of build 4711.'))).toBe('duplicate');
    await waitFor('the task record', async () => (await records.recent({ agent: 'clerk' })).some((r) => r.trigger === 'task') || undefined, 30_000);
    expect(h!.outcomes.filter((o) => o.trigger === 'task')).toHaveLength(1);
  });

  it('a paused agent\'s task waits, and runs once the agent is resumed', async () => {
    const { inbox, state } = await start();
    await state.setPaused('clerk', true);
    await inbox.add('clerk', task(`webhook:deploys:${randomUUID()}`, 'Check the release.'));
    // Several task rounds pass (50 ms each) while it waits.
    await new Promise((r) => setTimeout(r, 600));
    expect(h!.outcomes.filter((o) => o.trigger === 'task')).toHaveLength(0);
    expect(await inbox.pending('clerk')).toBe(1);
    await state.setPaused('clerk', false);
    await waitFor('the task after resume', () => h!.outcomes.some((o) => o.trigger === 'task') || undefined, 30_000);
  });
});
