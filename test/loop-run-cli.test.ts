// `warren run` as a user runs it: a real subprocess on the pinned Node, scripted through WARREN_MOCK_RESPONSES.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunRecord } from '../daemon/commands/run.ts';
import { exitCodeFor } from '../daemon/commands/run.ts';
import type { ExecutorResult } from '../executors/executor.ts';
import { outcomeOfRun } from '../executors/run-outcome.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller } from './support/hub-api.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const WARREN = resolve('bin/warren.js');
let hub: RunningHub;
beforeAll(async () => {
  hub = await startHub({ dbPath: ':memory:', port: 0 });
  await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name: 'tester' });
});
afterAll(() => hub.close());

const agentsDir = makeAgentsDir(
  {
    tester: {
      config: 'name: tester\ntype: llm\nbrain:\n  provider: scripted\n  model: scripted-tester\n  responses: ["canned answer"]\ncapabilities:\n  grants: [hub:read, hub:write]\nbehavior:\n  max_iterations: 3\n',
      prompt: 'You are {{name}}.',
    },
  },
  { withGreeter: false },
);

function warren(args: string[], env: Record<string, string | undefined> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [WARREN, ...args], { env: { ...process.env, WARREN_HUB_ADMIN_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

const mock = (...items: unknown[]): { WARREN_MOCK_RESPONSES: string } => ({ WARREN_MOCK_RESPONSES: JSON.stringify(items) });

describe('warren run', { timeout: PROCESS_TEST_MS }, () => {
  it('answers from the canned replies, one progress line per step and tool call, exit 0', async () => {
    const r = await warren(['run', 'tester', '--prompt', 'hi', '--agents', agentsDir], mock({ tool_calls: [{ name: 'task_complete', arguments: { result: 'x' } }], content: null }));
    expect(r.status).toBe(0);
    expect(r.stdout.split('\n').filter((l) => /^step |^ {2}[→←]/.test(l))).toEqual(['step 1/3', '  → task_complete {"result":"x"}', '  ← task_complete: ok Task marked complete.']);
    const plain = await warren(['run', 'tester', '--prompt', 'hi', '--agents', agentsDir]);
    expect(plain.status).toBe(0);
    expect(plain.stdout).toContain('canned answer');
  });

  it('--json prints the activation record', async () => {
    const r = await warren(['run', 'tester', '--prompt', 'hi', '--agents', agentsDir, '--json'], mock({ content: 'the answer', usage: { prompt_tokens: 12, completion_tokens: 3 } }));
    expect(r.status).toBe(0);
    const rec = JSON.parse(r.stdout) as RunRecord;
    expect(rec).toMatchObject({ agent: 'tester', termination: 'final', partial: false, text: 'the answer', steps: 1, usage: { input_tokens: 12, output_tokens: 3 } });
    expect(rec.activation_id).toMatch(/^run_/);
    expect(rec.usage.cost_usd).toBeGreaterThan(0);
    expect(rec.events.map((e) => e.type)).toEqual(['activation_start', 'user_message', 'step_start', 'model_call', 'model_result', 'budget_update', 'agent_response', 'activation_end']);
    expect(rec.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(rec.events.every((e) => e.activation_id === rec.activation_id)).toBe(true);
  });

  it('exit 2 when a limit or guard stops the run, 1 on an error', async () => {
    // With a hub, three identical searches run into the step limit (the 3rd gets a nudge). Without one,
    // hub_search is not offered: three identical calls to a tool that does not exist are a guard stop.
    const same = { tool_calls: [{ name: 'hub_search', arguments: { query: 'x' } }] };
    const limited = await warren(['run', 'tester', '--prompt', 'hi', '--agents', agentsDir, '--json'], { ...mock(same, same, same, 'wrap-up'), WARREN_HUB_URL: hub.url, WARREN_HUB_ADMIN_KEY: hub.adminKey });
    expect(limited.status).toBe(2);
    expect((JSON.parse(limited.stdout) as RunRecord).termination).toBe('max_steps');
    const looped = await warren(['run', 'tester', '--prompt', 'hi', '--agents', agentsDir, '--json'], mock(same, same, same, 'wrap-up'));
    expect(looped.status).toBe(2);
    expect((JSON.parse(looped.stdout) as RunRecord).termination).toBe('loop_detected');
    const broken = await warren(['run', 'tester', '--prompt', 'hi', '--agents', agentsDir], mock({ error: { status: 401 } }));
    expect(broken.status).toBe(1);
    const unknown = await warren(['run', 'nobody', '--prompt', 'hi', '--agents', agentsDir]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('no valid agent named nobody');
  });

  it('writes to the hub only with --post', async () => {
    const posting = mock({ tool_calls: [{ name: 'hub_post', arguments: { content: 'hello from run', community: 'm/general' } }] }, 'posted');
    // With the hub come today's counters from the daemon's Redis (the test's private one).
    const env = { ...posting, WARREN_HUB_URL: hub.url, WARREN_HUB_ADMIN_KEY: hub.adminKey, REDIS_URL: inject('redisUrl') };
    const dry = await warren(['run', 'tester', '--prompt', 'post something', '--agents', agentsDir], env);
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain('dry run');
    const count = async (): Promise<number> => (await hubCaller(hub.url).get<{ posts: Array<{ author: { name: string } }> }>('/posts?limit=50', hub.adminKey)).posts.filter((p) => p.author.name === 'tester').length;
    expect(await count()).toBe(0);
    const real = await warren(['run', 'tester', '--prompt', 'post something', '--agents', agentsDir, '--post'], env);
    expect(real.status).toBe(0);
    expect(await count()).toBe(1);
  });

  it('with --post, four identical hub_post calls in one reply make one post; the others are duplicates (issue 28 item 1)', async () => {
    // An agent of its own: the hub's post cooldown would refuse a second post by tester.
    await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name: 'poster' });
    const posterDir = makeAgentsDir({ poster: { config: 'name: poster\ntype: llm\nbrain: {provider: scripted, model: m, responses: [x]}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {can_create_posts: true}\n', prompt: 'x' } }, { withGreeter: false });
    const call = { name: 'hub_post', arguments: { content: 'said once', community: 'm/general' } };
    const env = { ...mock({ tool_calls: [call, call, call, call] }, 'posted'), WARREN_HUB_URL: hub.url, WARREN_HUB_ADMIN_KEY: hub.adminKey, REDIS_URL: inject('redisUrl') };
    const r = await warren(['run', 'poster', '--prompt', 'post something', '--agents', posterDir, '--post', '--json'], env);
    expect(r.status).toBe(0);
    const results = (JSON.parse(r.stdout) as RunRecord).events.flatMap((e) => (e.type === 'tool_result' ? [e.status] : []));
    expect(results).toEqual(['ok', 'rejected', 'rejected', 'rejected']);
    const posts = (await hubCaller(hub.url).get<{ posts: Array<{ content: string }> }>('/posts?limit=50', hub.adminKey)).posts;
    expect(posts.filter((p) => p.content === 'said once')).toHaveLength(1);
  });

  it('--post is held to the agent\'s write limits in the daemon\'s Redis, and refuses to run without them', async () => {
    const posting = mock({ tool_calls: [{ name: 'hub_post', arguments: { content: 'over my limit', community: 'm/general' } }] }, 'tried');
    const env = { ...posting, WARREN_HUB_URL: hub.url, WARREN_HUB_ADMIN_KEY: hub.adminKey, REDIS_URL: inject('redisUrl') };
    const count = async (): Promise<number> => (await hubCaller(hub.url).get<{ posts: Array<{ author: { name: string } }> }>('/posts?limit=50', hub.adminKey)).posts.filter((p) => p.author.name === 'limited').length;
    const limited = makeAgentsDir({ limited: { config: 'name: limited\ntype: llm\nbrain: {provider: scripted, model: m, responses: [x]}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {can_create_posts: true, limits: {max_daily_posts: 0}}\n', prompt: 'x' } }, { withGreeter: false });
    const refused = await warren(['run', 'limited', '--prompt', 'post something', '--agents', limited, '--post', '--json'], env);
    expect(refused.status).toBe(0);
    expect(refused.stdout).toContain('max_daily_posts');
    expect(await count()).toBe(0);
    const noRedis = await warren(['run', 'limited', '--prompt', 'post something', '--agents', limited, '--post'], { ...env, REDIS_URL: 'redis://127.0.0.1:1' });
    expect(noRedis.status).toBe(1);
    expect(noRedis.stderr).toMatch(/--post counts the agent's writes against its limits in Redis/);
  });

  it('WARREN_MOCK_RESPONSES overrides any LLM agent\'s model, announced loudly; without it the real agent needs its key (issue 28 item 5)', async () => {
    const openai = await startFakeOpenAI({ defaultReply: 'the real model answered' });
    try {
      const real = makeAgentsDir({ realist: { config: `name: realist\ntype: llm\nbrain:\n  provider: openai\n  model: gpt-4o-mini\n  api_base: ${openai.url}\n  api_key_env: REALIST_TEST_KEY\ncapabilities:\n  grants: [hub:read]\n`, prompt: 'You are {{name}}.' } }, { withGreeter: false });
      const dry = await warren(['run', 'realist', '--prompt', 'hi', '--agents', real, '--json'], { ...mock('a canned dry-run answer'), REALIST_TEST_KEY: undefined });
      expect(dry.status).toBe(0);
      expect((JSON.parse(dry.stdout) as RunRecord).text).toBe('a canned dry-run answer');
      expect(dry.stderr).toContain('WARREN_MOCK_RESPONSES is set: every LLM agent answers from these canned replies');
      expect(openai.requests).toHaveLength(0);
      const keyless = await warren(['run', 'realist', '--prompt', 'hi', '--agents', real], { REALIST_TEST_KEY: undefined });
      expect(keyless.status).toBe(1);
      expect(keyless.stderr).toContain('REALIST_TEST_KEY');
      const live = await warren(['run', 'realist', '--prompt', 'hi', '--agents', real, '--json'], { REALIST_TEST_KEY: 'sk-realist' });
      expect((JSON.parse(live.stdout) as RunRecord).text).toBe('the real model answered');
      expect(openai.requests.length).toBeGreaterThan(0);
    } finally {
      await openai.close();
    }
  });

  it("a delegate's own steps are in the run's record, nested under the delegation (issue 28 item 4)", async () => {
    const team = makeAgentsDir({
      boss: { config: 'name: boss\ntype: llm\nbrain:\n  provider: scripted\n  model: s\n  responses: [{tool_calls: [{name: delegate_to_helper, arguments: {task: check the budget}}]}, "helper says ok"]\ncapabilities:\n  grants: [hub:read]\n  delegates: [helper]\n', prompt: 'You are {{name}}.' },
      helper: { config: 'name: helper\ntype: llm\nbrain:\n  provider: scripted\n  model: s\n  responses: [{tool_calls: [{name: budget_check, arguments: {}}]}, "ok"]\ncapabilities:\n  grants: [hub:read]\n', prompt: 'You are {{name}}.' },
    }, { withGreeter: false });
    const r = await warren(['run', 'boss', '--prompt', 'hi', '--agents', team, '--json']);
    expect(r.status).toBe(0);
    const response = (JSON.parse(r.stdout) as RunRecord).events.find((e) => e.type === 'delegation_response');
    expect(response).toMatchObject({ agent: 'helper', excerpt: 'ok' });
    const nested = response?.type === 'delegation_response' ? (response.events ?? []) : [];
    expect(nested.map((e) => e.type)).toEqual(expect.arrayContaining(['step_start', 'tool_call', 'tool_result', 'agent_response']));
    expect(nested.find((e) => e.type === 'tool_call')).toMatchObject({ name: 'budget_check' });
  });

  it('maps outcomes to exit codes', () => {
    const run = (r: Partial<ExecutorResult> & Pick<ExecutorResult, 'termination'>): number => exitCodeFor(outcomeOfRun({ text: '', posted: false, partial: false, steps: 1, usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0 }, ...r }));
    expect([run({ termination: 'final', text: 'hi' }), run({ termination: 'stop_tool', text: 'done' }), run({ termination: 'no_action' })]).toEqual([0, 0, 0]);
    expect([run({ termination: 'max_steps', text: 'partial' }), run({ termination: 'budget' }), run({ termination: 'deadline' }), run({ termination: 'loop_detected' }), run({ termination: 'circuit_open' })]).toEqual([2, 2, 2, 2, 2]);
    expect([run({ termination: 'error', error: { message: 'x', retryable: false } }), run({ termination: 'aborted' })]).toEqual([1, 1]);
  });
});

describe('warren run of a CLI agent', () => {
  let openai: FakeOpenAI;
  beforeAll(async () => {
    openai = await startFakeOpenAI({ defaultReply: 'the in-process loop answered' });
  });
  afterAll(() => openai.close());

  /** A warren.yaml of its own: the example agents, workspaces in a temporary folder, maybe a claude binary name. */
  function setup(claudeBinary?: string): { config: string; path: string } {
    const dir = mkdtempSync(join(tmpdir(), 'warren-run-cli-'));
    chmodSync(dir, 0o755); // run as root, warren run starts CLI agents as their own user, who must reach this folder
    const bin = join(dir, 'bin');
    writeFileSync(join(dir, 'warren.yaml'), `store: {path: ${resolve('examples')}}\nexecutors:\n  cli:\n    workspaces: ${join(dir, 'ws')}\n${claudeBinary ? `    binaries: {claude-code: ${claudeBinary}}\n` : ''}`);
    mkdirSync(bin);
    symlinkSync(resolve('test/fakes/cli/claude-answer.js'), join(bin, 'claude'));
    // The fake's `#!/usr/bin/env node` needs node on PATH; nothing else is.
    return { config: join(dir, 'warren.yaml'), path: [bin, dirname(process.execPath), '/usr/bin', '/bin'].join(':') };
  }
  const env = (path: string): Record<string, string> => ({ PATH: path, ANTHROPIC_API_KEY: 'sk-ant-run-test', OPENAI_API_KEY: 'sk-openai-run-test', OPENAI_BASE_URL: openai.url, HOME: tmpdir() });

  it('runs the claude binary on PATH with the daemon\'s context, never the OpenAI endpoint', async () => {
    openai.reset();
    const { config, path } = setup();
    const r = await warren(['run', 'claude-code-example', '--prompt', 'hi', '--config', config, '--json'], env(path));
    expect(r.status, r.stderr).toBe(0);
    const rec = JSON.parse(r.stdout) as RunRecord;
    const seen = JSON.parse(rec.text) as { task: string; system: string; mcp_servers: string[] };
    expect(seen.task).toBe('hi');
    // Built as the daemon builds it: the prompt, then the skills the grants allow.
    expect(seen.system).toContain('Claude Code Example');
    expect(seen.system).toContain('## Available Skills');
    // No --post: no hub server, so nothing can be written.
    expect(seen.mcp_servers).toEqual([]);
    expect(rec.events.some((e) => e.type === 'cli_event')).toBe(true);
    expect(openai.requests).toHaveLength(0);
  });

  it('against the configured hub: the budget and what is left today in its context, and with --post a hub MCP server', async () => {
    openai.reset();
    await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name: 'claude-code-example' }).catch(() => undefined);
    const { config, path } = setup();
    // The suite's Redis takes no password: a CLI agent runs beside it with --post only by the opt-out.
    const withHub = { ...env(path), WARREN_HUB_URL: hub.url, WARREN_HUB_ADMIN_KEY: hub.adminKey, REDIS_URL: inject('redisUrl'), WARREN_ALLOW_OPEN_REDIS: '1' };
    const r = await warren(['run', 'claude-code-example', '--prompt', 'hi', '--config', config, '--json', '--post'], withHub);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/unavailable/);
    const seen = JSON.parse((JSON.parse(r.stdout) as RunRecord).text) as { system: string; mcp_servers: string[] };
    expect(seen.system).toContain('## System Resource Status');
    expect(seen.system).toMatch(/Left today:\*\* \d+ posts?, \d+ comments?/);
    expect(seen.mcp_servers).toEqual(['hub']);
    expect(openai.requests).toHaveLength(0);
  });

  it('with no claude installed it says so and exits 1, and still never calls the OpenAI endpoint', async () => {
    openai.reset();
    // The pinned claude in node_modules/.bin is always looked for too, so this names a CLI that is nowhere.
    const { config, path } = setup('claude-not-installed');
    const r = await warren(['run', 'claude-code-example', '--prompt', 'hi', '--config', config], env(path));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/claude-code-example cannot run: the claude-code CLI \(claude-not-installed\) is not installed here/);
    expect(openai.requests).toHaveLength(0);
  });
});
