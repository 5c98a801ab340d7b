// MCP tools (docs/agent-loop.md R14, R10, R5) against the test MCP server over stdio and streamable HTTP.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noActionTool, taskCompleteTool } from '../agent-loop/builtin-tools.ts';
import { runLoop } from '../agent-loop/loop.ts';
import { connectMcpServers, mapCallResult, type McpServerConfig } from '../agent-loop/mcp-tools.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { startFakeMcpHttp, type FakeMcpHttp } from './fakes/mcp-server.ts';
import { events, FnModel } from './support/loop-kit.ts';

let http: FakeMcpHttp;
beforeAll(async () => {
  http = await startFakeMcpHttp();
});
afterAll(() => http.close());

const CANARY = `canary-mcp-${Math.random().toString(36).slice(2)}`;
const DECLARED = `declared-${Math.random().toString(36).slice(2)}`;
const secrets: Record<string, string> = { WARREN_TEST_DECLARED: DECLARED, WARREN_TEST_CANARY: CANARY };
const secret = (n: string): string | undefined => secrets[n];
const stdio = (name: string, env: Record<string, string> = {}): McpServerConfig => ({ name, command: process.execPath, args: ['test/fakes/mcp-server.ts'], env });

describe('MCP over streamable HTTP', () => {
  it('read_only_tools in the config makes unannotated tools parallel-safe; nothing else changes', async () => {
    const set = await connectMcpServers([{ name: 'docs', url: http.url, headers: {}, read_only_tools: ['fail', 'nonexistent'] }], { grants: ['mcp:docs'], secret });
    try {
      expect(set.tools.map((t) => [t.definition.name, t.readOnly])).toEqual([
        ['docs__lookup', true],
        ['docs__write_note', false],
        ['docs__slow', true],
        ['docs__fail', true],
        ['docs__env', true],
        ['docs__big', true],
      ]);
    } finally {
      await set.close();
    }
  });

  it('offers <server>__<tool>, maps content and isError faithfully, read-only hints decide parallelism', async () => {
    const set = await connectMcpServers([{ name: 'docs', url: http.url, headers: {} }], { grants: ['mcp:docs'], secret });
    try {
      expect(set.tools.map((t) => t.definition.name)).toEqual(['docs__lookup', 'docs__write_note', 'docs__slow', 'docs__fail', 'docs__env', 'docs__big']);
      expect(set.tools.map((t) => t.readOnly)).toEqual([true, false, true, false, true, true]);
      const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'docs__lookup', arguments: { q: 'warren' } }, { name: 'docs__fail', arguments: {} }, { name: 'docs__write_note', arguments: { text: 'hi' } }] } : { content: 'done' }));
      const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([...set.tools, taskCompleteTool, noActionTool], ['mcp:docs']) });
      expect(r.toolResults.map((t) => [t.call.name, t.status, t.content])).toEqual([
        ['docs__lookup', 'ok', 'found warren\nsecond block'],
        ['docs__fail', 'error', 'it failed on purpose'],
        ['docs__write_note', 'ok', 'stored note 1'],
      ]);
      expect(http.state.notes).toEqual(['hi']);
    } finally {
      await set.close();
    }
  });

  it('abort during a 10 s MCP tool: the run settles within 500 ms, the server gets the cancellation, a cancelled result is recorded', async () => {
    const set = await connectMcpServers([{ name: 'docs', url: http.url, headers: {} }], { grants: ['mcp:docs'], secret });
    try {
      const ac = new AbortController();
      const model = new FnModel(() => ({ calls: [{ name: 'docs__slow', arguments: { ms: 10_000 } }] }));
      const before = http.state.cancelled.length;
      setTimeout(() => ac.abort(), 300);
      const started = Date.now();
      const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, signal: ac.signal, events: events(), tools: new ToolRegistry(set.tools, ['mcp:docs']) });
      const settledAfterAbort = Date.now() - started - 300;
      expect(r.termination).toBe('aborted');
      expect(settledAfterAbort).toBeLessThan(500);
      expect(r.toolResults.map((t) => t.status)).toEqual(['cancelled']);
      const deadline = Date.now() + 2000;
      while (http.state.cancelled.length === before && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
      expect(http.state.cancelled.slice(before)).toEqual(['slow']);
    } finally {
      await set.close();
    }
  });

  it('a 1 MB MCP result reaches the next request capped, with a notice', async () => {
    const set = await connectMcpServers([{ name: 'docs', url: http.url, headers: {} }], { grants: ['mcp:docs'], secret });
    try {
      const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'docs__big', arguments: { n: 1_000_000 } }] } : { content: 'ok' }));
      await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, signal: new AbortController().signal, events: events(), tools: new ToolRegistry(set.tools, ['mcp:docs']) });
      const sent = model.requests[1]!.messages.find((m) => m.role === 'tool')?.content ?? '';
      expect(sent.length).toBeLessThanOrEqual(16_000);
      expect(sent).toContain('output capped');
    } finally {
      await set.close();
    }
  });
});

describe('MCP over stdio', () => {
  it('a server without its grant is never started; one with it is', async () => {
    const before = http.state.calls.length;
    const set = await connectMcpServers([stdio('nogrant'), { name: 'web', url: http.url, headers: {} }, 'github', 'hub'], { grants: ['hub:read'], secret });
    expect(set.tools).toEqual([]);
    expect(set.skipped.map((s) => s.server)).toEqual(['nogrant', 'web', 'github']);
    expect(set.skipped[0]!.reason).toContain('mcp:nogrant');
    expect(http.state.calls.length).toBe(before);
    await set.close();
    const granted = await connectMcpServers([stdio('local')], { grants: ['mcp:local'], secret });
    try {
      expect(granted.tools.map((t) => t.definition.name)).toContain('local__lookup');
    } finally {
      await granted.close();
    }
  });

  it('a canary secret of the daemon environment never reaches an MCP server that did not declare it', async () => {
    process.env.WARREN_TEST_CANARY = CANARY;
    const set = await connectMcpServers([stdio('local', { API_TOKEN: '${WARREN_TEST_DECLARED}', MODE: 'test' })], { grants: ['mcp:*'], secret });
    try {
      const envTool = set.tools.find((t) => t.definition.name === 'local__env')!;
      const out = await envTool.execute({}, { signal: new AbortController().signal, callId: 'c', idempotencyKey: 'k', step: 1 });
      const env = JSON.parse(out.content) as Record<string, string>;
      expect(env.API_TOKEN).toBe(DECLARED);
      expect(env.MODE).toBe('test');
      expect(out.content).not.toContain(CANARY);
      expect(Object.keys(env)).not.toContain('WARREN_TEST_CANARY');
    } finally {
      delete process.env.WARREN_TEST_CANARY;
      await set.close();
    }
  });

  it('abort during a 10 s tool over stdio: settles within 500 ms, the server process gets the cancellation', async () => {
    const log = join(mkdtempSync(join(tmpdir(), 'fake-mcp-')), 'cancel.log');
    const set = await connectMcpServers([stdio('local', { FAKE_MCP_CANCEL_LOG: log })], { grants: ['mcp:local'], secret });
    try {
      const ac = new AbortController();
      const model = new FnModel(() => ({ calls: [{ name: 'local__slow', arguments: { ms: 10_000 } }] }));
      setTimeout(() => ac.abort(), 300);
      const started = Date.now();
      const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, signal: ac.signal, events: events(), tools: new ToolRegistry(set.tools, ['mcp:local']) });
      expect(Date.now() - started - 300).toBeLessThan(500);
      expect(r.termination).toBe('aborted');
      expect(r.toolResults.map((t) => t.status)).toEqual(['cancelled']);
      const deadline = Date.now() + 2000;
      while (!(existsSync(log) && readFileSync(log, 'utf8').includes('slow')) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
      expect(readFileSync(log, 'utf8')).toBe('slow\n');
    } finally {
      await set.close();
    }
  });

  it('a server whose declared secret is missing is not started', async () => {
    const set = await connectMcpServers([stdio('local', { T: '${NOT_SET_ANYWHERE}' })], { grants: ['mcp:local'], secret });
    expect(set.tools).toEqual([]);
    expect(set.skipped[0]?.reason).toContain('NOT_SET_ANYWHERE');
  });
});

describe('result mapping', () => {
  it('keeps every block in order and maps non-text blocks to markers', () => {
    expect(mapCallResult({ content: [{ type: 'text', text: 'a' }, { type: 'image', mimeType: 'image/png', data: 'x' }, { type: 'resource', resource: { uri: 'file:///x', text: 'body' } }] })).toEqual({ status: 'ok', content: 'a\n[image: image/png]\nbody' });
    expect(mapCallResult({ isError: true, content: [] , structuredContent: { why: 'no' } })).toEqual({ status: 'error', content: '{"why":"no"}' });
  });
});
