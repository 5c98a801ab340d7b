// claude-code: argument building (pure), classification of recorded real output (golden fixtures from
// claude 2.1.330 against the fake Anthropic server), and the real `claude` binary from npm run through the
// CLI executor against the fake Anthropic Messages server: a plain answer, an API 401, a max-turns stop.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeInvocation, claudeMcpConfig, claudeMissingRequirement, ClaudeStreamParser } from '../executors/cli/claude-code.ts';
import { claudeCodeAdapter } from '../executors/cli/claude-code.ts';
import { CliExecutor } from '../executors/cli/cli-executor.ts';
import { Semaphore } from '../executors/cli/concurrency.ts';
import { isHubPostingTool } from '../executors/cli/mcp.ts';
import { startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic-server.ts';
import { activation, definition, exitOf, feed } from './support/cli-agent.ts';

const CLAUDE = join(import.meta.dirname, '..', 'node_modules', '.bin', 'claude');
const postingTools = ['create_comment', 'create_post'];

describe('claude-code arguments', () => {
  it('builds an unattended stream-json run with files for the system prompt and MCP config, the task on stdin', () => {
    const def = definition({ type: 'claude-code', brain: { provider: 'anthropic', model: 'sonnet', api_key_env: 'CODER_KEY', api_base: 'http://127.0.0.1:9/', fallback_models: ['haiku'] }, behavior: { max_iterations: 7 } });
    const inv = claudeInvocation(
      {
        activationId: 'a1',
        definition: def,
        context: { system: 'SYSTEM TEXT', task: 'TASK TEXT' },
        workspace: '/ws/coder',
        scratch: '/tmp/s',
        stateDir: '/ws/.state/coder',
        apiKey: 'sk-agent',
        mcpServers: [
          { kind: 'stdio', name: 'hub', command: '/usr/bin/node', args: ['warren.js', 'mcp', 'hub'], env: { A: '1' } },
          { kind: 'http', name: 'docs', url: 'http://127.0.0.1:8931/mcp', headers: { h: 'v' } },
        ],
      },
      { maxRetries: 0 },
    );
    expect(inv.args).toEqual([
      '-p', '--output-format', 'stream-json', '--verbose', '--bare', '--no-session-persistence',
      '--model', 'sonnet', '--max-turns', '7',
      '--append-system-prompt-file', '/tmp/s/system-prompt.md',
      '--mcp-config', '/tmp/s/mcp.json', '--strict-mcp-config',
      '--permission-mode', 'dontAsk',
      '--fallback-model', 'haiku',
      '--allowedTools', 'mcp__hub mcp__docs',
    ]);
    expect(inv.args.join(' ')).not.toMatch(/SYSTEM TEXT|TASK TEXT|sk-agent|dangerously|bypass/);
    expect(inv.stdin).toBe('TASK TEXT');
    expect(inv.files['/tmp/s/system-prompt.md']).toBe('SYSTEM TEXT');
    expect(JSON.parse(inv.files['/tmp/s/mcp.json'] ?? '')).toEqual({
      mcpServers: { hub: { command: '/usr/bin/node', args: ['warren.js', 'mcp', 'hub'], env: { A: '1' } }, docs: { type: 'http', url: 'http://127.0.0.1:8931/mcp', headers: { h: 'v' } } },
    });
    expect(inv.env).toMatchObject({ ANTHROPIC_API_KEY: 'sk-agent', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/', CLAUDE_CODE_MAX_RETRIES: '0', CLAUDE_CONFIG_DIR: '/ws/.state/coder/claude' });
  });

  it('allows file and shell tools only as grants and shell settings say', () => {
    const def = definition({ type: 'claude-code', capabilities: { grants: ['hub:write', 'filesystem:write'], shell: { enabled: true, allowed_commands: ['git'] } } });
    const inv = claudeInvocation({ activationId: 'a', definition: def, context: { system: '', task: '' }, workspace: '/w', scratch: '/s', stateDir: '/st', apiKey: 'k', mcpServers: [] });
    expect(inv.args.at(-1)).toBe('Read Glob Grep Edit Write Bash(git *) Bash(git)');
    expect(claudeMcpConfig([])).toEqual({ mcpServers: {} });
    expect(claudeMissingRequirement(definition({ type: 'claude-code', brain: { provider: 'openai', model: 'gpt-4o' } }))).toMatch(/needs brain.provider anthropic/);
    expect(claudeMissingRequirement(def)).toBeUndefined();
  });

  it('recognises hub posting tools under each CLI naming scheme, and nothing else', () => {
    expect(isHubPostingTool('mcp__hub__create_comment', postingTools)).toBe(true);
    expect(isHubPostingTool('hub__create_post', postingTools)).toBe(true);
    expect(isHubPostingTool('hub_create_comment', postingTools)).toBe(true);
    expect(isHubPostingTool('mcp__hub__search', postingTools)).toBe(false);
    expect(isHubPostingTool('mcp__other__create_comment', postingTools)).toBe(false);
  });
});

describe('claude-code stream classification (golden fixtures)', () => {
  it('plain answer: final text, usage and cost marked as an estimate; unknown system subtypes skipped', () => {
    const r = feed(new ClaudeStreamParser({ postingTools }), 'claude-2.1.330-plain.jsonl').finish(exitOf(0));
    expect(r).toMatchObject({ termination: 'final', text: 'Hello from the fake model.', posted: false, steps: 1, usage: { inputTokens: 26, outputTokens: 14, cachedTokens: 0, costUsd: 0.000288, costIsEstimate: true } });
    expect(r.error).toBeUndefined();
  });

  it('API 401: an error that is not retryable, whatever the subtype says', () => {
    const r = feed(new ClaudeStreamParser({ postingTools }), 'claude-2.1.330-401.jsonl').finish(exitOf(1));
    expect(r.termination).toBe('error');
    expect(r.error?.retryable).toBe(false);
    expect(r.error?.message).toMatch(/API error 401 \(authentication_failed\).*Invalid API key/);
  });

  it('max turns: max_steps with no text', () => {
    const r = feed(new ClaudeStreamParser({ postingTools }), 'claude-2.1.330-turns.jsonl').finish(exitOf(1));
    expect(r).toMatchObject({ termination: 'max_steps', text: '', partial: true });
  });

  it('rate_limit_event rejected: retryable, retry time from resetsAt; a non-JSON line is only a diagnostic', () => {
    const p = feed(new ClaudeStreamParser({ postingTools }), 'claude-rate-limit-rejected.jsonl');
    const notes = p.drainNotes().map((n) => n.event);
    expect(notes).toContain('unparsed_line');
    expect(notes).toContain('rate_limit');
    const r = p.finish(exitOf(1));
    expect(r.termination).toBe('error');
    expect(r.error?.retryable).toBe(true);
    expect(r.error?.message).toMatch(/resets at 2100-01-01T00:00:00.000Z/);
    expect(r.error?.retryAfterMs).toBeGreaterThan(0);
  });

  it('no JSON at all is a setup failure read from stderr (e.g. bypass refused as root)', () => {
    const r = new ClaudeStreamParser({ postingTools }).finish(exitOf(1, { stderrTail: '--dangerously-skip-permissions cannot be used with root/sudo privileges' }));
    expect(r).toMatchObject({ termination: 'error', error: { retryable: false } });
    expect(r.error?.message).toMatch(/\(setup failure\): --dangerously-skip-permissions cannot be used with root/);
  });

  it('a successful hub posting tool call means posted; a failed one does not', () => {
    const lines = (isError: boolean): string[] => [
      JSON.stringify({ type: 'assistant', message: { id: 'm1', content: [{ type: 'tool_use', id: 't1', name: 'mcp__hub__create_comment', input: {} }] }, parent_tool_use_id: null }),
      JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', is_error: isError, content: 'ok' }] } }),
      JSON.stringify({ type: 'assistant', message: { id: 'm2', content: [{ type: 'text', text: 'Posted my answer.' }] }, parent_tool_use_id: null }),
      JSON.stringify({ type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', result: 'Posted my answer.', num_turns: 2, usage: {} }),
    ];
    const run = (isError: boolean) => {
      const p = new ClaudeStreamParser({ postingTools });
      for (const l of lines(isError)) p.line(l);
      return p.finish(exitOf(0));
    };
    expect(run(false)).toMatchObject({ posted: true, text: '', termination: 'final' });
    expect(run(true)).toMatchObject({ posted: false, text: 'Posted my answer.', termination: 'final' });
  });

  it('a NO_ACTION result posts nothing', () => {
    const p = new ClaudeStreamParser({ postingTools });
    p.line(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, terminal_reason: 'completed', result: 'NO_ACTION', num_turns: 1, usage: {} }));
    expect(p.finish(exitOf(0))).toMatchObject({ termination: 'no_action', text: '', posted: false });
  });
});

describe('the real claude CLI against the fake Anthropic server', () => {
  let fake: FakeAnthropic;
  let root: string;
  const key = `sk-ant-test-${Math.random().toString(36).slice(2)}`;
  beforeAll(async () => {
    fake = await startFakeAnthropic({ apiKey: key });
    root = await mkdtemp(join(tmpdir(), 'warren-claude-'));
  });
  afterAll(() => fake.close());

  const executor = (keyValue: string) =>
    new CliExecutor({
      adapter: claudeCodeAdapter({ maxRetries: 0 }),
      binary: CLAUDE,
      workspacesRoot: join(root, 'workspaces'),
      secret: (name) => (name === 'CODER_KEY' ? keyValue : undefined),
      parentEnv: { PATH: process.env.PATH, HOME: root, DAEMON_SECRET: 'must-not-leak' },
      slots: new Semaphore(2),
      graceMs: 1_000,
      idleMs: 30_000,
    });
  const def = (maxTurns = 5) => definition({ type: 'claude-code', brain: { provider: 'anthropic', model: 'claude-sonnet-4-5', api_key_env: 'CODER_KEY', api_base: fake.url }, behavior: { max_iterations: maxTurns, max_duration: '60s' } });

  it('plain answer: the final text, with usage and an estimated cost', async () => {
    fake.reset();
    fake.setResponder(() => ({ text: 'Hello from the fake model.', usage: { input_tokens: 40, output_tokens: 8, cache_read_input_tokens: 10 } }));
    const input = activation(def(), { system: 'You are coder, a careful agent.', task: 'Say hello to alice.' });
    const r = await executor(key).run(input);
    expect(r.error).toBeUndefined();
    expect(r).toMatchObject({ termination: 'final', text: 'Hello from the fake model.', posted: false, usage: { inputTokens: 50, outputTokens: 8, cachedTokens: 10, costIsEstimate: true } });
    expect(r.usage.costUsd).toBeGreaterThan(0);
    const req = fake.messageRequests()[0]!;
    expect(req.headers['x-api-key']).toBe(key);
    expect(JSON.stringify(req.body?.messages)).toContain('Say hello to alice.');
    expect(JSON.stringify(req.body?.system)).toContain('You are coder, a careful agent.');
    expect(input.events.events.map((e) => e.type)).toContain('activation_end');
  }, 60_000);

  it('API 401: classified as a non-retryable error', async () => {
    fake.reset();
    fake.setResponder(() => 'unused');
    const r = await executor('sk-wrong').run(activation(def()));
    expect(r.termination).toBe('error');
    expect(r.error).toMatchObject({ retryable: false });
    expect(r.error?.message).toMatch(/401/);
    expect(fake.messageRequests()).toHaveLength(1); // CLAUDE_CODE_MAX_RETRIES=0: fails fast
  }, 60_000);

  it('max turns: a model that keeps calling tools stops as max_steps', async () => {
    fake.reset();
    fake.setResponder(() => ({ tool_uses: [{ name: 'mcp__hub__search', input: { q: 'more' } }] }));
    const r = await executor(key).run(activation(def(1)));
    expect(r.termination).toBe('max_steps');
    expect(r.text).toBe('');
  }, 60_000);
});
