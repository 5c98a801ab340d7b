// CancelTask through the SDK's client aborts the agent's running turn: a CLI agent's whole process group is gone,
// the task ends CANCELED (GetTask says so), and the activation ends as a cancelled task, not a failure to retry.
// And a CLI agent that answers: the task ends COMPLETED with what the CLI said as the artifact.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { a2aClient, textMessage } from './support/a2a-caller.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';
import { liveGroupMembers } from './support/process-group.ts';

const redisUrl = inject('redisUrl');
const HANG = join(import.meta.dirname, 'fakes', 'cli', 'claude-hang.js');
const ANSWER = join(import.meta.dirname, 'fakes', 'cli', 'claude-answer.js');
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const coder = `name: coder
description: Writes code.
type: claude-code
brain: {provider: anthropic, model: claude-sonnet-4-5, api_base: http://127.0.0.1:9, api_key_env: CODER_KEY}
capabilities: {grants: [hub:read]}
behavior: {max_duration: 120s}
a2a: {serve: true}
`;

/** The pids the hanging CLI wrote into its workspace, once it did. */
function hangPids(workspaces: string): { pid: number; kid: number } | undefined {
  const file = readdirSync(workspaces, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith('hang.pid'));
  if (!file) return undefined;
  try {
    return JSON.parse(readFileSync(join(workspaces, file), 'utf8')) as { pid: number; kid: number };
  } catch {
    return undefined; // being written
  }
}

describe('A2A CancelTask', () => {
  it('cancels a running CLI activation: its process group is gone and the task is CANCELED', async () => {
    const workspaces = mkdtempSync(join(tmpdir(), 'warren-a2a-ws-'));
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ coder: { config: coder, prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { CODER_KEY: 'sk-ant-a2a-cancel', PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspaces },
      config: (c) => {
        c.executors.cli.binaries['claude-code'] = HANG;
        c.executors.cli.workspaces = workspaces;
      },
      hubMcp: null,
    });
    const client = await a2aClient(`${h.daemon.ingressUrl!}/a2a/coder/`);
    const submitted = (await client.sendMessage(textMessage('Refactor the parser.', { returnImmediately: true }))) as Task;
    expect(submitted.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    const pids = await waitFor('the CLI running', () => hangPids(workspaces), 60_000);
    expect(liveGroupMembers(pids.pid).length).toBeGreaterThan(0);
    await waitFor('the task WORKING', async () => (await client.getTask({ tenant: '', id: submitted.id })).status?.state === TaskState.TASK_STATE_WORKING || undefined, 30_000);

    const cancelled = await client.cancelTask({ tenant: '', id: submitted.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await waitFor('the process group gone', () => liveGroupMembers(pids.pid).length === 0 || undefined, 30_000);
    const outcome = await waitFor('the activation ended', () => h!.outcomes.find((o) => o.trigger === 'task' && o.reason !== 'no_task'), 30_000);
    expect(outcome.outcome).toMatchObject({ kind: 'no_action', reason: 'task_cancelled' });
    expect((await client.getTask({ tenant: '', id: submitted.id })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // A second cancel of an ended task is answered with the same end; a cancelled task never runs again.
    expect((await client.cancelTask({ tenant: '', id: submitted.id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    // (A task activation queued meanwhile finds nothing to do.)
    expect(h.outcomes.filter((o) => o.trigger === 'task' && o.reason !== 'no_task').map((o) => o.reason)).toEqual(['task_cancelled']);
  });
});

describe('A2A tasks of a CLI agent', () => {
  it("are run by its CLI: the task's text reaches the CLI and its answer is the COMPLETED task's artifact", async () => {
    const workspaces = mkdtempSync(join(tmpdir(), 'warren-a2a-ws-'));
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ coder: { config: coder, prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { CODER_KEY: 'sk-ant-a2a-answer', PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspaces },
      config: (c) => {
        c.executors.cli.binaries['claude-code'] = ANSWER;
        c.executors.cli.workspaces = workspaces;
      },
      hubMcp: null,
    });
    const client = await a2aClient(`${h.daemon.ingressUrl!}/a2a/coder/`);
    const task = (await client.sendMessage(textMessage('Refactor the parser.'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const answer = task.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    // The fake CLI answers with what it was given: the task's text came to it on stdin.
    expect((JSON.parse(answer) as { task: string }).task).toContain('Refactor the parser.');
  });
});
