// Built-in hub tools with grants (docs/agent-loop.md R14), native/text equivalence (R7) and the canary rule,
// end to end: LlmExecutor → the real openai SDK → the fake OpenAI server; hub tools → HubClient → local hub.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventLog } from '../agent-loop/events.ts';
import { LlmExecutor } from '../executors/llm/llm-executor.ts';
import { HubClient } from '../hub-client/client.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { AgentConfigSchema, type AgentConfigInput } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from './fakes/openai-server.ts';
import { hubCaller, type WirePost } from './support/hub-api.ts';

let fake: FakeOpenAI;
let hub: RunningHub;
let client: HubClient;
const CANARY = `canary-${Math.random().toString(36).slice(2)}`;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  hub = await startHub({ dbPath: ':memory:', port: 0 });
  client = new HubClient({ baseUrl: hub.url, apiKey: hub.adminKey });
  process.env.WARREN_TEST_CANARY = CANARY;
});
afterAll(async () => {
  delete process.env.WARREN_TEST_CANARY;
  await fake.close();
  await hub.close();
});
afterEach(() => fake.reset());

function agent(name: string, overrides: Partial<AgentConfigInput> & { grants?: string[] } = {}): AgentDefinition {
  const { grants, ...rest } = overrides;
  const config = AgentConfigSchema.parse({
    name,
    type: 'llm',
    brain: { provider: 'openai', model: 'fake-gpt', api_base: fake.url, api_key_env: 'WARREN_TEST_KEY', max_tokens: 500 },
    capabilities: { grants: grants ?? ['hub:read', 'hub:write'] },
    ...rest,
  });
  return { name, config, systemPrompt: 'x', files: { config: 'c', prompt: 'p' } };
}

const executor = new LlmExecutor({ secret: (n) => (n === 'WARREN_TEST_KEY' ? 'sk-test' : process.env[n]) });

async function run(def: AgentDefinition, task: string, activationId = `act_${def.name}_${Math.random().toString(36).slice(2, 8)}`): Promise<{ result: Awaited<ReturnType<LlmExecutor['run']>>; events: EventLog }> {
  const events = new EventLog(activationId);
  const result = await executor.run({ id: events.activationId, definition: def, context: { system: 'You are a test agent.', task }, events, signal: new AbortController().signal, hub: client });
  return { result, events };
}

async function freshPost(author: string): Promise<{ id: string; key: string }> {
  const api = hubCaller(hub.url);
  const reg = await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: author, type: 'human' }).catch(() => undefined);
  const key = reg?.api_key ?? hub.adminKey;
  const post = await api.post<{ id: string }>('/posts', hub.adminKey, { content: 'What is 6 x 7?', agent_id: author });
  return { id: post.id, key };
}

async function register(name: string): Promise<void> {
  await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name }).catch(() => undefined);
}

describe('grants', () => {
  it('an agent without hub:write cannot post, whatever the model asks', async () => {
    await register('reader-bot');
    const post = await freshPost('alice');
    fake.enqueue(
      { tool_calls: [{ id: 'c1', name: 'hub_post', arguments: { content: 'spam' } }, { id: 'c2', name: 'hub_reply', arguments: { post_id: post.id, content: 'sneaky' } }] },
      { tool_calls: [{ id: 'c3', name: 'HUB_REPLY', arguments: { post_id: post.id, content: 'again' } }] },
      'I could not post.',
    );
    const { result } = await run(agent('reader-bot', { grants: ['hub:read'] }), `answer post ${post.id}`);
    expect(result.termination).toBe('final');
    expect(result.posted).toBe(false);
    const thread = await hubCaller(hub.url).get<WirePost>(`/posts/${post.id}?include_comments=true`, hub.adminKey);
    expect(thread.comments ?? []).toEqual([]);
    const mine = await client.listPosts({ limit: 50 });
    expect(mine.posts.filter((p) => p.author.name === 'reader-bot')).toEqual([]);
    // Write tools are not even offered; reads are.
    const offered = (fake.requests[0]!.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
    expect(offered).toContain('hub_search');
    expect(offered).not.toContain('hub_post');
    expect(offered).not.toContain('hub_reply');
    // Each attempt got an explicit denied result the model saw.
    const second = fake.requests[1]!.body as { messages: Array<{ role: string; content: string; tool_call_id?: string }> };
    expect(second.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([expect.stringContaining('permission denied'), expect.stringContaining('permission denied')]);
  });

  it('with hub:write the agent replies as itself, keyed by activation, step and call: a retried activation does not post twice', async () => {
    await register('writer-bot');
    const post = await freshPost('bob');
    for (let attempt = 0; attempt < 2; attempt++) {
      fake.enqueue({ tool_calls: [{ id: 'w1', name: 'hub_reply', arguments: { post_id: post.id, content: '42' } }] }, 'Replied with 42.');
      const { result } = await run(agent('writer-bot'), `answer post ${post.id}`, 'act_writer_retried');
      expect(result).toMatchObject({ termination: 'final', posted: true });
    }
    const thread = await hubCaller(hub.url).get<WirePost>(`/posts/${post.id}?include_comments=true`, hub.adminKey);
    expect(thread.comments?.map((c) => [c.author.name, c.content])).toEqual([['writer-bot', '42']]);
  });
});

describe('native and text tool modes', () => {
  it('the same scenario gives the same termination, hub writes and tool results in both modes', async () => {
    const outcomes: unknown[] = [];
    for (const mode of ['native', 'text'] as const) {
      const name = `${mode}-bot`;
      await register(name);
      const post = await freshPost(`asker-${mode}`);
      const calls = [
        { name: 'hub_get_thread', arguments: { post_id: post.id } },
        { name: 'hub_reply', arguments: { post_id: post.id, content: 'It is 42.' } },
      ];
      const turn: FakeReply =
        mode === 'native'
          ? { tool_calls: calls.map((c, i) => ({ id: `n${i}`, ...c })) }
          : { content: `Let me answer.\n${calls.map((c) => '```tool_call\n' + JSON.stringify({ tool: c.name, arguments: c.arguments }) + '\n```').join('\n')}` };
      fake.enqueue(turn, { tool_calls: mode === 'native' ? [{ id: 'n9', name: 'task_complete', arguments: { result: 'Answered.' } }] : undefined, content: mode === 'text' ? '```tool_call\n{"tool": "task_complete", "arguments": {"result": "Answered."}}\n```' : null });
      const { result, events } = await run(agent(name, { brain: { provider: 'openai', model: 'fake-gpt', api_base: fake.url, api_key_env: 'WARREN_TEST_KEY', tool_mode: mode } }), `answer post ${post.id}`);
      const thread = await hubCaller(hub.url).get<WirePost>(`/posts/${post.id}?include_comments=true`, hub.adminKey);
      const toolResults = events.events.flatMap((e) => (e.type === 'tool_result' ? [[e.name, e.status]] : []));
      outcomes.push({ termination: result.termination, text: result.text, posted: result.posted, writes: thread.comments?.map((c) => [c.author.name === name ? 'the agent' : c.author.name, c.content]), toolResults });
      const body = fake.requests.at(-1)!.body as { tools?: unknown; messages: Array<{ role: string; content: string }> };
      if (mode === 'text') {
        expect(body.tools).toBeUndefined();
        expect(body.messages[0]!.content).toContain('```tool_call');
        // Two calls to tools in one text reply got distinct ids, both paired.
        expect(body.messages.filter((m) => m.role === 'user' && m.content.startsWith('[tool_result id=')).map((m) => /id=(\S+)/.exec(m.content)?.[1])).toEqual(['call_text_1', 'call_text_2']);
      }
      fake.reset();
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
    expect(outcomes[0]).toMatchObject({ termination: 'stop_tool', text: 'Answered.', posted: true });
  });
});

describe('secrets', () => {
  it('a canary secret in the daemon environment appears in no model request and no event', async () => {
    await register('canary-bot');
    fake.enqueue({ tool_calls: [{ id: 'k1', name: 'budget_check', arguments: {} }] }, 'ok');
    const { events } = await run(agent('canary-bot'), 'check your budget');
    expect(fake.requests.length).toBe(2);
    for (const r of fake.requests) {
      expect(r.rawBody).not.toContain(CANARY);
      expect(JSON.stringify(r.headers)).not.toContain(CANARY);
    }
    expect(JSON.stringify(events.events)).not.toContain(CANARY);
    expect(JSON.stringify(events.events)).not.toContain(hub.adminKey);
  });
});
