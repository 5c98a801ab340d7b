// `warren memory <agent>` as a user runs it: the real binary, a warren.yaml naming a SQLite store.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';

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
    { key: 'a', kind: 'conversation', text: 'dana said the deploy codeword is PELICAN-42', createdAt: Date.UTC(2026, 0, 1) },
    { key: 'b', kind: 'note', text: 'standup at ten', createdAt: Date.UTC(2026, 0, 2) },
  ]);
  await store.write('other', [{ key: 'c', kind: 'note', text: 'not keeper', createdAt: Date.UTC(2026, 0, 3) }]);
  ids = (await store.search('keeper', { strategy: 'recent', limit: 5 })).map((h) => h.entry.id);
  await store.close();
});

describe('warren memory', () => {
  it('lists, searches, forgets one and forgets all', async () => {
    const listed = await warren('keeper');
    expect(listed.stdout).toMatch(/^keeper: 2 entries, \d+ B\n/);
    expect(listed.stdout.indexOf('standup at ten')).toBeLessThan(listed.stdout.indexOf('PELICAN-42'));
    const found = JSON.parse((await warren('keeper', '--search', 'codeword', '--json')).stdout) as { count: number; entries: Array<{ text: string }> };
    expect(found.count).toBe(2);
    expect(found.entries.map((e) => e.text)).toEqual(['dana said the deploy codeword is PELICAN-42']);
    expect(await warren('keeper', '--forget', ids[0]!)).toEqual({ stdout: `keeper: forgot ${ids[0]}\n`, code: 0 });
    expect((await warren('keeper', '--forget', ids[0]!)).code).toBe(1);
    expect((await warren('keeper', '--forget-all')).stdout).toBe('keeper: forgot 1 entry\n');
    expect((await warren('keeper')).stdout).toBe('keeper: 0 entries, 0 B\nnothing remembered\n');
    expect((await warren('other', '--recent', '1')).stdout).toContain('not keeper');
  });
});
