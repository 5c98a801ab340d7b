// The life of an MCP connection as the llm executor runs it: calls bounded by executors.llm.tool_timeout, stdio
// servers killed as a whole process group (wrappers such as `npx` or `bash -c` included), HTTP sessions ended.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLog, type ActivationEvent } from '../agent-loop/events.ts';
import { connectMcpServers, type McpServerConfig } from '../agent-loop/mcp-tools.ts';
import { LlmExecutor } from '../executors/llm/llm-executor.ts';
import { AgentConfigSchema, type ScriptedReply } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { startFakeMcpHttp, type FakeMcpHttp } from './fakes/mcp-server.ts';

let http: FakeMcpHttp;
beforeAll(async () => {
  http = await startFakeMcpHttp();
});
afterAll(() => http.close());

const secret = (): undefined => undefined;
const sleep = (ms: number): Promise<void> => new Promise((res) => setTimeout(res, ms));
const tmp = (): string => mkdtempSync(join(tmpdir(), 'mcp-lifecycle-'));

function agent(servers: McpServerConfig[], responses: ScriptedReply[]): AgentDefinition {
  const name = 'mcp-agent';
  const grants = servers.map((s) => `mcp:${typeof s === 'string' ? s : s.name}`);
  const config = AgentConfigSchema.parse({ name, type: 'llm', brain: { provider: 'scripted', model: 'scripted-mcp', responses }, capabilities: { grants, mcp_servers: servers } });
  return { name, config, systemPrompt: `You are ${name}.`, files: { config: 'c', prompt: 'p' } };
}

/** The fake server behind a shell that waits for it (`; exit $?` keeps bash from exec-ing it): a grandchild. */
function wrapped(pidFile: string, env: Record<string, string> = {}): McpServerConfig {
  return { name: 'wrapped', command: 'bash', args: ['-c', `"${process.execPath}" test/fakes/mcp-server.ts; exit $?`], env: { FAKE_MCP_PID_FILE: pidFile, ...env } };
}

/** Alive and not a zombie (an exited process nobody reaped yet still answers kill 0). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!existsSync('/proc/self/stat')) return true;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function pidIn(file: string): Promise<number> {
  const deadline = Date.now() + 5000;
  while (!existsSync(file) && Date.now() < deadline) await sleep(20);
  return Number(readFileSync(file, 'utf8'));
}

/** Waits up to `ms` for the process to be gone; true when it is. */
async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (running(pid) && Date.now() < deadline) await sleep(20);
  return !running(pid);
}

describe('executors.llm.tool_timeout', () => {
  it('bounds an MCP tool call: a 5 s call under a 300 ms tool_timeout is timed out at about 300 ms', async () => {
    const def = agent([{ name: 'local', command: process.execPath, args: ['test/fakes/mcp-server.ts'], env: {} }], [{ tool_calls: [{ name: 'local__slow', arguments: { ms: 5000 } }] }, 'done']);
    let called = 0;
    let answered = 0;
    const events = new EventLog('act_timeout', {
      listener: (e) => {
        if (e.type === 'tool_call') called = Date.now();
        if (e.type === 'tool_result') answered = Date.now();
      },
    });
    const r = await new LlmExecutor({ secret, toolTimeoutMs: 300 }).run({ id: 'act_timeout', definition: def, context: { system: 's', task: 't' }, events, signal: new AbortController().signal });
    expect(r.termination).toBe('final');
    const results = events.events.filter((e): e is Extract<ActivationEvent, { type: 'tool_result' }> => e.type === 'tool_result');
    expect(results.map((e) => [e.name, e.status])).toEqual([['local__slow', 'timed_out']]);
    expect(answered - called).toBeGreaterThanOrEqual(250);
    expect(answered - called).toBeLessThan(1500);
  });
});

describe('stdio MCP servers are killed as a process group', () => {
  it('abort during a call to a server behind `bash -c`: its grandchild is gone within 2 s, though it ignores the cancellation', async () => {
    const pidFile = join(tmp(), 'server.pid');
    const def = agent([wrapped(pidFile)], [{ tool_calls: [{ name: 'wrapped__slow', arguments: { ms: 15_000, ignore_cancel: true } }] }, 'done']);
    const ac = new AbortController();
    const events = new EventLog('act_abort', { listener: (e) => void (e.type === 'tool_call' && setTimeout(() => ac.abort(), 100)) });
    let abortedAt = 0;
    ac.signal.addEventListener('abort', () => (abortedAt = Date.now()));
    const r = await new LlmExecutor({ secret }).run({ id: 'act_abort', definition: def, context: { system: 's', task: 't' }, events, signal: ac.signal });
    expect(r.termination).toBe('aborted');
    const pid = await pidIn(pidFile);
    expect(pid).toBeGreaterThan(0);
    expect(await goneWithin(pid, Math.max(0, abortedAt + 2000 - Date.now()))).toBe(true);
  });

  it('close kills a busy server that ignores SIGTERM, after the grace period', async () => {
    const pidFile = join(tmp(), 'server.pid');
    const set = await connectMcpServers([wrapped(pidFile, { FAKE_MCP_IGNORE_SIGTERM: '1' })], { grants: ['mcp:wrapped'], secret, killGraceMs: 300 });
    expect(set.skipped).toEqual([]);
    const pid = await pidIn(pidFile);
    const slow = set.tools.find((t) => t.definition.name === 'wrapped__slow')!;
    const call = slow.execute({ ms: 15_000, ignore_cancel: true }, { signal: new AbortController().signal, callId: 'c', idempotencyKey: 'k', step: 1 }).catch((err: unknown) => err);
    await sleep(200); // the call has reached the server
    const started = Date.now();
    await set.close();
    expect(await goneWithin(pid, 1000)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(2000);
    await call;
  });

  it('close still ends the group after its leader died on its own (a helper it left behind is killed)', async () => {
    const dir = tmp();
    const [helperFile, serverFile] = [join(dir, 'helper.pid'), join(dir, 'server.pid')];
    // The helper lets go of stdout, so the leader's death alone closes the connection.
    const script = `sleep 30 >/dev/null & echo $! > "${helperFile}"; exec "${process.execPath}" test/fakes/mcp-server.ts`;
    const set = await connectMcpServers([{ name: 'crashy', command: 'bash', args: ['-c', script], env: { FAKE_MCP_PID_FILE: serverFile } }], { grants: ['mcp:crashy'], secret });
    expect(set.skipped).toEqual([]);
    const [helper, server] = [await pidIn(helperFile), await pidIn(serverFile)];
    process.kill(server, 'SIGKILL');
    expect(await goneWithin(server, 2000)).toBe(true);
    await sleep(100); // the connection has seen its end
    expect(running(helper)).toBe(true);
    await set.close();
    expect(await goneWithin(helper, 1000)).toBe(true);
  });
});

describe('MCP cancellation and crashes (issue 28 item 6)', () => {
  it('an abort cancels the call in flight only: never initialize (id 0), tools/list, or a call already answered', async () => {
    const log = join(tmp(), 'messages.jsonl');
    // It outlives SIGTERM (until the SIGKILL after the grace period), so it reads everything the client sent before.
    const server: McpServerConfig = { name: 'plain', command: process.execPath, args: ['test/fakes/mcp-server.ts'], env: { FAKE_MCP_MESSAGE_LOG: log, FAKE_MCP_IGNORE_SIGTERM: '1' } };
    const def = agent([server], [{ tool_calls: [{ name: 'plain__lookup', arguments: { q: 'x' } }] }, { tool_calls: [{ name: 'plain__slow', arguments: { ms: 15_000 } }] }, 'done']);
    const ac = new AbortController();
    const events = new EventLog('act_cancel', { listener: (e) => void (e.type === 'tool_call' && e.name === 'plain__slow' && setTimeout(() => ac.abort(), 200)) });
    const r = await new LlmExecutor({ secret }).run({ id: 'act_cancel', definition: def, context: { system: 's', task: 't' }, events, signal: ac.signal });
    expect(r.termination).toBe('aborted');
    const messages = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id?: number; method: string; params?: { name?: string; requestId?: number } });
    const slow = messages.find((m) => m.method === 'tools/call' && m.params?.name === 'slow')!;
    const cancelled = messages.filter((m) => m.method === 'notifications/cancelled').map((m) => m.params?.requestId);
    expect(cancelled).toEqual([slow.id]);
    expect(messages.find((m) => m.method === 'initialize')?.id).toBe(0);
  });

  it('a server that crashes mid-call behind a helper holding its stdout fails the call at once, not at tool_timeout', async () => {
    const dir = tmp();
    const [helperFile, serverFile] = [join(dir, 'helper.pid'), join(dir, 'server.pid')];
    // The helper keeps stdout open: the connection's end is the leader's exit, not the pipe's.
    const script = `sleep 60 & echo $! > "${helperFile}"; exec "${process.execPath}" test/fakes/mcp-server.ts`;
    const set = await connectMcpServers([{ name: 'crashy', command: 'bash', args: ['-c', script], env: { FAKE_MCP_PID_FILE: serverFile } }], { grants: ['mcp:crashy'], secret, callTimeoutMs: 60_000 });
    expect(set.skipped).toEqual([]);
    const [helper, server] = [await pidIn(helperFile), await pidIn(serverFile)];
    const slow = set.tools.find((t) => t.definition.name === 'crashy__slow')!;
    const started = Date.now();
    const call = slow.execute({ ms: 30_000 }, { signal: new AbortController().signal, callId: 'c', idempotencyKey: 'k', step: 1 }).then(
      () => 'answered',
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    await sleep(200); // the call has reached the server
    process.kill(server, 'SIGKILL');
    expect(await call).toMatch(/closed/i);
    expect(Date.now() - started).toBeLessThan(10_000);
    await set.close();
    expect(await goneWithin(helper, 3000)).toBe(true);
  });
});

describe('starting stdio MCP servers', () => {
  it('an abort while a server hangs at startup ends the wait at once and kills what it started', async () => {
    const pidFile = join(tmp(), 'child.pid');
    const hangs: McpServerConfig = { name: 'hangs', command: 'bash', args: ['-c', `sleep 30 & echo $! > "${pidFile}"; wait`], env: {} };
    const ac = new AbortController();
    const connecting = connectMcpServers([hangs], { grants: ['mcp:hangs'], secret, signal: ac.signal });
    const pid = await pidIn(pidFile); // the server is up and will never answer initialize
    const abortedAt = Date.now();
    ac.abort();
    const set = await connecting;
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(set.tools).toEqual([]);
    expect(set.skipped.map((s) => s.server)).toEqual(['hangs']);
    expect(await goneWithin(pid, 500)).toBe(true);
  });
});

describe('HTTP MCP sessions', () => {
  it('close ends the session with a DELETE carrying its Mcp-Session-Id', async () => {
    const before = http.state.sessions.length;
    const set = await connectMcpServers([{ name: 'docs', url: http.url, headers: {} }], { grants: ['mcp:docs'], secret });
    expect(set.skipped).toEqual([]);
    const session = http.state.sessions.slice(before);
    expect(session).toHaveLength(1);
    await set.close();
    expect(http.state.deleted).toEqual(session);
  });

  it('a server that never answers the DELETE does not hold close up for more than about 2 s', async () => {
    const stuck = await startFakeMcpHttp({ hangOnDelete: true });
    try {
      const set = await connectMcpServers([{ name: 'stuck', url: stuck.url, headers: {} }], { grants: ['mcp:stuck'], secret });
      expect(set.skipped).toEqual([]);
      const started = Date.now();
      await set.close();
      expect(Date.now() - started).toBeLessThan(3000);
      expect(stuck.state.deleted).toEqual(stuck.state.sessions);
    } finally {
      await stuck.close();
    }
  });
});
