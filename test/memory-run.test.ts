// `warren run` and memory, as a user runs it (the real binary, a fake OpenAI-compatible server that records
// requests, a real SQLite store): the run recalls what the agent remembers into the model's request, as the
// daemon does; without --post it changes nothing in memory (no memory_save offered, nothing remembered).
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';
import { MEMORY_HEADING } from '../prompts/memories.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';

let fake: FakeOpenAI;
let dir: string;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  dir = mkdtempSync(join(tmpdir(), 'warren-memory-run-'));
  writeFileSync(join(dir, 'warren.yaml'), 'memory:\n  store: ./data/memory.sqlite\n');
  const store = new SqliteMemoryStore(join(dir, 'data', 'memory.sqlite'));
  await store.write('keeper', [
    { key: 'told', kind: 'conversation', text: 'alice mentioned me: "remember: the deploy codeword is PELICAN-42"', createdAt: Date.UTC(2026, 0, 1) },
    { key: 'lunch', kind: 'note', text: 'lunch is at noon', createdAt: Date.UTC(2026, 0, 2) },
  ]);
  await store.close();
});
afterAll(() => fake.close());

function warren(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [resolve('bin/warren.js'), ...args], { cwd: dir, env: { ...process.env, WARREN_HUB_ADMIN_KEY: '', KEEPER_API_KEY: 'sk-keeper' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

describe('warren run with memory', () => {
  it('recalls what fits the prompt into the request, offers memory_search only, and writes nothing without --post', async () => {
    const agents = makeAgentsDir(
      {
        keeper: {
          config: `name: keeper\ntype: llm\nbrain:\n  provider: openai\n  model: fake-gpt\n  api_base: ${fake.url}\n  api_key_env: KEEPER_API_KEY\ncapabilities:\n  grants: [hub:read]\nmemory:\n  enabled: true\n  retrieval:\n    strategy: keyword\n    relevance_threshold: 0.3\n`,
          prompt: 'You are {{name}}.',
        },
      },
      { withGreeter: false },
    );
    fake.enqueue('PELICAN-42.');
    const r = await warren(['run', 'keeper', '--prompt', 'what is the deploy codeword?', '--agents', agents, '--no-stream', '-c', join(dir, 'warren.yaml')]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const chat = fake.requests.find((q) => q.path.endsWith('/chat/completions'))!;
    const body = chat.body as { messages: Array<{ content: string }>; tools?: Array<{ function: { name: string } }> };
    const system = body.messages[0]!.content;
    expect(system).toContain(MEMORY_HEADING);
    expect(system.slice(system.indexOf(MEMORY_HEADING))).toContain('PELICAN-42');
    expect(system).not.toContain('lunch is at noon');
    const tools = (body.tools ?? []).map((t) => t.function.name);
    expect(tools).toContain('memory_search');
    expect(tools).not.toContain('memory_save');
    const store = new SqliteMemoryStore(join(dir, 'data', 'memory.sqlite'));
    try {
      expect(await store.count('keeper')).toBe(2);
      // Not even the recall is counted: a trial run does not change what eviction spares.
      expect((await store.search('keeper', { strategy: 'recent', limit: 5 })).map((h) => h.entry.recalls)).toEqual([0, 0]);
    } finally {
      await store.close();
    }
  });
});
