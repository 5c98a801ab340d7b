// `warren memory <agent>` as a user runs it: the real binary, a warren.yaml naming a SQLite store.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const run = promisify(execFile);
let dir: string;
let ids: string[];

async function warren(...args: string[]): Promise<{ stdout: string; code: number }> {
  try {
    const { stdout } = await run(process.execPath, [resolve('bin/warren.js'), 'memory', ...args, '-c', join(dir, 'warren.yaml')], { cwd: dir });
    return { stdout, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; code: number };
    return { stdout: e.stdout, code: e.code };
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'warren-memory-cli-'));
  writeFileSync(join(dir, 'warren.yaml'), 'memory:\n  store: ./data/memory.sqlite\n');
  const store = new SqliteMemoryStore(join(dir, 'data', 'memory.sqlite'));
  await store.write('keeper', [
    { key: 'a', kind: 'conversation', text: 'dana said the deploy codeword is PELICAN-42', createdAt: Date.UTC(2026, 0, 1), people: ['dana'] },
    { key: 'b', kind: 'note', text: 'standup at ten', createdAt: Date.UTC(2026, 0, 2) },
  ]);
  await store.write('other', [{ key: 'c', kind: 'note', text: 'not keeper', createdAt: Date.UTC(2026, 0, 3) }]);
  ids = (await store.search('keeper', { strategy: 'recent', limit: 5 })).map((h) => h.entry.id);
  await store.close();
});

describe('warren memory', { timeout: PROCESS_TEST_MS }, () => {
  it('lists, searches, forgets one and forgets all', async () => {
    const listed = await warren('keeper');
    expect(listed.stdout).toMatch(/^keeper: 2 entries, \d+ B\n/);
    expect(listed.stdout.indexOf('standup at ten')).toBeLessThan(listed.stdout.indexOf('PELICAN-42'));
    expect(listed.stdout).toMatch(/\[dana\] dana said the deploy codeword/);
    expect(listed.stdout).toMatch(/\[general\] standup at ten/);
    const found = JSON.parse((await warren('keeper', '--search', 'codeword', '--json')).stdout) as { count: number; entries: Array<{ text: string }> };
    expect(found.count).toBe(2);
    expect(found.entries.map((e) => e.text)).toEqual(['dana said the deploy codeword is PELICAN-42']);
    expect(await warren('keeper', '--forget', ids[0]!)).toEqual({ stdout: `keeper: forgot ${ids[0]}\n`, code: 0 });
    expect((await warren('keeper', '--forget', ids[0]!)).code).toBe(1);
    expect((await warren('keeper', '--forget-all')).stdout).toBe('keeper: forgot 1 entry\n');
    expect((await warren('keeper')).stdout).toBe('keeper: 0 entries, 0 B\nnothing remembered\n');
    expect((await warren('other', '--recent', '1')).stdout).toContain('not keeper');
  });

  it("--forget <person> erases that person's entries only, in that agent only", async () => {
    const store = new SqliteMemoryStore(join(dir, 'data', 'memory.sqlite'));
    await store.write('keeper', [
      { key: 'p1', kind: 'conversation', text: 'erin told me her birthday', createdAt: Date.UTC(2026, 0, 4), people: ['erin'] },
      { key: 'p2', kind: 'conversation', text: 'erin and fred argued', createdAt: Date.UTC(2026, 0, 5), people: ['erin', 'fred'] },
      { key: 'p3', kind: 'conversation', text: 'fred asked for the menu', createdAt: Date.UTC(2026, 0, 6), people: ['fred'] },
    ]);
    await store.write('other', [{ key: 'p4', kind: 'conversation', text: 'erin elsewhere', createdAt: Date.UTC(2026, 0, 7), people: ['erin'] }]);
    await store.close();
    expect(await warren('keeper', '--forget', 'erin')).toEqual({ stdout: 'keeper: forgot 2 entries from erin\n', code: 0 });
    const left = (await warren('keeper')).stdout;
    expect(left).toContain('fred asked for the menu');
    expect(left).not.toContain('erin');
    expect((await warren('other')).stdout).toContain('erin elsewhere');
    expect(await warren('keeper', '--forget', 'erin')).toMatchObject({ code: 1 });
    expect(JSON.parse((await warren('keeper', '--forget', 'fred', '--json')).stdout)).toEqual({ agent: 'keeper', person: 'fred', forgotten: 1 });
  });
});

describe('warren validate and memory', { timeout: PROCESS_TEST_MS }, () => {
  it('warns of an agent asking for embedding_search without memory.embeddings in warren.yaml, and of none with it', async () => {
    const root = mkdtempSync(join(tmpdir(), 'warren-memory-validate-'));
    mkdirSync(join(root, 'agents', 'seeker'), { recursive: true });
    writeFileSync(join(root, 'agents', 'seeker', 'config.yaml'), 'name: seeker\ntype: llm\nbrain:\n  model: m\ncapabilities: {}\nmemory:\n  enabled: true\n  retrieval:\n    strategy: embedding_search\n');
    writeFileSync(join(root, 'agents', 'seeker', 'system-prompt.md'), 'You are seeker.');
    const validate = async (yaml: string): Promise<{ stdout: string; stderr: string }> => {
      writeFileSync(join(root, 'warren.yaml'), yaml);
      // A warning does not fail validation: execFile would reject on a non-zero exit.
      return run(process.execPath, [resolve('bin/warren.js'), 'validate', 'agents', '-c', join(root, 'warren.yaml')], { cwd: root });
    };
    const without = await validate('memory:\n  store: ./data/memory.sqlite\n');
    expect(without.stderr).toMatch(/seeker\/config\.yaml: warning: memory\.retrieval\.strategy is embedding_search but warren\.yaml has no memory\.embeddings/);
    expect(without.stdout).toMatch(/1 agent valid in agents/);
    const withEndpoint = await validate('memory:\n  embeddings:\n    api_base: http://127.0.0.1:9/v1\n    model: e\n');
    expect(withEndpoint.stderr).not.toContain('embedding_search');
  });
});
