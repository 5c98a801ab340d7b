// Remote delegation (issue 29 item 1) against a real A2A agent built with @a2a-js/sdk on loopback: blocking and
// streaming calls, the INPUT_REQUIRED round trip, FAILED and REJECTED as errors the model sees, CancelTask on
// abort and on the delegate's deadline, a retried call reattaching to its first task, grants, auth, redaction,
// the card's ETag cache and an unreachable card.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentCardCache } from '../agent-loop/a2a-card.ts';
import { EventLog, type ActivationEvent } from '../agent-loop/events.ts';
import { runLoop } from '../agent-loop/loop.ts';
import { remoteDelegationTools } from '../agent-loop/remote-delegation.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { LlmExecutor } from '../executors/llm/llm-executor.ts';
import { WarrenConfigSchema } from '../services/config.ts';
import { knownSecrets } from '../services/known-secrets.ts';
import { AgentConfigSchema, RemoteDelegateSchema, type ScriptedReply } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { startA2aPeer, type A2aPeer, type PeerOptions } from './support/a2a-peer.ts';
import { FnModel } from './support/loop-kit.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function peer(opts: PeerOptions): Promise<A2aPeer> {
  const p = await startA2aPeer(opts);
  cleanups.push(() => p.close());
  return p;
}

function agent(responses: ScriptedReply[], delegate: Record<string, unknown>, grants = ['a2a:echo']): AgentDefinition {
  const config = AgentConfigSchema.parse({
    name: 'asker',
    type: 'llm',
    brain: { provider: 'scripted', model: 'scripted-asker', responses },
    capabilities: { grants, delegates: [{ name: 'echo', ...delegate }] },
  });
  return { name: 'asker', config, systemPrompt: 'You are asker.', files: { config: 'c', prompt: 'p' } };
}

const delegateCall = (args: Record<string, unknown>): ScriptedReply => ({ tool_calls: [{ name: 'delegate_to_echo', arguments: args }] });

async function run(def: AgentDefinition, opts: { id?: string; signal?: AbortSignal; secret?: (n: string) => string | undefined; redact?: (t: string) => string; cards?: AgentCardCache } = {}): Promise<{ result: Awaited<ReturnType<LlmExecutor['run']>>; events: ActivationEvent[] }> {
  const ex = new LlmExecutor({ secret: opts.secret ?? (() => undefined), redactToolOutput: opts.redact, cards: opts.cards });
  const events = new EventLog(opts.id ?? 'act-a2a');
  const result = await ex.run({ id: events.activationId, definition: def, context: { system: 's', task: 'do it' }, events, signal: opts.signal ?? new AbortController().signal });
  return { result, events: events.events };
}

const ofType = <T extends ActivationEvent['type']>(events: readonly ActivationEvent[], type: T): Array<Extract<ActivationEvent, { type: T }>> => events.filter((e): e is Extract<ActivationEvent, { type: T }> => e.type === type);

describe('remote delegation (A2A)', () => {
  it('blocking: the task is sent with SendMessage, the COMPLETED artifact is the tool result, events in the seed order', async () => {
    const p = await peer({ streaming: false, behaviour: (t) => t.complete(`echo: ${t.text}`) });
    const def = agent([delegateCall({ task: 'say hello' }), 'The echo said hello.'], { card_url: p.url, streaming: false });
    const { result, events } = await run(def);
    expect(result).toMatchObject({ termination: 'final', text: 'The echo said hello.' });
    expect(p.calls).toEqual(['ListTasks', 'SendMessage']);
    expect(p.turns.map((t) => t.text)).toEqual(['say hello']);
    // The message and the new task's context are derived from the activation, step and call, not drawn at random.
    expect(p.turns[0]).toMatchObject({ messageId: 'warren:act-a2a:1:1:a2a', contextId: 'warren:act-a2a:1:1:a2a-context' });
    expect(ofType(events, 'tool_result')[0]).toMatchObject({ name: 'delegate_to_echo', status: 'ok', excerpt: 'echo: say hello' });
    expect(ofType(events, 'progress')[0]).toMatchObject({ action: 'delegate', target: 'echo' });
    expect(ofType(events, 'delegation_request')[0]).toMatchObject({ agent: 'echo', task: 'say hello', remote: p.url });
    expect(ofType(events, 'delegation_response')[0]).toMatchObject({ agent: 'echo', termination: 'final', excerpt: 'echo: say hello', remote: { task_id: p.turns[0]!.taskId, state: 'completed', reattached: false } });
    const order = events.map((e) => e.type).filter((t) => ['user_message', 'delegation_request', 'delegation_response', 'agent_response'].includes(t));
    expect(order).toEqual(['user_message', 'delegation_request', 'delegation_response', 'agent_response']);
  });

  it('streaming: WORKING and artifact chunks arrive over SendStreamingMessage; the appended chunks are the result', async () => {
    const p = await peer({
      behaviour: (t) => {
        t.working('thinking');
        t.artifact('part one, ', { id: 'a' });
        t.artifact('part two', { id: 'a', append: true });
        t.complete();
      },
    });
    const { events } = await run(agent([delegateCall({ task: 'stream it' }), 'ok'], { card_url: p.cardUrl }));
    expect(p.calls).toEqual(['ListTasks', 'SendStreamingMessage']);
    expect(ofType(events, 'tool_result')[0]).toMatchObject({ status: 'ok', excerpt: 'part one, part two' });
  });

  it('the tool is described from the card: its name, description and skills', async () => {
    const p = await peer({ name: 'Weather desk', description: 'Knows the weather.', skills: [{ id: 'fc', name: 'Forecast', description: 'A forecast for a city.', examples: ['weather in Oslo'] }], behaviour: (t) => t.complete('x') });
    const [tool] = await remoteDelegationTools({ delegates: [RemoteDelegateSchema.parse({ name: 'echo', card_url: p.url })], chain: ['asker'], events: new EventLog('a'), cards: new AgentCardCache(), secret: () => undefined });
    expect(tool!.definition.name).toBe('delegate_to_echo');
    expect(tool!.definition.description).toContain('Weather desk: Knows the weather.');
    expect(tool!.definition.description).toContain('- Forecast: A forecast for a city. (e.g. "weather in Oslo")');
    expect(tool!.grant).toBe('a2a:echo');
  });

  it.each([true, false])('INPUT_REQUIRED (streaming %s): the question and the ids come back; a follow-up call with them continues the same remote task', async (streaming) => {
    const p = await peer({
      streaming,
      behaviour: (t) => {
        if (!t.followUp) t.ask('Which city?');
        else t.complete(`Sunny in ${t.text}`);
      },
    });
    const events = new EventLog('act-ask');
    const tools = await remoteDelegationTools({ delegates: [RemoteDelegateSchema.parse({ name: 'echo', card_url: p.url })], chain: ['asker'], events, cards: new AgentCardCache(), secret: () => undefined });
    const model = new FnModel((req, n) => {
      if (n === 1) return { calls: [{ name: 'delegate_to_echo', arguments: { task: 'weather please' } }] };
      if (n === 2) {
        const result = JSON.stringify(req.messages);
        const taskId = /task_id \\"([^\\]+)\\"/.exec(result)?.[1];
        const contextId = /context_id \\"([^\\]+)\\"/.exec(result)?.[1];
        return { calls: [{ name: 'delegate_to_echo', arguments: { task: 'Paris', task_id: taskId, context_id: contextId } }] };
      }
      return { content: 'It is sunny in Paris.' };
    });
    const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 5, signal: new AbortController().signal, events, tools: new ToolRegistry(tools, ['a2a:echo']) });
    expect(r.toolResults[0]).toMatchObject({ status: 'ok' });
    expect(r.toolResults[0]!.content).toContain('echo needs more input');
    expect(r.toolResults[0]!.content).toContain('Which city?');
    expect(p.turns).toHaveLength(2);
    expect(p.turns[1]).toMatchObject({ followUp: true, taskId: p.turns[0]!.taskId, contextId: p.turns[0]!.contextId, text: 'Paris' });
    expect(r.toolResults[1]).toMatchObject({ status: 'ok', content: 'Sunny in Paris' });
    expect(r.text).toBe('It is sunny in Paris.');
    expect(p.calls.filter((c) => c.startsWith('Send'))).toEqual(streaming ? ['SendStreamingMessage', 'SendStreamingMessage'] : ['SendMessage', 'SendMessage']);
  });

  it('FAILED and REJECTED are tool errors the model sees, with the remote reason', async () => {
    for (const [how, said] of [
      ['fail', 'failed the task: the tank is empty'],
      ['reject', 'rejected the task: the tank is empty'],
    ] as const) {
      const p = await peer({ behaviour: (t) => t[how]('the tank is empty') });
      const { events } = await run(agent([delegateCall({ task: 'fill it' }), 'I could not.'], { card_url: p.url }));
      const result = ofType(events, 'tool_result')[0]!;
      expect(result).toMatchObject({ status: 'error' });
      expect(result.excerpt).toBe(`Delegation failed: echo ${said}`);
      expect(ofType(events, 'delegation_response')[0]).toMatchObject({ termination: 'error', remote: { state: how === 'fail' ? 'failed' : 'rejected' } });
    }
  });

  it('aborting the run sends CancelTask: the remote executor observes it and the task ends CANCELED', async () => {
    const p = await peer({ behaviour: (t) => (t.working(), t.cancelled) });
    const ac = new AbortController();
    void p.turn(1).then(() => ac.abort());
    const { result, events } = await run(agent([delegateCall({ task: 'take your time' }), 'never'], { card_url: p.url }), { signal: ac.signal });
    expect(result.termination).toBe('aborted');
    await p.cancelCount(1);
    expect(p.cancels).toEqual([p.turns[0]!.taskId]);
    expect(ofType(events, 'tool_result')[0]).toMatchObject({ status: 'cancelled' });
  });

  it("the delegate's timeout sends CancelTask too, and the model is told the task was cancelled", async () => {
    const p = await peer({ streaming: false, behaviour: (t) => (t.working(), t.cancelled) });
    const { events } = await run(agent([delegateCall({ task: 'slow' }), 'gave up'], { card_url: p.url, timeout: 1, streaming: false }));
    expect(p.cancels).toEqual([p.turns[0]!.taskId]);
    const result = ofType(events, 'tool_result')[0]!;
    expect(result.status).toBe('error');
    expect(result.excerpt).toContain('no answer within 1 s; the remote task');
    expect(result.excerpt).toContain('was cancelled');
    expect(ofType(events, 'delegation_error')[0]).toMatchObject({ agent: 'echo' });
  });

  it('a retried call (same activation, step and call) reattaches to the task its first attempt started: no second remote task', async () => {
    const p = await peer({ behaviour: (t) => t.complete(`done: ${t.text}`) });
    const def = agent([delegateCall({ task: 'once only' }), 'ok'], { card_url: p.url });
    await run(def, { id: 'act-retry' });
    const { events } = await run(def, { id: 'act-retry' });
    expect(p.turns).toHaveLength(1);
    expect(ofType(events, 'tool_result')[0]).toMatchObject({ status: 'ok', excerpt: 'done: once only' });
    expect(ofType(events, 'delegation_response')[0]).toMatchObject({ remote: { reattached: true, task_id: p.turns[0]!.taskId } });
  });

  it('without the grant a2a:<name> the tool is not offered, and a call is denied', async () => {
    const p = await peer({ behaviour: (t) => t.complete('x') });
    const { events } = await run(agent([delegateCall({ task: 'hi' }), 'ok'], { card_url: p.url }, []));
    expect(ofType(events, 'tool_result')[0]).toMatchObject({ status: 'denied' });
    expect(p.turns).toHaveLength(0);
  });

  it('the bearer token (a variable, or a file) goes with every call; a missing one is an error naming the setting', async () => {
    const p = await peer({ token: 'peer-secret-token', behaviour: (t) => t.complete('authorised') });
    const viaEnv = await run(agent([delegateCall({ task: 'hi' }), 'ok'], { card_url: p.url, auth: { bearer_env: 'PEER_TOKEN' } }), { id: 'act-env', secret: (n) => (n === 'PEER_TOKEN' ? 'peer-secret-token' : undefined) });
    expect(ofType(viaEnv.events, 'tool_result')[0]).toMatchObject({ status: 'ok', excerpt: 'authorised' });
    const file = join(tmpdir(), `a2a-token-${process.pid}-${Date.now()}`);
    writeFileSync(file, 'peer-secret-token\n', { mode: 0o600 });
    const viaFile = await run(agent([delegateCall({ task: 'hi' }), 'ok'], { card_url: p.url, auth: { bearer_file: file } }), { id: 'act-file' });
    expect(ofType(viaFile.events, 'tool_result')[0]).toMatchObject({ status: 'ok', excerpt: 'authorised' });
    expect(new Set(p.authHeaders)).toEqual(new Set(['Bearer peer-secret-token']));
    const missing = await run(agent([delegateCall({ task: 'hi' }), 'ok'], { card_url: p.url, auth: { bearer_env: 'PEER_TOKEN' } }), { id: 'act-missing' });
    expect(ofType(missing.events, 'tool_result')[0]!.excerpt).toBe('Delegation failed: echo: its token variable PEER_TOKEN (auth.bearer_env) is not set');
    const wrong = await run(agent([delegateCall({ task: 'hi' }), 'ok'], { card_url: p.url, auth: { bearer_env: 'PEER_TOKEN' } }), { id: 'act-wrong', secret: () => 'wrong-token' });
    expect(ofType(wrong.events, 'tool_result')[0]).toMatchObject({ status: 'error', excerpt: 'Delegation failed: echo refused the call (HTTP 401): check its auth (capabilities.delegates, bearer_env)' });
    expect(p.turns).toHaveLength(2);
  });

  it('the task sent and the answer read pass the redactor', async () => {
    const p = await peer({ behaviour: (t) => t.complete(`I was told "${t.text}" and my key is sk-remote-leak`) });
    const redact = (t: string): string => t.replaceAll('hunter2', '[REDACTED]').replaceAll('sk-remote-leak', '[REDACTED]');
    const { events } = await run(agent([delegateCall({ task: 'the password is hunter2' }), 'ok'], { card_url: p.url }), { redact });
    expect(p.turns[0]!.text).toBe('the password is [REDACTED]');
    expect(ofType(events, 'delegation_request')[0]!.task).toBe('the password is [REDACTED]');
    // What delegation records (the loop's tool_call keeps the model's own arguments; the record is redacted where it is stored).
    const recorded = events.filter((e) => e.type.startsWith('delegation_') || e.type === 'tool_result');
    expect(recorded).toHaveLength(3);
    expect(JSON.stringify(recorded)).not.toMatch(/hunter2|sk-remote-leak/);
  });

  it("the delegate's token, from its variable or its file, is a secret the redactor knows", () => {
    const file = join(tmpdir(), `a2a-token-${process.pid}-${Date.now()}-r`);
    writeFileSync(file, 'file-token-9x\n', { mode: 0o600 });
    const def = (auth: Record<string, string>): AgentDefinition => ({ ...agent([], { card_url: 'http://127.0.0.1:1/', auth }), name: 'asker' });
    const known = knownSecrets({ PEER_TOKEN: 'env-token-7q' }, WarrenConfigSchema.parse({}), [def({ bearer_env: 'PEER_TOKEN' }), def({ bearer_file: file })]);
    expect(known).toEqual(expect.arrayContaining(['env-token-7q', 'file-token-9x']));
  });

  it('the card is fetched once and kept; asked again when old, with its ETag, and a 304 keeps it', async () => {
    const p = await peer({ behaviour: (t) => t.complete('x') });
    let now = 0;
    const cards = new AgentCardCache({ now: () => now, maxAgeMs: 60_000 });
    const def = agent([delegateCall({ task: 'a' }), 'ok'], { card_url: p.url });
    await run(def, { cards });
    await run(def, { id: 'act-two', cards });
    expect(p.cardStatuses).toEqual([200]);
    now = 120_000;
    await run(def, { id: 'act-three', cards });
    expect(p.cardStatuses).toEqual([200, 304]);
    expect(p.turns).toHaveLength(3);
  });

  it('an unreachable card is a tool error naming the URL and the cause, never a crash; the run goes on', async () => {
    const p = await peer({ behaviour: (t) => t.complete('x') });
    const url = p.url;
    await p.close();
    const { result, events } = await run(agent([delegateCall({ task: 'hi' }), 'went on without it'], { card_url: url }));
    expect(result).toMatchObject({ termination: 'final', text: 'went on without it' });
    const excerpt = ofType(events, 'tool_result')[0]!.excerpt;
    expect(excerpt).toContain(`Delegation failed: echo cannot be reached: agent card ${url}.well-known/agent-card.json: unreachable (ECONNREFUSED)`);
  });

  it('a page that is no agent card is a tool error saying so, never a crash; nothing is sent', async () => {
    const notACard = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}'));
    await new Promise<void>((r) => notACard.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => notACard.close(r)));
    const url = `http://127.0.0.1:${(notACard.address() as AddressInfo).port}/`;
    const { result, events } = await run(agent([delegateCall({ task: 'hi' }), 'went on without it'], { card_url: url }));
    expect(result).toMatchObject({ termination: 'final', text: 'went on without it' });
    const r = ofType(events, 'tool_result')[0]!;
    expect(r.status).toBe('error');
    expect(r.excerpt).toContain(`Delegation failed: echo cannot be reached: agent card ${url}.well-known/agent-card.json: not an A2A agent card`);
  });

  it("a run without the token budget for a delegation is refused before anything is sent (the agent's max_tokens)", async () => {
    const p = await peer({ behaviour: (t) => t.complete('x') });
    // 3,500 tokens for the run (350 kept to wrap up), 2,200 spent by the call that asks for the delegation: less than a delegation needs is left.
    const ask: ScriptedReply = { tool_calls: [{ name: 'delegate_to_echo', arguments: { task: 'hi' } }], usage: { prompt_tokens: 2200, completion_tokens: 0 } };
    const def = agent([ask, 'ok'], { card_url: p.url });
    const tight: AgentDefinition = { ...def, config: AgentConfigSchema.parse({ ...def.config, brain: { ...def.config.brain, max_tokens: 100 }, behavior: { ...def.config.behavior, max_tokens: 3500 } }) };
    const { events } = await run(tight);
    expect(ofType(events, 'tool_result')[0]).toMatchObject({ status: 'error', excerpt: expect.stringMatching(/^Delegation failed: not enough budget left \(\d+ tokens\)/) as unknown });
    expect(ofType(events, 'delegation_request')).toEqual([]);
    expect(p.calls).toEqual([]);
  });
});
