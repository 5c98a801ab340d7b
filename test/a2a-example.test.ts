// The README's A2A example as it is written: examples/a2a-echo-agent.ts started with node, and a warren agent
// delegating to it (a streamed answer; its token required when set).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { EventLog } from '../agent-loop/events.ts';
import { LlmExecutor } from '../executors/llm/llm-executor.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import { PROCESS_START_MS } from './support/ceilings.ts';

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGTERM');
});

/** Starts the example on a free port; resolves with its base URL from its first line. */
function startEcho(env: Record<string, string> = {}): Promise<string> {
  const child = spawn(process.execPath, ['examples/a2a-echo-agent.ts'], { env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the echo agent did not start')), PROCESS_START_MS);
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /A2A echo agent on (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`the echo agent exited with ${code}`)));
  });
}

async function ask(url: string, task: string, auth?: Record<string, string>): Promise<string> {
  const config = AgentConfigSchema.parse({
    name: 'asker',
    type: 'llm',
    brain: { provider: 'scripted', model: 'm', responses: [{ tool_calls: [{ name: 'delegate_to_echo', arguments: { task } }] }, 'ok'] },
    capabilities: { grants: ['a2a:echo'], delegates: [{ name: 'echo', card_url: url, ...(auth ? { auth } : {}) }] },
  });
  const events = new EventLog(`act-${Math.random().toString(36).slice(2)}`);
  await new LlmExecutor({ secret: (n) => (n === 'ECHO_TOKEN' ? 'demo-token' : undefined) }).run({ id: events.activationId, definition: { name: 'asker', config, systemPrompt: 's', files: { config: 'c', prompt: 'p' } }, context: { system: 's', task: 't' }, events, signal: new AbortController().signal });
  const result = events.events.find((e) => e.type === 'tool_result');
  return result?.type === 'tool_result' ? `${result.status}: ${result.excerpt}` : 'no result';
}

describe('examples/a2a-echo-agent.ts', () => {
  it('answers a delegated task; an empty task is refused before it is sent; with ECHO_TOKEN set, wants the token', async () => {
    const open = await startEcho();
    expect(await ask(open, 'hello from warren')).toBe('ok: Echo: hello from warren');
    expect(await ask(open, '   ')).toBe('error: Delegation failed: the task is empty');
    const locked = await startEcho({ ECHO_TOKEN: 'demo-token' });
    expect(await ask(locked, 'let me in', { bearer_env: 'ECHO_TOKEN' })).toBe('ok: Echo: let me in');
    expect(await ask(locked, 'let me in')).toMatch(/^error: Delegation failed: echo refused the call \(HTTP 401\)/);
  });
});

/** The README's delegate snippet ("give an agent of yours …"), as written. */
function readmeCapabilities(): { grants: string[]; delegates: Array<Record<string, unknown>> } {
  const readme = readFileSync('README.md', 'utf8');
  const at = readme.indexOf('and give an agent of yours');
  expect(at).toBeGreaterThan(0);
  const block = /```yaml\n([\s\S]*?)```/.exec(readme.slice(at))![1]!;
  return (parse(block) as { capabilities: { grants: string[]; delegates: Array<Record<string, unknown>> } }).capabilities;
}

describe("the README's A2A worked example", () => {
  it('its delegate snippet is a valid config, and with the echo agent started as the README says, the delegation is answered', async () => {
    const caps = readmeCapabilities();
    expect(caps.grants).toContain('a2a:echo');
    const [echo] = caps.delegates;
    expect(echo).toMatchObject({ name: 'echo', card_url: 'http://127.0.0.1:41241/', auth: { bearer_env: 'ECHO_TOKEN' } });
    // The README's port may be taken on a test machine: the same snippet, pointed at where this echo agent listens.
    const url = await startEcho({ ECHO_TOKEN: 'demo-token' });
    const config = AgentConfigSchema.parse({
      name: 'asker',
      type: 'llm',
      brain: { provider: 'scripted', model: 'm', responses: [{ tool_calls: [{ name: 'delegate_to_echo', arguments: { task: 'hello from the README' } }] }, 'ok'] },
      capabilities: { ...caps, delegates: [{ ...echo, card_url: url }] },
    });
    const events = new EventLog(`act-${Math.random().toString(36).slice(2)}`);
    await new LlmExecutor({ secret: (n) => (n === 'ECHO_TOKEN' ? 'demo-token' : undefined) }).run({ id: events.activationId, definition: { name: 'asker', config, systemPrompt: 's', files: { config: 'c', prompt: 'p' } }, context: { system: 's', task: 't' }, events, signal: new AbortController().signal });
    expect(events.events.find((e) => e.type === 'tool_result')).toMatchObject({ status: 'ok', excerpt: 'Echo: hello from the README' });
  });
});
