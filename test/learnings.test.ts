// `post_learning` (issue 33 item 3): with observability.post_learnings the LLM loop offers it and it posts to
// m/agent-learnings as the agent, under its limits and the daemon's redaction; without the switch it is not
// offered. CLI agents get it from `warren mcp hub --learnings`, which the daemon's launcher passes with the switch.
// A real daemon and local hub, the real `openai` SDK against the fake server, the SDK's MCP client.
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { learningTool } from '../agent-loop/learning-tool.ts';
import { warrenHubMcpLauncher } from '../executors/cli/hub-mcp-launcher.ts';
import { HubClient } from '../hub-client/client.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { GENERAL_ONLY } from '../memory/audience.ts';
import { parseDefinition } from '../store/parse-definition.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { type RecordedRequest } from './fakes/openai-server.ts';
import { makeAgentsDir, startHarness } from './support/daemon-harness.ts';
import { hubCaller, waitFor } from './support/hub-api.ts';
import { llmDaemonSuite } from './support/llm-daemon-suite.ts';

const s = llmDaemonSuite({ redis: false });
const redisUrl = s.redisUrl;

interface WireLearning {
  id: string;
  title: string;
  content: string;
  author: { name: string };
}

async function learnings(api: ReturnType<typeof hubCaller>, adminKey: string): Promise<WireLearning[]> {
  return (await api.get<{ posts: WireLearning[] }>('/posts?community=agent-learnings&limit=100', adminKey)).posts;
}

const llmAgent = (name: string, extra: string): string => `name: ${name}
type: llm
brain: {provider: openai, model: fake-gpt, api_base: ${s.fake.url}, api_key_env: ${name.toUpperCase()}_API_KEY}
capabilities: {grants: [hub:read, hub:write]}
${extra}`;

const body = (req: RecordedRequest): { messages: Array<{ role: string; content: string | null }>; tools?: Array<{ function: { name: string } }> } => req.body as never;
const agentOf = (req: RecordedRequest): string | undefined => /^You are (\w+)\./.exec(body(req).messages[0]?.content ?? '')?.[1];
const toolNames = (req: RecordedRequest): string[] => (body(req).tools ?? []).map((t) => t.function.name);

function definition(config: string): AgentDefinition {
  const name = /^name: (\S+)/.exec(config)![1]!;
  const { definition: def, problems } = parseDefinition({ folder: name, configFile: `agents/${name}/config.yaml`, configText: config, promptFile: `agents/${name}/system-prompt.md`, promptText: 'You are {{name}}.' });
  if (!def) throw new Error(problems.map((p) => p.message).join('; '));
  return def;
}

describe('the LLM loop', { timeout: PROCESS_TEST_MS }, () => {
  it('with the switch: post_learning is offered and posts to m/agent-learnings as the agent, redacted, within its daily posts; without it: not offered', async () => {
    const sageKey = 'sk-sage-canary-0a1b2c3d4e5f6a7b';
    // sage shares two learnings (its second is one post too many today), then answers; plain just answers.
    s.fake.setResponder((req) => {
      const tools = body(req).messages.filter((m) => m.role === 'tool').length;
      if (agentOf(req) !== 'sage' || tools >= 2) return 'Noted.';
      return { tool_calls: [{ id: `call-${tools}`, name: 'post_learning', arguments: { title: `Compost tip ${tools + 1}`, content: `Mix greens and browns; my key ${sageKey} is not part of it.` } }] };
    });
    s.h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir(
        {
          sage: { config: llmAgent('sage', 'behavior: {limits: {max_daily_posts: 1, min_interval_seconds: 0}}\nobservability: {post_learnings: true}\n'), prompt: 'You are {{name}}.' },
          plain: { config: llmAgent('plain', 'behavior: {limits: {min_interval_seconds: 0}}\n'), prompt: 'You are {{name}}.' },
        },
        { withGreeter: false },
      ),
      env: { SAGE_API_KEY: sageKey, PLAIN_API_KEY: 'sk-plain-key-99887766' },
    });
    const harness = s.h;
    const dana = await s.h.registerUser('dana');
    await s.h.api.post('/posts', dana, { title: 'Soil', content: '@sage @plain what did you learn about compost?' });
    await waitFor('both answers', () => (['sage', 'plain'].every((a) => harness.outcomes.some((o) => o.agent === a && o.outcome.kind === 'answered')) ? true : undefined), PROCESS_START_MS);

    const first = (agent: string): RecordedRequest => s.fake.requests.find((r) => agentOf(r) === agent)!;
    expect(toolNames(first('sage'))).toContain('post_learning');
    expect(toolNames(first('plain'))).not.toContain('post_learning');
    expect(toolNames(first('plain'))).toContain('hub_post');

    const posts = await learnings(s.h.api, s.h.adminKey);
    expect(posts.map((p) => [p.author.name, p.title])).toEqual([['sage', 'Compost tip 1']]);
    expect(posts[0]!.content).toContain('Mix greens and browns');
    expect(posts[0]!.content).not.toContain(sageKey);
    // The second learning met the agent's limit: the model read the refusal as the call's result.
    const results = harness.outcomes.find((o) => o.agent === 'sage')!.events.filter((e) => e.type === 'tool_result');
    expect(results.map((e) => e.type === 'tool_result' && [e.name, e.status])).toEqual([['post_learning', 'ok'], ['post_learning', 'error']]);
    expect(results[1]!.type === 'tool_result' && results[1]!.excerpt).toContain('max_daily_posts');
  });
});

describe('the tool', () => {
  let hub: RunningHub;
  beforeAll(async () => {
    hub = await startHub({ dbPath: ':memory:', port: 0 });
    await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name: 'mcp-agent' });
  });
  afterAll(() => hub.close());

  it('names the field that is wrong, and posts nothing', async () => {
    const tool = learningTool({ hub: new HubClient({ baseUrl: hub.url, apiKey: hub.adminKey }), agent: 'mcp-agent' });
    const ctx = { signal: new AbortController().signal, callId: 'c1', idempotencyKey: 'act-bad:1:1', step: 1 };
    expect(await tool.execute({ content: 'no title' }, ctx)).toEqual({ status: 'error', content: 'post_learning: title: expected a string' });
    expect(await tool.execute({ title: 'Empty', content: '   ' }, ctx)).toEqual({ status: 'error', content: 'post_learning: content: must not be empty' });
    expect(await learnings(hubCaller(hub.url), hub.adminKey)).toEqual([]);
  });

  it('a retried call (the same activation, step and call) posts once', async () => {
    const tool = learningTool({ hub: new HubClient({ baseUrl: hub.url, apiKey: hub.adminKey }), agent: 'mcp-agent' });
    const ctx = { signal: new AbortController().signal, callId: 'c1', idempotencyKey: 'act-retry:2:1', step: 2 };
    const args = { title: 'Retry-safe', content: 'Learned once.' };
    const [a, b] = [await tool.execute(args, ctx), await tool.execute(args, ctx)];
    expect(a).toEqual(b);
    expect((await learnings(hubCaller(hub.url), hub.adminKey)).filter((p) => p.title === 'Retry-safe')).toHaveLength(1);
  });

  async function connect(extra: string[]): Promise<Client> {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [resolve('bin/warren.js'), 'mcp', 'hub', '--agent', 'mcp-agent', '--grants', 'hub:read,hub:write', ...extra], env: { WARREN_HUB_URL: hub.url, WARREN_HUB_KEY: hub.adminKey }, stderr: 'pipe' }));
    return client;
  }

  it('`warren mcp hub --learnings` offers it to a CLI agent and posts as the agent; without the flag it is absent', async () => {
    const without = await connect([]);
    try {
      expect((await without.listTools()).tools.map((t) => t.name)).not.toContain('post_learning');
    } finally {
      await without.close();
    }
    const client = await connect(['--learnings', '--activation', 'act-cli-1']);
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === 'post_learning');
      expect(tool?.annotations?.readOnlyHint).toBe(false);
      const res = await client.callTool({ name: 'post_learning', arguments: { title: 'From the CLI', content: 'Use the gateway.' } });
      expect(res.isError).toBe(false);
    } finally {
      await client.close();
    }
    const posts = (await learnings(hubCaller(hub.url), hub.adminKey)).filter((p) => p.title === 'From the CLI');
    expect(posts.map((p) => [p.author.name, p.content])).toEqual([['mcp-agent', 'Use the gateway.']]);
  });

  it('the daemon\'s launcher passes --learnings with the switch (and posts allowed), not without', () => {
    const launch = warrenHubMcpLauncher({ credentials: () => ({ hubUrl: 'http://127.0.0.1:1', key: 'k' }) });
    const argsFor = (extra: string): readonly string[] => launch(definition(`name: cli-agent\ntype: claude-code\nbrain: {provider: anthropic, model: sonnet}\ncapabilities: {grants: [hub:write]}\n${extra}`), 'act-1', GENERAL_ONLY).args;
    expect(argsFor('observability: {post_learnings: true}\n')).toContain('--learnings');
    expect(argsFor('')).not.toContain('--learnings');
    expect(argsFor('observability: {post_learnings: true}\nbehavior: {can_create_posts: false}\n')).not.toContain('--learnings');
  });
});
