// opencode: configuration building (pure), classification of recorded real output (golden fixtures from
// opencode 1.18.33), and the real `opencode` binary from npm through the CLI executor against the fake
// OpenAI-compatible server: a plain answer, an API 401, the steps limit, and a post through a hub MCP tool
// that appears on a real local hub.
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliExecutor } from '../executors/cli/cli-executor.ts';
import { Semaphore } from '../executors/cli/concurrency.ts';
import type { HubMcpLauncher } from '../executors/cli/mcp.ts';
import { opencodeAdapter, opencodeConfig, opencodeInvocation, OpencodeJsonParser } from '../executors/cli/opencode.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from './fakes/openai-server.ts';
import { activation, definition, exitOf, feed } from './support/cli-agent.ts';
import { hubCaller, type WirePost } from './support/hub-api.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const OPENCODE = join(import.meta.dirname, '..', 'node_modules', '.bin', 'opencode');
const FAKE_HUB_MCP = join(import.meta.dirname, 'fakes', 'hub-mcp-server.ts');
const postingTools = ['create_comment', 'create_post'];

describe('opencode configuration', () => {
  it('a custom endpoint as an openai-compatible provider, the key by reference, MCP servers, deny-by-default permissions, steps', () => {
    const def = definition({ type: 'opencode', brain: { provider: 'openai', model: 'fake-gpt', api_key_env: 'CODER_KEY', api_base: 'http://127.0.0.1:9/v1' }, behavior: { max_iterations: 6 } });
    const c = { activationId: 'a', definition: def, context: { system: 'SYS', task: 'TASK' }, workspace: '/w', scratch: '/s', stateDir: '/st', apiKey: 'sk-agent', mcpServers: [{ kind: 'stdio' as const, name: 'hub', command: '/usr/bin/node', args: ['warren.js'], env: { A: '1' } }] };
    const inv = opencodeInvocation(c);
    expect(inv.args).toEqual(['run', '--format', 'json', '-m', 'warren/fake-gpt', '--agent', 'warren']);
    expect(inv.stdin).toBe('SYS\n\n---\n\nTASK');
    const config = JSON.parse(inv.env.OPENCODE_CONFIG_CONTENT ?? '{}') as Record<string, unknown>;
    expect(config).toEqual(opencodeConfig(c));
    expect(config).toMatchObject({
      model: 'warren/fake-gpt',
      provider: { warren: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://127.0.0.1:9/v1', apiKey: '{env:WARREN_OPENCODE_API_KEY}' } } },
      mcp: { hub: { type: 'local', command: ['/usr/bin/node', 'warren.js'], environment: { A: '1' }, enabled: true } },
      permission: { edit: 'deny', bash: 'deny', webfetch: 'deny' },
      agent: { warren: { steps: 6 } },
    });
    expect(inv.env.OPENCODE_CONFIG_CONTENT).not.toContain('sk-agent'); // the key travels in its own variable
    expect(inv.env).toMatchObject({ WARREN_OPENCODE_API_KEY: 'sk-agent', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_CLAUDE_CODE: '1' });
  });

  it('allows edits and listed shell commands only when granted', () => {
    const def = definition({ type: 'opencode', capabilities: { grants: ['filesystem:write'], shell: { enabled: true, allowed_commands: ['npm'] } } });
    const config = opencodeConfig({ activationId: 'a', definition: def, context: { system: '', task: '' }, workspace: '/w', scratch: '/s', stateDir: '/st', apiKey: 'k', mcpServers: [] });
    expect(config.permission).toEqual({ edit: 'allow', bash: { '*': 'deny', 'npm *': 'allow' }, webfetch: 'deny' });
    expect(config.model).toBe('anthropic/claude-sonnet-4-5');
  });
});

describe('opencode output classification (golden fixtures)', () => {
  it('plain answer: text of the last step, tokens summed from step_finish', () => {
    const r = feed(new OpencodeJsonParser({ postingTools, maxSteps: 5 }), 'opencode-1.18.33-plain.jsonl').finish(exitOf(0));
    expect(r).toMatchObject({ termination: 'final', text: 'Hello from fake openai.', steps: 1, usage: { outputTokens: 6, costUsd: 0, costIsEstimate: true } });
    expect(r.usage.inputTokens).toBeGreaterThan(0);
  });

  it('API 401: the error event decides, not retryable', () => {
    const r = feed(new OpencodeJsonParser({ postingTools, maxSteps: 5 }), 'opencode-1.18.33-401.jsonl').finish(exitOf(1));
    expect(r).toMatchObject({ termination: 'error', error: { retryable: false } });
    expect(r.error?.message).toMatch(/opencode error 401: APIError: Incorrect API key/);
  });

  it('a non-zero exit without JSON is a setup failure', () => {
    expect(new OpencodeJsonParser({ postingTools, maxSteps: 5 }).finish(exitOf(1, { stderrTail: 'Error: unknown option' }))).toMatchObject({ termination: 'error', error: { retryable: false } });
  });
});

describe('the real opencode CLI against the fake OpenAI-compatible server', { timeout: PROCESS_TEST_MS }, () => {
  let fake: FakeOpenAI;
  let hub: RunningHub;
  let root: string;
  const key = `sk-oc-${Math.random().toString(36).slice(2)}`;
  const adminKey = `admin-${randomUUID()}`;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ apiKey: key });
    hub = await startHub({ dbPath: ':memory:', port: 0, adminKey });
    root = await mkdtemp(join(tmpdir(), 'warren-opencode-'));
  });
  afterAll(async () => {
    await fake.close();
    await hub.close();
  });

  const isTitleRequest = (r: RecordedRequest): boolean => JSON.stringify(r.body).includes('title generator');
  const executor = (keyValue: string, hubMcp?: HubMcpLauncher) =>
    new CliExecutor({
      adapter: opencodeAdapter(),
      binary: OPENCODE,
      workspacesRoot: join(root, 'workspaces'),
      secret: (name) => (name === 'CODER_KEY' ? keyValue : undefined),
      parentEnv: { PATH: process.env.PATH, HOME: root },
      slots: new Semaphore(2),
      graceMs: 1_000,
      hubMcp,
    });
  const def = (steps = 5) => definition({ type: 'opencode', brain: { provider: 'openai', model: 'fake-gpt', api_key_env: 'CODER_KEY', api_base: fake.url }, behavior: { max_iterations: steps, max_duration: '60s' } });

  it('plain answer', async () => {
    fake.reset();
    fake.setResponder((r) => (isTitleRequest(r) ? 'A title' : 'Hello from fake openai.'));
    const r = await executor(key).run(activation(def(), { system: 'You are coder.', task: 'Say hello to alice.' }));
    expect(r.error).toBeUndefined();
    expect(r).toMatchObject({ termination: 'final', text: 'Hello from fake openai.', posted: false });
    const main = fake.requests.find((q) => !isTitleRequest(q));
    expect(JSON.stringify(main?.body)).toContain('Say hello to alice.');
    expect(main?.headers.authorization).toBe(`Bearer ${key}`);
  }, 60_000);

  it('API 401: a non-retryable error', async () => {
    fake.reset();
    fake.setResponder(() => 'unused');
    const r = await executor('sk-wrong').run(activation(def()));
    expect(r).toMatchObject({ termination: 'error', error: { retryable: false } });
    expect(r.error?.message).toMatch(/401/);
  }, 60_000);

  it('the steps limit: tools withdrawn after the limit, classified as max_steps', async () => {
    fake.reset();
    fake.setResponder((r) => {
      if (isTitleRequest(r)) return 'A title';
      // A model that obeys opencode's "maximum steps reached" instruction with a text-only answer.
      if (JSON.stringify(r.body).includes('MAXIMUM STEPS REACHED')) return 'I ran out of steps.';
      return { tool_calls: [{ name: 'glob', arguments: { pattern: '*.md' } }] };
    });
    const r = await executor(key).run(activation(def(2)));
    expect(r).toMatchObject({ termination: 'max_steps', text: '' });
    expect(r.steps).toBe(2); // step 1 called a tool; step 2, the last allowed, was forced to answer in text
  }, 60_000);

  it('posts through the hub MCP tool: the comment is on the hub and the result says posted', async () => {
    const api = hubCaller(hub.url);
    await api.post('/agents/register', adminKey, { name: 'coder', type: 'opencode' });
    const alice = await api.post<{ api_key: string }>('/agents/register', adminKey, { name: 'alice', type: 'human' });
    const post = await api.post<{ id: string }>('/posts', alice.api_key, { title: 'Q', content: '@coder help' });
    fake.reset();
    fake.setResponder((r) => {
      if (isTitleRequest(r)) return 'A title';
      if (JSON.stringify(r.body).includes('"role":"tool"')) return 'I replied on the hub.';
      return { tool_calls: [{ name: 'hub_create_comment', arguments: { post_id: post.id, content: 'Answered by opencode through MCP.' } }] };
    });
    const launcher: HubMcpLauncher = (agent) => ({ command: process.execPath, args: [FAKE_HUB_MCP], env: { FAKE_HUB_URL: hub.url, FAKE_HUB_ADMIN_KEY: adminKey, FAKE_HUB_AGENT: agent.name } });
    const r = await executor(key, launcher).run(activation(def()));
    expect(r).toMatchObject({ termination: 'final', posted: true, text: '' });
    const thread = await api.get<WirePost>(`/posts/${post.id}?include_comments=true`, alice.api_key);
    expect(thread.comments?.filter((c) => c.author.name === 'coder').map((c) => c.content)).toEqual(['Answered by opencode through MCP.']);
  }, 60_000);
});
