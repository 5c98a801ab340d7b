// goose and aider: argument building (pure), classification of golden fixtures in their documented output
// formats, and runs through the CLI executor with fake executables replaying those fixtures. The real
// binaries are not installed here: this is tested against the documented formats, not the real programs.
import { spawnSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CliAdapter, InvocationContext } from '../executors/cli/adapter.ts';
import { aiderAdapter, aiderInvocation, aiderModel, AiderTextParser, parseAiderUsage, parseTokenCount } from '../executors/cli/aider.ts';
import { CliExecutor } from '../executors/cli/cli-executor.ts';
import { Semaphore } from '../executors/cli/concurrency.ts';
import { gooseAdapter, gooseExtensionArgs, gooseInvocation, GooseStreamParser, shellQuote, WITH_ENV_FILE } from '../executors/cli/goose.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { activation, definition, exitOf, FAKE_CLIS, feed } from './support/cli-agent.ts';

const postingTools = ['create_comment', 'create_post'];

function ctx(def: AgentDefinition, extra: Partial<InvocationContext> = {}): InvocationContext {
  return { activationId: 'act-9', definition: def, context: { system: 'SYS', task: 'TASK' }, workspace: '/ws/coder', scratch: '/tmp/s', stateDir: '/st', apiKey: 'sk-agent', mcpServers: [], ...extra };
}

describe('goose arguments', () => {
  it('runs headless from stdin with only warren extensions, named after the activation', () => {
    const def = definition({ type: 'goose', brain: { provider: 'openai', model: 'gpt-4o-mini', api_key_env: 'CODER_KEY' }, behavior: { max_iterations: 12 } });
    const inv = gooseInvocation(ctx(def, { mcpServers: [{ kind: 'stdio', name: 'hub', command: '/usr/bin/node', args: ['warren.js', 'mcp hub'], env: { WARREN_HUB_KEY: 'hub-secret' } }, { kind: 'stdio', name: 'plain', command: 'npx', args: ['-y', 'x'], env: {} }] }));
    expect(inv.args).toEqual([
      'run', '-i', '-', '--quiet', '--output-format', 'stream-json', '--no-profile', '--name', 'act-9', '--max-turns', '12', '--provider', 'openai', '--model', 'gpt-4o-mini',
      '--system', 'SYS',
      '--with-extension', `${process.execPath} ${WITH_ENV_FILE} /tmp/s/mcp-env-hub.json -- /usr/bin/node warren.js 'mcp hub'`,
      '--with-extension', 'npx -y x',
    ]);
    // The server's secret travels in a private file, never in argv.
    expect(inv.args.join(' ')).not.toContain('hub-secret');
    expect(JSON.parse(inv.files['/tmp/s/mcp-env-hub.json'] ?? '{}')).toEqual({ WARREN_HUB_KEY: 'hub-secret' });
    expect(inv.stdin).toBe('TASK');
    expect(inv.env).toMatchObject({ GOOSE_MODE: 'auto', GOOSE_DISABLE_KEYRING: '1', GOOSE_PATH_ROOT: '/st/goose', OPENAI_API_KEY: 'sk-agent' });
  });

  it('moves a system prompt too long for argv into the stdin prompt; quotes extension tokens', () => {
    const def = definition({ type: 'goose' });
    const long = 'x'.repeat(200 * 1024);
    const inv = gooseInvocation(ctx(def, { context: { system: long, task: 'TASK' } }));
    expect(inv.args).not.toContain('--system');
    expect(inv.stdin?.startsWith(long)).toBe(true);
    expect(inv.stdin?.endsWith('TASK')).toBe(true);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(gooseExtensionArgs([{ kind: 'http', name: 'docs', url: 'http://127.0.0.1:1/mcp', headers: {} }], '/s').args).toEqual(['--with-streamable-http-extension', 'http://127.0.0.1:1/mcp']);
  });
});

describe('with-env-file (how goose starts MCP servers with secrets)', () => {
  it('runs the command with the variables of the file, passes stdio through, and returns its exit code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'warren-envfile-'));
    const file = join(dir, 'env.json');
    await writeFile(file, JSON.stringify({ HUB_SECRET: 'from-the-file' }));
    const r = spawnSync(process.execPath, [WITH_ENV_FILE, file, '--', process.execPath, '-e', 'process.stdout.write(process.env.HUB_SECRET ?? "unset"); process.exit(3)'], { encoding: 'utf8' });
    expect(r.stdout).toBe('from-the-file');
    expect(r.status).toBe(3);
    expect(spawnSync(process.execPath, [WITH_ENV_FILE, file], { encoding: 'utf8' }).status).toBe(2);
  });
});

describe('goose stream classification (documented format)', () => {
  it('answer: the last assistant message, tokens from complete, no cost', () => {
    const r = feed(new GooseStreamParser({ postingTools }), 'goose-answer.jsonl').finish(exitOf(0));
    expect(r).toMatchObject({ termination: 'final', text: 'The flaky test is a race in the fixture.', posted: false, steps: 2, usage: { inputTokens: 1000, outputTokens: 234 } });
    expect(r.usage.costUsd).toBeUndefined();
  });

  it('an error followed by complete is a failure (retryable for a 429)', () => {
    const r = feed(new GooseStreamParser({ postingTools }), 'goose-error-then-complete.jsonl').finish(exitOf(0));
    expect(r.termination).toBe('error');
    expect(r.error).toMatchObject({ retryable: true });
    expect(r.error?.message).toMatch(/429 Too Many Requests/);
  });

  it('a successful hub tool call means posted', () => {
    expect(feed(new GooseStreamParser({ postingTools }), 'goose-posted.jsonl').finish(exitOf(0))).toMatchObject({ posted: true, text: '', termination: 'final' });
  });

  it('text before any JSON is a setup failure', () => {
    const p = new GooseStreamParser({ postingTools });
    p.line('Error: No provider configured');
    expect(p.finish(exitOf(1, { stderrTail: 'Run goose configure' }))).toMatchObject({ termination: 'error', error: { retryable: false } });
  });
});

describe('aider arguments', () => {
  it('passes the task and system prompt as files, unattended flags, no auto-commits, history out of the workspace', () => {
    const def = definition({ type: 'aider', brain: { provider: 'openai', model: 'fake-gpt', api_key_env: 'CODER_KEY', api_base: 'http://127.0.0.1:9/v1' } });
    const inv = aiderInvocation(ctx(def));
    expect(inv.args).toEqual([
      '--message-file', '/tmp/s/task.md', '--read', '/tmp/s/system-prompt.md', '--model', 'openai/fake-gpt',
      '--yes-always', '--no-auto-commits', '--no-dirty-commits', '--no-stream', '--no-pretty', '--no-fancy-input', '--no-check-update', '--analytics-disable', '--no-suggest-shell-commands', '--no-gitignore',
      '--env-file', '/tmp/s/aider.env', '--config', '/tmp/s/aider.conf.yml',
      '--chat-history-file', '/st/aider.chat.history.md', '--input-history-file', '/st/aider.input.history',
    ]);
    expect(inv.stdin).toBeUndefined();
    expect(inv.files).toMatchObject({ '/tmp/s/task.md': 'TASK', '/tmp/s/system-prompt.md': 'SYS' });
    expect(inv.env).toMatchObject({ OPENAI_API_KEY: 'sk-agent', AIDER_OPENAI_API_BASE: 'http://127.0.0.1:9/v1' });
    expect(inv.args.join(' ')).not.toContain('sk-agent');
  });

  it('names models the litellm way', () => {
    expect(aiderModel({ provider: 'deepseek', model: 'deepseek-chat' })).toBe('deepseek/deepseek-chat');
    expect(aiderModel({ provider: 'ollama', model: 'llama3' })).toBe('ollama_chat/llama3');
    expect(aiderModel({ provider: 'anthropic', model: 'claude-sonnet-4-5' })).toBe('claude-sonnet-4-5');
    expect(aiderModel({ provider: 'openai', model: 'openrouter/x' })).toBe('openrouter/x');
  });
});

describe('aider output classification (documented format)', () => {
  it('parses token counts with k and M abbreviations, and the cost', () => {
    expect(parseTokenCount('2.3k')).toBe(2300);
    expect(parseTokenCount('1.2M')).toBe(1_200_000);
    expect(parseTokenCount('150')).toBe(150);
    expect(parseAiderUsage('Tokens: 2.3k sent, 1.1k cache hit, 150 received. Cost: $0.01 message, $0.05 session.')).toEqual({ sent: 2300, received: 150, cacheHit: 1100, costUsd: 0.01 });
    expect(parseAiderUsage('Tokens: 12 sent, 3 received.')).toEqual({ sent: 12, received: 3, cacheHit: 0 });
    expect(parseAiderUsage('Some text about Tokens: in the answer')).toBeUndefined();
  });

  it('answer: the model text without aider banners, usage from the Tokens line', () => {
    const r = feed(new AiderTextParser(), 'aider-answer.txt').finish(exitOf(0));
    expect(r).toMatchObject({
      termination: 'final',
      posted: false,
      text: 'The flaky test fails because two workers share one temp folder.\nGive each worker its own folder and the race is gone.',
      usage: { inputTokens: 2300, outputTokens: 150, cachedTokens: 1100, costUsd: 0.01, costIsEstimate: true },
    });
  });

  it('exit 0 with a model error is a failure (authentication: not retryable)', () => {
    const r = feed(new AiderTextParser(), 'aider-model-error.txt').finish(exitOf(0));
    expect(r.termination).toBe('error');
    expect(r.error).toMatchObject({ retryable: false });
    expect(r.error?.message).toMatch(/AuthenticationError/);
  });

  it('an error followed by a usage line was retried successfully', () => {
    const r = feed(new AiderTextParser(), 'aider-retry-then-answer.txt').finish(exitOf(0));
    expect(r).toMatchObject({ termination: 'final', text: 'Fixed after one retry.', usage: { inputTokens: 12_000, outputTokens: 1_200_000, costUsd: 1.5 } });
  });
});

describe('goose and aider through the CLI executor (fake executables)', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'warren-fakecli-'));
  });
  const run = (adapter: CliAdapter, binary: string, def: AgentDefinition, task: string) =>
    new CliExecutor({
      adapter,
      binary: join(FAKE_CLIS, binary),
      workspacesRoot: join(root, 'workspaces'),
      secret: (n) => (n === 'CODER_KEY' ? 'sk-agent' : undefined),
      parentEnv: { PATH: process.env.PATH },
      slots: new Semaphore(1),
      graceMs: 500,
    }).run(activation(def, { task }));

  const goose = definition({ type: 'goose', brain: { provider: 'openai', model: 'gpt-4o-mini', api_key_env: 'CODER_KEY' } });
  const aider = definition({ type: 'aider', brain: { provider: 'openai', model: 'fake-gpt', api_key_env: 'CODER_KEY' } });

  it('goose: answer, error-then-complete, posted, setup failure', async () => {
    expect(await run(gooseAdapter(), 'goose.js', goose, 'scenario:answer')).toMatchObject({ termination: 'final', text: 'The flaky test is a race in the fixture.' });
    expect(await run(gooseAdapter(), 'goose.js', goose, 'scenario:error-then-complete')).toMatchObject({ termination: 'error', error: { retryable: true } });
    expect(await run(gooseAdapter(), 'goose.js', goose, 'scenario:posted')).toMatchObject({ posted: true, text: '' });
    const setup = await run(gooseAdapter(), 'goose.js', goose, 'scenario:setup');
    expect(setup).toMatchObject({ termination: 'error', error: { retryable: false } });
    expect(setup.error?.message).toMatch(/No provider configured/);
  });

  it('aider: answer, exit-0-with-model-error, startup error', async () => {
    expect(await run(aiderAdapter(), 'aider.js', aider, 'scenario:answer')).toMatchObject({ termination: 'final', text: expect.stringMatching(/^The flaky test fails/) as unknown });
    expect(await run(aiderAdapter(), 'aider.js', aider, 'scenario:model-error')).toMatchObject({ termination: 'error', error: { retryable: false } });
    const startup = await run(aiderAdapter(), 'aider.js', aider, 'scenario:startup');
    expect(startup).toMatchObject({ termination: 'error', error: { retryable: false } });
    expect(startup.error?.message).toMatch(/unrecognized arguments/);
  });

  it('a CLI that outlives behavior.max_duration is killed and reported as a deadline failure; a cancel is an abort', async () => {
    const slow = definition({ type: 'goose', brain: { provider: 'openai', model: 'gpt-4o-mini', api_key_env: 'CODER_KEY' }, behavior: { max_duration: '1s' } });
    const started = Date.now();
    const r = await run(gooseAdapter(), 'silent.js', slow, 'anything');
    expect(Date.now() - started).toBeLessThan(1_000 + 500 + 1_000);
    expect(r).toMatchObject({ termination: 'error', error: { retryable: true, message: expect.stringMatching(/killed at the activation deadline/) as unknown } });
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('shutdown')), 300);
    const aborted = await new CliExecutor({ adapter: gooseAdapter(), binary: join(FAKE_CLIS, 'silent.js'), workspacesRoot: join(root, 'workspaces'), secret: () => 'k', parentEnv: { PATH: process.env.PATH }, slots: new Semaphore(1), graceMs: 200 }).run(activation(goose, { signal: ac.signal }));
    expect(aborted).toMatchObject({ termination: 'aborted', error: { message: 'aborted: Error: shutdown' } });
  });

  it('a missing CLI makes the agent unavailable with a clear reason', () => {
    const ex = new CliExecutor({ adapter: gooseAdapter(), workspacesRoot: root, secret: () => 'k', parentEnv: { PATH: '/nonexistent' }, slots: new Semaphore(1) });
    expect(ex.missingRequirement(goose)).toBe('the goose CLI (goose) is not installed here: not found on PATH or in node_modules/.bin');
  });
});
