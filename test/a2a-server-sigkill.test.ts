// A served A2A task across a SIGKILL, through real `warren start` processes: the first daemon takes the task and is
// killed while the agent's turn runs; a second daemon of the fleet (same Redis) answers GetTask and ListTasks about
// it at once, runs the retried activation, and the task ends COMPLETED once, with one answer, told once.
import { randomUUID } from 'node:crypto';
import { TaskState, type Task } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { llmDaemonSuite } from './support/llm-daemon-suite.ts';
import { a2aClient, textMessage } from './support/a2a-caller.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { startPrivateRedis } from './support/redis-server.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';

const suite = llmDaemonSuite({ redis: false });

const answerOf = (t: Task): string[] => t.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === 'text' ? p.content.value : ''));

/** The agent's A2A base URL, from the card URL the daemon logs at start. */
async function baseUrlOf(d: WarrenProcess): Promise<string> {
  const line = await d.waitForLine(/serving an agent over A2A/, PROCESS_START_MS);
  return (JSON.parse(line) as { card: string }).card.replace(/\.well-known\/agent-card\.json$/, '');
}

describe('a served A2A task across a SIGKILL', { timeout: PROCESS_TEST_MS }, () => {
  it('the first daemon dies mid-task: a second answers GetTask, runs the retry, and the task is answered exactly once', async () => {
    const redis = await startPrivateRedis();
    suite.defer(() => redis.stop());
    const hub: RunningHub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
    suite.defer(() => hub.close());
    // The model holds every turn until released: the first daemon is killed while its turn waits here.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    suite.fake.setResponder(async () => (await released, 'Build 4711 is green.'));
    const dir = makeAgentsDir(
      {
        clerk: {
          config: `name: clerk
type: llm
brain: {provider: openai, model: fake-gpt, api_base: ${suite.fake.url}, api_key_env: CLERK_KEY}
capabilities: {grants: [hub:read]}
behavior: {max_duration: 120s}
a2a: {serve: true}
`,
          prompt: 'You are a clerk.',
        },
      },
      { withGreeter: false },
    );
    const prefix = `a2a-kill-${randomUUID().slice(0, 8)}`;
    const daemon = (): WarrenProcess => {
      const d = startWarren({ hubUrl: hub.url, adminKey: hub.adminKey, redisUrl: redis.url, prefix, agentsDir: dir, env: { CLERK_KEY: 'sk-clerk-kill' } });
      suite.defer(async () => {
        d.kill('SIGKILL');
        await d.exited;
      });
      return d;
    };
    const modelCalls = (): number => suite.fake.requests.filter((r) => r.path.includes('/chat/completions')).length;

    const first = daemon();
    const firstClient = await a2aClient(await baseUrlOf(first));
    const submitted = (await firstClient.sendMessage(textMessage('Summarise the deploy of build 4711.', { returnImmediately: true }))) as Task;
    expect(submitted.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    await waitFor('the first turn at the model', () => (modelCalls() >= 1 ? true : undefined), PROCESS_START_MS, 50);
    expect((await firstClient.getTask({ tenant: '', id: submitted.id })).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    first.kill('SIGKILL');
    await first.exited;

    const second = daemon();
    const client = await a2aClient(await baseUrlOf(second));
    // The task outlived its daemon: the second one knows it (the store is in Redis), still under way.
    expect((await client.getTask({ tenant: '', id: submitted.id })).status?.state).toBe(TaskState.TASK_STATE_WORKING);
    // The stalled activation is retried here and reaches the model again; then the model answers.
    await waitFor('the retried turn at the model', () => (modelCalls() >= 2 ? true : undefined), PROCESS_START_MS, 50);
    release();
    const done = await waitFor('the task answered', async () => {
      const t = await client.getTask({ tenant: '', id: submitted.id });
      return t.status?.state === TaskState.TASK_STATE_COMPLETED ? t : undefined;
    }, 60_000, 100);
    expect(answerOf(done)).toEqual(['Build 4711 is green.']);
    await second.waitForLine(/"msg":"task answered"/, 30_000);
    // Told once: one end written in the whole fleet, one task in the caller's list.
    const endings = [...first.lines, ...second.lines].filter((l) => l.includes('"msg":"A2A task ended"'));
    expect(endings).toHaveLength(1);
    expect(JSON.parse(endings[0]!)).toMatchObject({ task: submitted.id, outcome: 'answered' });
    const list = await client.listTasks({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageToken: '', statusTimestampAfter: undefined, includeArtifacts: true });
    expect(list.tasks.map((t) => [t.id, t.status?.state])).toEqual([[submitted.id, TaskState.TASK_STATE_COMPLETED]]);
  });
});
