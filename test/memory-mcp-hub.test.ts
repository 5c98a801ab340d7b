// memory_save / memory_search for CLI agents: a real MCP client over stdio talks to `warren mcp hub` as the
// daemon launches it (startHubMcp: a gateway token, the agent's grants), which reaches the daemon's gateway,
// which keeps the note in a real SQLite store, redacted, keyed by the call, bounded per activation.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubMcp } from '../services/runtime.ts';
import { mcpServersFor } from '../executors/cli/mcp.ts';
import { gatewayMemoryRoute, HubGateway, MAX_SAVES_PER_TOKEN } from '../services/hub-gateway.ts';
import { Redactor, REDACTED } from '../services/redact.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { AgentMemory } from '../memory/agent-memory.ts';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';
import { AgentConfigSchema, type AgentConfigInput } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const CANARY = 'canary-secret-7f3a9c1e55';
let hub: RunningHub;
let store: SqliteMemoryStore;
let served: NonNullable<Awaited<ReturnType<typeof startHubMcp>>>;

// The launcher reads only the name, grants and memory: the executor type is beside the point here.
function cliAgent(name: string, memory: AgentConfigInput['memory'], grants: string[] = ['hub:read', 'hub:write']): AgentDefinition {
  return { name, config: AgentConfigSchema.parse({ name, type: 'llm', brain: { model: 'm' }, capabilities: { grants }, memory }), systemPrompt: '', files: { config: 'c', prompt: 'p' } };
}

beforeAll(async () => {
  hub = await startHub({ dbPath: ':memory:', port: 0 });
  store = new SqliteMemoryStore(':memory:');
  const redactor = new Redactor([CANARY]);
  const memory = new AgentMemory({ store, redact: (t) => redactor.redact(t), logger: pino({ level: 'silent' }) });
  served = (await startHubMcp({ hubUrl: hub.url, adminKey: hub.adminKey, logger: pino({ level: 'silent' }), memory, redact: (t) => redactor.redact(t) }))!;
  expect(served).toBeDefined();
});
afterAll(async () => {
  await served?.close();
  await store?.close();
  await hub?.close();
});

async function connect(def: AgentDefinition, activation: string): Promise<{ client: Client; release: () => void }> {
  const launch = served.launcher(def, activation, { kind: 'operator' });
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StdioClientTransport({ command: launch.command, args: [...launch.args], env: { ...launch.env }, stderr: 'pipe' }));
  return { client, release: () => launch.release?.() };
}
const text = (r: Awaited<ReturnType<Client['callTool']>>): string => (r.content as Array<{ text: string }>)[0]!.text;

describe('memory tools through warren mcp hub', { timeout: PROCESS_TEST_MS }, () => {
  it('a CLI agent with memory on saves a redacted note and finds it; a retried activation does not save twice', async () => {
    const def = cliAgent('cli-keeper', { enabled: true });
    const { client, release } = await connect(def, 'act_mem_1');
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['memory_save', 'memory_search', 'hub_post']));
      const saved = await client.callTool({ name: 'memory_save', arguments: { text: `the deploy codeword is PELICAN-42; token ${CANARY}` } });
      expect(saved.isError).toBe(false);
      expect(text(saved)).toBe('Saved.');
      const found = await client.callTool({ name: 'memory_search', arguments: { query: 'deploy codeword', limit: 3 } });
      expect(text(found)).toContain('PELICAN-42');
      expect(text(found)).toContain(REDACTED);
      expect(text(found)).not.toContain(CANARY);
    } finally {
      await client.close();
      release();
    }
    // The same call in a retried activation (a new server, the same activation id) is the same note.
    const retry = await connect(def, 'act_mem_1');
    try {
      expect(text(await retry.client.callTool({ name: 'memory_save', arguments: { text: `the deploy codeword is PELICAN-42; token ${CANARY}` } }))).toBe('Already saved.');
    } finally {
      await retry.client.close();
      retry.release();
    }
    expect(await store.count('cli-keeper')).toBe(1);
    const [entry] = await store.search('cli-keeper', { strategy: 'recent', limit: 1 });
    expect(entry!.entry.kind).toBe('note');
    expect(entry!.entry.text).not.toContain(CANARY);
  });

  it('a CLI agent with memory and no hub grant still gets the server, for its memory tools', () => {
    const launch = { command: 'node', args: [], env: {} };
    expect(mcpServersFor(cliAgent('cli-quiet', { enabled: true }, []), launch).servers.map((x) => x.name)).toEqual(['hub']);
    expect(mcpServersFor(cliAgent('cli-mute', undefined, []), launch).servers).toEqual([]);
  });

  it('grants decide: memory:read only lists and allows memory_search; no memory, no memory tools', async () => {
    const reader = cliAgent('cli-reader', { enabled: true }, ['hub:read', 'memory:read']);
    const r = await connect(reader, 'act_mem_2');
    try {
      const names = (await r.client.listTools()).tools.map((t) => t.name);
      expect(names).toContain('memory_search');
      expect(names).not.toContain('memory_save');
      const refused = await r.client.callTool({ name: 'memory_save', arguments: { text: 'nope' } });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain('permission denied');
    } finally {
      await r.client.close();
      r.release();
    }
    const forgetful = await connect(cliAgent('cli-forgetful', undefined), 'act_mem_3');
    try {
      expect((await forgetful.client.listTools()).tools.map((t) => t.name).filter((n) => n.startsWith('memory_'))).toEqual([]);
    } finally {
      await forgetful.client.close();
      forgetful.release();
    }
  });

  it('writes are bounded: a long note is cut, and one activation saves at most MAX_SAVES_PER_TOKEN notes', async () => {
    const def = cliAgent('cli-chatty', { enabled: true });
    const { client, release } = await connect(def, 'act_mem_4');
    try {
      expect(text(await client.callTool({ name: 'memory_save', arguments: { text: 'x'.repeat(10_000) } }))).toBe('Saved.');
      for (let i = 1; i < MAX_SAVES_PER_TOKEN; i++) expect((await client.callTool({ name: 'memory_save', arguments: { text: `note ${i}` } })).isError).toBe(false);
      const over = await client.callTool({ name: 'memory_save', arguments: { text: 'one too many' } });
      expect(over.isError).toBe(true);
      expect(text(over)).toContain(`at most ${MAX_SAVES_PER_TOKEN}`);
    } finally {
      await client.close();
      release();
    }
    expect(await store.count('cli-chatty')).toBe(MAX_SAVES_PER_TOKEN);
    const longest = Math.max(...(await store.search('cli-chatty', { strategy: 'recent', limit: 50 })).map((h) => h.entry.text.length));
    expect(longest).toBeLessThanOrEqual(1_500);
  });

  it('the gateway itself: memory routes need their grant, a memory, a key and a text', async () => {
    expect(gatewayMemoryRoute('GET', '/memory/search')).toBe('memory:read');
    expect(gatewayMemoryRoute('POST', '/memory/notes')).toBe('memory:write');
    expect(gatewayMemoryRoute('DELETE', '/memory/notes')).toBeUndefined();
    const gateway = await HubGateway.start({ hubUrl: hub.url, adminKey: hub.adminKey, logger: pino({ level: 'silent' }) });
    try {
      const saves: string[] = [];
      const backend = { save: (key: string) => Promise.resolve(saves.push(key) > 0), search: () => Promise.resolve('') };
      const call = (token: string, method: string, path: string, body?: unknown, key?: string): Promise<Response> =>
        fetch(`${gateway.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
      const reader = gateway.issue('bee', ['memory:read'], 60_000, undefined, backend).token;
      expect((await call(reader, 'POST', '/memory/notes', { text: 'x' }, 'k1')).status).toBe(403);
      expect((await call(reader, 'GET', '/memory/search?q=x')).status).toBe(200);
      const forgetful = gateway.issue('bee', ['memory:read', 'memory:write'], 60_000).token;
      expect((await call(forgetful, 'POST', '/memory/notes', { text: 'x' }, 'k1')).status).toBe(404);
      const writer = gateway.issue('bee', ['memory:write'], 60_000, undefined, backend).token;
      expect((await call(writer, 'POST', '/memory/notes', { text: 'x' })).status).toBe(400);
      expect((await call(writer, 'POST', '/memory/notes', { text: '  ' }, 'k2')).status).toBe(400);
      expect((await call(writer, 'POST', '/memory/notes', { text: 'x'.repeat(20_000) }, 'k3')).status).toBe(413);
      expect(await (await call(writer, 'POST', '/api/v1/memory/notes', { text: 'kept' }, 'k4')).json()).toEqual({ saved: true });
      expect(saves).toEqual(['k4']);
    } finally {
      await gateway.close();
    }
  });
});
