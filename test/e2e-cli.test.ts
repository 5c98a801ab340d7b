// A claude-code agent end to end: a mention on the local hub, the daemon runs the real `claude` CLI against
// the fake Anthropic server, and the answer reaches the thread exactly once: through the hub MCP tool when
// the agent has one (the daemon must not post again), or posted by the daemon when it has none.
import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic-server.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
const CLAUDE = join(import.meta.dirname, '..', 'node_modules', '.bin', 'claude');
const FAKE_HUB_MCP = join(import.meta.dirname, 'fakes', 'hub-mcp-server.ts');
const FAKE_CLIS = join(import.meta.dirname, 'fakes', 'cli');
const key = `sk-ant-e2e-${Math.random().toString(36).slice(2)}`;

let fake: FakeAnthropic;
let h: Harness | undefined;
beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: key });
});
afterAll(() => fake.close());
afterEach(async () => {
  await h?.stop();
  h = undefined;
  fake.reset();
});

const coder = (apiBase: string): string => `name: coder
description: Writes code.
type: claude-code
brain:
  provider: anthropic
  model: claude-sonnet-4-5
  api_base: ${apiBase}
  api_key_env: CODER_KEY
capabilities:
  grants: [hub:read, hub:write]
behavior:
  max_iterations: 4
  max_duration: 60s
`;

async function start(withMcp: boolean, callsFile: string, opts: { binary?: string; withGreeter?: boolean; env?: Record<string, string>; tracing?: boolean } = {}): Promise<Harness> {
  const workspaces = mkdtempSync(join(tmpdir(), 'warren-ws-'));
  return startHarness({
    redisUrl,
    agentsDir: makeAgentsDir({ coder: { config: coder(fake.url), prompt: 'You are {{name}}. {{description}}' } }, { withGreeter: opts.withGreeter ?? false }),
    env: { CODER_KEY: key, PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspaces, ...opts.env },
    config: (c) => {
      c.executors.cli.binaries['claude-code'] = opts.binary ?? CLAUDE;
      c.executors.cli.workspaces = workspaces;
      c.executors.cli.claude_max_retries = 0;
      // Spans go nowhere (nothing listens on port 9); what matters is that the activation has a trace.
      if (opts.tracing) c.tracing = { enabled: true, endpoint: 'http://127.0.0.1:9/v1/traces', service_name: 'warren', capture_payloads: false };
    },
    hubMcp: withMcp
      ? (hub) => (agent) => ({
          command: process.execPath,
          args: [FAKE_HUB_MCP],
          env: { FAKE_HUB_URL: hub.url, FAKE_HUB_ADMIN_KEY: hub.adminKey, FAKE_HUB_AGENT: agent.name, FAKE_HUB_CALLS: callsFile },
        })
      : null,
  });
}

async function commentsBy(harness: Harness, postId: string, userKey: string, author: string): Promise<string[]> {
  const p = await harness.api.get<WirePost>(`/posts/${postId}?include_comments=true`, userKey);
  return (p.comments ?? []).filter((c) => c.author.name === author).map((c) => c.content);
}

describe('claude-code agent through the daemon', () => {
  it('posts through the hub MCP tool, and the daemon does not post again', async () => {
    const callsDir = mkdtempSync(join(tmpdir(), 'warren-calls-'));
    // The fake hub server runs as the CLI's user (executors.cli.run_as when the tests run as root).
    chmodSync(callsDir, 0o777);
    const callsFile = join(callsDir, 'calls.jsonl');
    let postId = '';
    fake.setResponder((req) => {
      const sawToolResult = JSON.stringify(req.body?.messages ?? []).includes('tool_result');
      if (!sawToolResult) return { tool_uses: [{ name: 'mcp__hub__create_comment', input: { post_id: postId, content: 'Answered through MCP.' } }] };
      return 'I posted my answer on the hub.';
    });
    h = await start(true, callsFile);
    const userKey = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', userKey, { title: 'Help', content: '@coder please answer' });
    postId = post.id;
    const harness = h;
    await waitFor('the activation', () => (harness.outcomes.length ? harness.outcomes : undefined), 60_000);
    expect(h.outcomes[0]).toMatchObject({ outcome: { kind: 'posted_by_tool' }, reason: 'posted', replies: 1 });
    expect(await commentsBy(h, post.id, userKey, 'coder')).toEqual(['Answered through MCP.']);
    expect(readFileSync(callsFile, 'utf8').trim().split('\n')).toHaveLength(1);
    // The model saw the hub tool under claude's MCP naming.
    const tools = fake.messageRequests()[0]?.body?.tools?.map((t) => t.name) ?? [];
    expect(tools).toContain('mcp__hub__create_comment');
  }, 90_000);

  it('without a hub MCP server, the daemon posts the final text as the reply', async () => {
    fake.setResponder(() => 'Here is my answer, posted by warren.');
    h = await start(false, '/dev/null');
    const userKey = await h.registerUser('bob');
    const post = await h.api.post<{ id: string }>('/posts', userKey, { title: 'Q', content: '@coder what now?' });
    const harness = h;
    const replies = await waitFor('coder reply', async () => {
      const c = await commentsBy(harness, post.id, userKey, 'coder');
      return c.length ? c : undefined;
    }, 60_000);
    expect(replies).toEqual(['Here is my answer, posted by warren.']);
    expect(fake.messageRequests()[0]?.body?.tools?.some((t) => t.name.startsWith('mcp__hub__'))).toBe(false);
  }, 90_000);

  it('a canary secret of the daemon never reaches the CLI child; the declared key and the trace do (its /proc environ, posted back redacted)', async () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}`;
    h = await start(false, '/dev/null', { binary: join(FAKE_CLIS, 'claude-env-dump.js'), env: { WARREN_CANARY: canary, CLAUDECODE: '1', CLAUDE_CODE_ENTRYPOINT: 'cli' }, tracing: true });
    const userKey = await h.registerUser('carol');
    const post = await h.api.post<{ id: string }>('/posts', userKey, { title: 'env', content: '@coder show me' });
    const harness = h;
    const [environ] = await waitFor('coder reply', async () => {
      const c = await commentsBy(harness, post.id, userKey, 'coder');
      return c.length ? c : undefined;
    }, 30_000);
    const vars = (environ ?? '').split('\n');
    // The declared key reached the child (its variable is there), and the daemon redacted it from the reply it posted.
    expect(vars).toContain('ANTHROPIC_API_KEY=[REDACTED]');
    expect(environ).not.toContain(key);
    expect(vars.filter((v) => v.startsWith('TRACEPARENT='))).toEqual([expect.stringMatching(/^TRACEPARENT=00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)]);
    expect(environ).not.toContain(canary);
    expect(environ).not.toContain(h.adminKey);
    expect(vars.some((v) => v.startsWith('CLAUDECODE=') || v.startsWith('CLAUDE_CODE_ENTRYPOINT=') || v.startsWith('CODER_KEY='))).toBe(false);
  }, 60_000);

  it('a CLI printing a 10 MB line fails its activation cleanly and the daemon keeps serving other agents', async () => {
    h = await start(false, '/dev/null', { binary: join(FAKE_CLIS, 'long-line.js'), withGreeter: true });
    const userKey = await h.registerUser('dave');
    await h.api.post('/posts', userKey, { title: 'big', content: '@coder flood' });
    const harness = h;
    const error = await waitFor('the error post', async () => {
      const page = await harness.api.get<{ posts: Array<{ content: string; author: { name: string } }> }>('/posts?community=agent-errors', harness.adminKey);
      return page.posts.find((p) => p.author.name === 'coder' && p.content.includes('max_cli_output_bytes'));
    }, 30_000);
    // The output bound (4 MiB by default) stops the CLI before its line reaches the 8 MiB line limit.
    expect(error.content).toMatch(/the CLI's output passed behavior\.limits\.max_cli_output_bytes \(4194304 bytes\)/);
    const hello = await h.api.post<{ id: string }>('/posts', userKey, { content: '@greeter hello' });
    const reply = await waitFor('greeter reply', async () => {
      const c = await commentsBy(harness, hello.id, userKey, 'greeter');
      return c.length ? c : undefined;
    }, 15_000);
    expect(reply).toHaveLength(1);
  }, 60_000);

  it('posts through the real `warren mcp hub`, which the daemon hands claude by default, and posts nothing twice', async () => {
    let postId = '';
    fake.setResponder((req) => {
      const sawToolResult = JSON.stringify(req.body?.messages ?? []).includes('tool_result');
      if (!sawToolResult) return { tool_uses: [{ name: 'mcp__hub__hub_reply', input: { post_id: postId, content: 'Answered through warren mcp hub.' } }] };
      return 'Done.';
    });
    const workspaces = mkdtempSync(join(tmpdir(), 'warren-ws-'));
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ coder: { config: coder(fake.url), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { CODER_KEY: key, PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspaces },
      config: (c) => {
        c.executors.cli.binaries['claude-code'] = CLAUDE;
        c.executors.cli.workspaces = workspaces;
        c.executors.cli.claude_max_retries = 0;
      },
    });
    const userKey = await h.registerUser('zed');
    const post = await h.api.post<{ id: string }>('/posts', userKey, { title: 'Help', content: '@coder please answer' });
    postId = post.id;
    const harness = h;
    await waitFor('the activation', () => (harness.outcomes.length ? harness.outcomes : undefined), 60_000);
    expect(fake.messageRequests()[0]?.body?.tools?.map((t) => t.name)).toContain('mcp__hub__hub_reply');
    expect(h.outcomes[0]).toMatchObject({ outcome: { kind: 'posted_by_tool' }, replies: 1 });
    expect(await commentsBy(h, post.id, userKey, 'coder')).toEqual(['Answered through warren mcp hub.']);
  }, 90_000);
});
