// Warren's agents as A2A servers, as an operator starts them (issue 29 item 2): `warren start` as a real process,
// its ingress port from WARREN_INGRESS_PORT (no port in warren.yaml), the card URL of each served agent logged at
// start, and the A2A SDK's own client at http://127.0.0.1:<port>/a2a/<agent>/: the card, SendMessage, and
// SendStreamingMessage streaming WORKING then the answer artifact and COMPLETED.
import { randomUUID } from 'node:crypto';
import { TaskState, type Task } from '@a2a-js/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startHub } from '../local-hub/server.ts';
import { a2aClient, textMessage } from './support/a2a-caller.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { freePort } from './support/free-port.ts';
import { startPrivateRedis } from './support/redis-server.ts';
import { startWarren } from './support/warren-process.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const textOf = (parts: Task['artifacts'][number]['parts']): string => parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

describe('warren start serving an agent over A2A', { timeout: PROCESS_TEST_MS }, () => {
  it('on the port WARREN_INGRESS_PORT names: the card URL logged at start, the card, SendMessage and streaming answered', async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
    cleanups.push(() => hub.close());
    const dir = makeAgentsDir(
      {
        clerk: {
          config: `name: clerk
description: Summarises deploys.
type: llm
brain: {provider: scripted, model: m, responses: ['Build 4711 is green.']}
capabilities: {grants: [hub:read]}
a2a:
  serve: true
  skills:
    - {id: summarise, name: Summarise, description: Summarises a deploy, tags: [deploys]}
`,
          prompt: 'You are a clerk.',
        },
      },
      { withGreeter: false },
    );
    const port = await freePort();
    // `ingress: {}`: the port comes from the environment alone.
    const d = startWarren({ hubUrl: hub.url, adminKey: hub.adminKey, redisUrl: redis.url, prefix: `a2a-env-${randomUUID().slice(0, 8)}`, agentsDir: dir, sections: ['ingress: {}'], env: { WARREN_INGRESS_PORT: String(port) } });
    cleanups.push(async () => {
      d.kill('SIGKILL');
      await d.exited;
    });
    const base = `http://127.0.0.1:${port}/a2a/clerk/`;
    const line = await d.waitForLine(/serving an agent over A2A/, PROCESS_START_MS);
    expect(JSON.parse(line)).toMatchObject({ agent: 'clerk', card: `${base}.well-known/agent-card.json` });

    const card = (await (await fetch(`${base}.well-known/agent-card.json`)).json()) as { name: string; description: string; skills: Array<{ id: string }> };
    expect(card).toMatchObject({ name: 'clerk', description: 'Summarises deploys.', skills: [{ id: 'summarise' }] });

    const client = await a2aClient(base);
    const task = (await client.sendMessage(textMessage('Summarise the deploy of build 4711.'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.artifacts[0]!.parts)).toBe('Build 4711 is green.');

    const seen: string[] = [];
    for await (const e of client.sendMessageStream(textMessage('Summarise build 4711 again.'))) {
      const p = e.payload;
      if (p?.$case === 'task') seen.push(`task:${TaskState[p.value.status!.state]}`);
      if (p?.$case === 'statusUpdate') seen.push(TaskState[p.value.status!.state]);
      if (p?.$case === 'artifactUpdate' && p.value.lastChunk) seen.push(`answer:${textOf(p.value.artifact!.parts)}`);
    }
    // The opening task is as the store has it when the SDK sends it: SUBMITTED, or already WORKING when this fast
    // daemon's worker took it up first (the SDK reads the task back from the store for that event).
    expect(['task:TASK_STATE_SUBMITTED', 'task:TASK_STATE_WORKING']).toContain(seen[0]);
    // The relay reports each forward step it reads from the store: a turn that ends between two of its reads (a busy
    // machine) goes from the opening state to the answer, with no WORKING update between (a CI run saw that).
    expect([['TASK_STATE_WORKING', 'answer:Build 4711 is green.', 'TASK_STATE_COMPLETED'], ['answer:Build 4711 is green.', 'TASK_STATE_COMPLETED']]).toContainEqual(seen.slice(1));
  });
});
