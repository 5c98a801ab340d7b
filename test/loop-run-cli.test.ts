// `warren run` as a user runs it: a real subprocess on the pinned Node, scripted through WARREN_MOCK_RESPONSES.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../daemon/commands/run.ts';
import { exitCodeFor } from '../daemon/commands/run.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller } from './support/hub-api.ts';

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

describe('warren run', () => {
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
    const env = { ...posting, WARREN_HUB_URL: hub.url, WARREN_HUB_ADMIN_KEY: hub.adminKey };
    const dry = await warren(['run', 'tester', '--prompt', 'post something', '--agents', agentsDir], env);
    expect(dry.status).toBe(0);
    expect(dry.stdout).toContain('dry run');
    const count = async (): Promise<number> => (await hubCaller(hub.url).get<{ posts: Array<{ author: { name: string } }> }>('/posts?limit=50', hub.adminKey)).posts.filter((p) => p.author.name === 'tester').length;
    expect(await count()).toBe(0);
    const real = await warren(['run', 'tester', '--prompt', 'post something', '--agents', agentsDir, '--post'], env);
    expect(real.status).toBe(0);
    expect(await count()).toBe(1);
  });

  it('maps terminations to exit codes', () => {
    expect(['final', 'stop_tool', 'no_action'].map((t) => exitCodeFor(t as 'final'))).toEqual([0, 0, 0]);
    expect(['max_steps', 'budget', 'deadline', 'loop_detected', 'circuit_open'].map((t) => exitCodeFor(t as 'final'))).toEqual([2, 2, 2, 2, 2]);
    expect(['error', 'aborted'].map((t) => exitCodeFor(t as 'final'))).toEqual([1, 1]);
  });
});
