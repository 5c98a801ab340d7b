// Warren's agents as A2A servers, through the real daemon and the A2A SDK's own client: the card is fetched (with
// its bearer scheme), SendMessage is answered through the agent's task inbox, SendStreamingMessage streams WORKING
// then COMPLETED with the answer as the artifact, GetTask answers from a second daemon of the fleet, a caller
// without a key gets 401, and a caller over the agent's daily limit gets a REJECTED task with the reason; a turn
// that fails for good is FAILED with its reason; callers' keys come from files (key_file, secrets.dir) and share the
// agent's day; with no callers configured only this machine is served.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { a2aClient, textMessage } from './support/a2a-caller.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0).reverse()) await h.stop();
});

const clerk = (opts: { maxDaily?: number; responses?: string[] } = {}): string => `name: clerk
description: Summarises deploys.
type: llm
brain: {provider: scripted, model: m, responses: ${JSON.stringify(opts.responses ?? ['Build 4711 is green.', 'Build 4712 is green.'])}}
capabilities: {grants: [hub:read]}
a2a:
  serve: true
  max_daily_tasks: ${opts.maxDaily ?? 50}
  skills:
    - {id: summarise, name: Summarise, description: Summarises a deploy, tags: [deploys]}
`;

async function start(opts: { config?: string; callers?: Record<string, string>; prefix?: string; more?: Parameters<typeof startHarness>[0]['config'] } = {}): Promise<Harness> {
  const callers = Object.entries(opts.callers ?? {});
  const h = await startHarness({
    redisUrl,
    agentsDir: makeAgentsDir({ clerk: { config: opts.config ?? clerk(), prompt: 'You are a clerk.' } }, { withGreeter: false }),
    env: Object.fromEntries(callers.map(([name, key]) => [`A2A_KEY_${name.toUpperCase()}`, key])),
    config: (c) => {
      c.a2a.callers = callers.map(([name]) => ({ name, key_env: `A2A_KEY_${name.toUpperCase()}` }));
      if (opts.prefix) c.redis.prefix = opts.prefix;
      opts.more?.(c);
    },
  });
  harnesses.push(h);
  return h;
}

const base = (h: Harness): string => `${h.daemon.ingressUrl!}/a2a/clerk/`;
const said = (t: Pick<Task, 'status'>): string => (t.status?.message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
const answerOf = (t: Task): string => t.artifacts.flatMap((a) => a.parts).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');

describe('A2A server', () => {
  it('serves the card, answers SendMessage through the task inbox, and logs the card URL at start', async () => {
    const h = await start();
    const card = (await (await fetch(`${base(h)}.well-known/agent-card.json`)).json()) as { name: string; skills: { id: string }[]; supportedInterfaces: { url: string; protocolVersion: string }[] };
    expect(card.skills.map((s) => s.id)).toEqual(['summarise']);
    expect(card.supportedInterfaces[0]).toMatchObject({ url: base(h), protocolVersion: '1.0' });
    expect(h.logs.join('')).toContain(`${base(h)}.well-known/agent-card.json`);

    const client = await a2aClient(base(h));
    const result = await client.sendMessage(textMessage('Summarise the deploy of build 4711.'));
    const task = result as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(task)).toBe('Build 4711 is green.');
    // It ran as a task activation with the caller's text.
    const run = h.outcomes.find((o) => o.trigger === 'task' && o.reason !== 'no_task')!;
    expect(JSON.stringify(run.events.find((e) => e.type === 'user_message'))).toContain('build 4711');
    // The README's plain JSON-RPC call is answered too.
    const raw = await fetch(base(h), { method: 'POST', headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'Summarise the deploy of build 4712.' }] } } }) });
    const rpc = (await raw.json()) as { result?: { task?: { status?: { state?: string } } } };
    expect(rpc.result?.task?.status?.state).toBe('TASK_STATE_COMPLETED');
    // GetTask gives the same end.
    const again = await client.getTask({ tenant: '', id: task.id });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(again)).toBe('Build 4711 is green.');
    // The metrics count them by state.
    const metrics = await (await fetch(`${h.daemon.metricsUrl!}/metrics`)).text();
    expect(metrics).toContain('warren_a2a_tasks{agent="clerk",state="completed"} 2');
  });

  it('SendStreamingMessage streams the task, WORKING when read at it, then the answer as the artifact and COMPLETED', async () => {
    const h = await start();
    const client = await a2aClient(base(h));
    const seen: string[] = [];
    let artifact = '';
    for await (const e of client.sendMessageStream(textMessage('Summarise build 4711.'))) {
      const p = e.payload;
      if (p?.$case === 'task') seen.push(`task:${TaskState[p.value.status!.state]}`);
      if (p?.$case === 'statusUpdate') seen.push(TaskState[p.value.status!.state]);
      if (p?.$case === 'artifactUpdate') {
        seen.push('artifact');
        artifact = p.value.artifact!.parts.map((x) => (x.content?.$case === 'text' ? x.content.value : '')).join('');
      }
    }
    // The opening task is as the store has it when the SDK sends it (it reads it back): SUBMITTED, or WORKING when
    // the worker took it up first (a real daemon process usually does: test/a2a-server-process.test.ts).
    expect(['task:TASK_STATE_SUBMITTED', 'task:TASK_STATE_WORKING']).toContain(seen[0]);
    // The relay reports each forward step it reads from the store: an instant turn may end between two of its reads,
    // with no WORKING update between (the next test's slow turn always shows it).
    expect([['TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED'], ['artifact', 'TASK_STATE_COMPLETED']]).toContainEqual(seen.slice(1));
    expect(artifact).toBe('Build 4711 is green.');
  });

  it('a turn that streams: what it says so far comes as the answer artifact (redacted), then the answer replaces it', async () => {
    const canary = `sk-canary-${Math.random().toString(36).slice(2)}`;
    const config = `name: clerk
type: llm
brain:
  provider: scripted
  model: m
  api_key_env: CLERK_CANARY
  responses:
    - {content: "Looking at build 4711 (key ${canary}) first.", tool_calls: [{name: hub_search, arguments: {query: build 4711}}]}
    - {content: Build 4711 is green., delay_ms: 1500}
capabilities: {grants: [hub:read]}
a2a: {serve: true}
`;
    const h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ clerk: { config, prompt: 'You are a clerk.' } }, { withGreeter: false }), env: { CLERK_CANARY: canary } });
    harnesses.push(h);
    const client = await a2aClient(base(h));
    const seen: string[] = [];
    for await (const e of client.sendMessageStream(textMessage('Summarise build 4711.'))) {
      const p = e.payload;
      if (p?.$case === 'statusUpdate') seen.push(TaskState[p.value.status!.state]);
      if (p?.$case === 'artifactUpdate') seen.push(`${p.value.lastChunk ? 'answer' : 'so far'}: ${p.value.artifact!.parts.map((x) => (x.content?.$case === 'text' ? x.content.value : '')).join('')}`);
    }
    // (WORKING comes as the store says it, the partial answer as the turn says it: either may be first.)
    expect(seen).toContain('TASK_STATE_WORKING');
    expect(seen.filter((x) => x !== 'TASK_STATE_WORKING')).toEqual(['so far: Looking at build 4711 (key [REDACTED]) first.', 'answer: Build 4711 is green.', 'TASK_STATE_COMPLETED']);
    expect(JSON.stringify(seen)).not.toContain(canary);
  });

  it('GetTask answers from a second daemon of the fleet', async () => {
    const first = await start();
    const second = await start({ prefix: first.prefix });
    const task = (await (await a2aClient(base(first))).sendMessage(textMessage('Summarise build 4711.'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const fromSecond = await (await a2aClient(base(second))).getTask({ tenant: '', id: task.id });
    expect(fromSecond.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answerOf(fromSecond)).toBe('Build 4711 is green.');
  });

  it('with callers configured: the card declares the bearer scheme, no key gets 401, a wrong key 401, a good key is served', async () => {
    const key = `a2a-key-${Math.random().toString(36).slice(2)}`;
    const h = await start({ callers: { ci: key } });
    const bare = await fetch(`${base(h)}.well-known/agent-card.json`);
    expect(bare.status).toBe(401);
    const rpc = await fetch(base(h), { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: 'Bearer nope' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }) });
    expect(rpc.status).toBe(401);
    const card = (await (await fetch(`${base(h)}.well-known/agent-card.json`, { headers: { authorization: `Bearer ${key}` } })).json()) as { securitySchemes: Record<string, { httpAuthSecurityScheme?: { scheme: string } }> };
    expect(Object.keys(card.securitySchemes)).toEqual(['bearer']);
    expect(card.securitySchemes.bearer!.httpAuthSecurityScheme?.scheme).toBe('Bearer');
    await expect(a2aClient(base(h))).rejects.toThrow(/401/);
    const task = (await (await a2aClient(base(h), key)).sendMessage(textMessage('Summarise build 4711.'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The key is in no log line.
    expect(h.logs.join('')).not.toContain(key);
  });

  it('a caller over the agent\'s daily limit gets a REJECTED task naming the limit', async () => {
    const h = await start({ config: clerk({ maxDaily: 1, responses: ['First.', 'Second.'] }) });
    const client = await a2aClient(base(h));
    const first = (await client.sendMessage(textMessage('One.'))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const second = (await client.sendMessage(textMessage('Two.'))) as Task;
    expect(second.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    const reason = second.status?.message?.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
    expect(reason).toMatch(/a2a\.max_daily_tasks/);
    // Only the first ran (a task activation queued meanwhile finds nothing to do).
    await waitFor('the first task\'s activation', () => h.outcomes.some((o) => o.trigger === 'task') || undefined, 30_000);
    expect(h.outcomes.filter((o) => o.trigger === 'task' && o.reason !== 'no_task')).toHaveLength(1);
  });

  it('a turn that fails for good answers FAILED with the reason of its typed outcome', async () => {
    const config = `name: clerk
type: llm
brain: {provider: scripted, model: m, responses: [{error: {status: 400, message: the model refused the request}}]}
capabilities: {grants: [hub:read]}
a2a: {serve: true}
`;
    const h = await start({ config });
    const task = (await (await a2aClient(base(h))).sendMessage(textMessage('Summarise build 4711.'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
    // The failed activation's own message (a terminal model error: not retried), as warren logs would show it.
    expect(said(task)).toBe('scripted model: the model refused the request');
    expect(task.artifacts).toEqual([]);
  });

  it('callers by key_file and by a file in secrets.dir (hashed, never logged); the day\'s limit counts every caller\'s tasks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-a2a-keys-'));
    const ciKey = `ci-${Math.random().toString(36).slice(2)}`;
    const plannerKey = `planner-${Math.random().toString(36).slice(2)}`;
    writeFileSync(join(dir, 'ci.key'), `${ciKey}\n`);
    writeFileSync(join(dir, 'A2A_KEY_PLANNER'), plannerKey);
    const h = await start({
      config: clerk({ maxDaily: 1, responses: ['First.'] }),
      more: (c) => {
        c.secrets.dir = dir;
        c.a2a.callers = [
          { name: 'ci', key_file: join(dir, 'ci.key') },
          { name: 'planner', key_env: 'A2A_KEY_PLANNER' },
        ];
      },
    });
    expect((await fetch(`${base(h)}.well-known/agent-card.json`)).status).toBe(401);
    const first = (await (await a2aClient(base(h), ciKey)).sendMessage(textMessage('One.'))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Another caller, the same agent's day: its task is refused with the reason.
    const second = (await (await a2aClient(base(h), plannerKey)).sendMessage(textMessage('Two.'))) as Task;
    expect(second.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    expect(said(second)).toMatch(/a2a\.max_daily_tasks/);
    // Each task is its caller's: the planner does not see the ci's.
    await expect((await a2aClient(base(h), plannerKey)).getTask({ tenant: '', id: first.id })).rejects.toThrow();
    const logs = h.logs.join('');
    expect(logs).not.toContain(ciKey);
    expect(logs).not.toContain(plannerKey);
  });

  it('with no callers configured: this machine is served without a key, another address gets 401', async () => {
    const outside = Object.values(networkInterfaces()).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
    // This test needs an address of this machine that is not loopback (any container's eth0 has one).
    expect(outside).toBeDefined();
    const h = await start({ more: (c) => (c.ingress.host = '0.0.0.0') });
    const port = new URL(h.daemon.ingressUrl!).port;
    expect((await fetch(`http://127.0.0.1:${port}/a2a/clerk/.well-known/agent-card.json`)).status).toBe(200);
    const refused = await fetch(`http://${outside!}:${port}/a2a/clerk/.well-known/agent-card.json`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'unauthorized', detail: 'no a2a.callers are configured, so only this machine may call' });
    const rpc = await fetch(`http://${outside!}:${port}/a2a/clerk/`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: 'Bearer anything' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'Summarise build 4711.' }] } } }) });
    expect(rpc.status).toBe(401);
    expect(h.outcomes.filter((o) => o.trigger === 'task' && o.reason !== 'no_task')).toEqual([]);
  });
});
