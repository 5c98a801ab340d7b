// A task for an agent that may not run now is not refused: it stays SUBMITTED and its status message says why
// (paused, quiet hours, the hub's budget at critical), to a caller that streams (SendStreamingMessage) or asks
// (GetTask); once the hold ends (a resume) it runs and ends COMPLETED. Over the daily task limit it is REJECTED
// with the reason (test/a2a-server.test.ts). Through the real daemon and the A2A SDK's own client.
import { Redis } from 'ioredis';
import { TaskState, type Task } from '@a2a-js/sdk';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { setAgentPaused } from '../daemon/ops/pause.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { a2aClient, textMessage } from './support/a2a-caller.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';

const redisUrl = inject('redisUrl');
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const clerk = (extra = ''): string => `name: clerk
type: llm
brain: {provider: scripted, model: m, responses: ['Build 4711 is green.']}
capabilities: {grants: [hub:read]}
a2a: {serve: true}
${extra}`;

async function start(config: string, hub?: Parameters<typeof startHarness>[0]['hub']): Promise<Harness> {
  const h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ clerk: { config, prompt: 'You are a clerk.' } }, { withGreeter: false }), hub, config: (c) => (c.scheduler.budget_ttl = 50) });
  cleanups.push(() => h.stop());
  return h;
}

const base = (h: Harness): string => `${h.daemon.ingressUrl!}/a2a/clerk/`;
const said = (t: Pick<Task, 'status'>): string => (t.status?.message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const ran = (h: Harness): number => h.outcomes.filter((o) => o.trigger === 'task' && o.outcome.kind !== 'skipped' && o.reason !== 'no_task').length;

/** The task's states and words as SendStreamingMessage tells them, until one says `until`. */
async function streamUntil(h: Harness, text: string, until: RegExp): Promise<{ id: string; seen: string[] }> {
  const client = await a2aClient(base(h));
  const seen: string[] = [];
  let id = '';
  for await (const e of client.sendMessageStream(textMessage(text))) {
    const p = e.payload;
    if (p?.$case === 'task') {
      id = p.value.id;
      seen.push(`task:${TaskState[p.value.status!.state]}`);
    }
    if (p?.$case === 'statusUpdate') {
      seen.push(`${TaskState[p.value.status!.state]}:${said(p.value)}`);
      if (until.test(said(p.value))) break; // leaving the stream does not cancel the task
    }
  }
  return { id, seen };
}

describe('A2A tasks that wait', { timeout: PROCESS_TEST_MS }, () => {
  it('paused: the task stays SUBMITTED saying why, then runs and completes once the agent is resumed', async () => {
    const h = await start(clerk());
    const redis = new Redis(redisUrl);
    cleanups.push(() => Promise.resolve(redis.disconnect()));
    const state = new AgentStateStore(redis, h.prefix);
    await setAgentPaused(state, 'clerk', true);
    const client = await a2aClient(base(h));
    const task = (await client.sendMessage(textMessage('Summarise build 4711.', { returnImmediately: true }))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    const waiting = await waitFor('the task saying why it waits', async () => {
      const t = await client.getTask({ tenant: '', id: task.id });
      return said(t) ? t : undefined;
    }, PROCESS_START_MS);
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(said(waiting)).toBe('waiting, not refused: paused: run after `warren resume clerk`');
    expect(ran(h)).toBe(0);

    await setAgentPaused(state, 'clerk', false);
    const done = await waitFor('the task answered', async () => {
      const t = await client.getTask({ tenant: '', id: task.id });
      return t.status?.state === TaskState.TASK_STATE_COMPLETED ? t : undefined;
    }, PROCESS_START_MS);
    expect(done.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === 'text' ? p.content.value : ''))).toEqual(['Build 4711 is green.']);
    // One run, told as the activation finishes (after the task's end is written).
    await waitFor('the task activation', () => (ran(h) > 0 ? true : undefined), PROCESS_START_MS);
    expect(ran(h)).toBe(1);
  });

  it('quiet hours: a streaming caller hears SUBMITTED, then why it waits and until when; nothing runs', async () => {
    const hhmm = (d: Date): string => d.toISOString().slice(11, 16);
    const now = Date.now();
    const h = await start(clerk(`behavior: {quiet_hours: {start: "${hhmm(new Date(now - 3_600_000))}", end: "${hhmm(new Date(now + 3_600_000))}", timezone: UTC}}\n`));
    const { id, seen } = await streamUntil(h, 'Summarise build 4711.', /quiet hours/);
    expect(seen[0]).toBe('task:TASK_STATE_SUBMITTED');
    expect(seen.at(-1)).toMatch(/^TASK_STATE_SUBMITTED:waiting, not refused: quiet hours: run at \d{4}-\d\d-\d\d \d\d:\d\dZ$/);
    const client = await a2aClient(base(h));
    expect((await client.getTask({ tenant: '', id })).status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(ran(h)).toBe(0);
  });

  it("the hub's budget at critical: the task waits saying so, not REJECTED", async () => {
    const h = await start(clerk(), { budget: { defaultDailyLimitUsd: 10, defaultMonthlyLimitUsd: 1_000 } });
    await h.api.post('/system/consumption', h.adminKey, { agent_id: 'clerk', tokens_input: 1, tokens_output: 1, cost_usd: 10 });
    const { id, seen } = await streamUntil(h, 'Summarise build 4711.', /budget/);
    expect(seen.at(-1)).toBe("TASK_STATE_SUBMITTED:waiting, not refused: budget critical: run when the hub's budget allows again (daily budgets reset at 00:00 UTC)");
    expect((await (await a2aClient(base(h))).getTask({ tenant: '', id })).status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(ran(h)).toBe(0);
  });
});
