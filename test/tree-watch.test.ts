// The store's folder watch: one shallow watch per folder, which hears every file of it, also after an editor
// replaced one by a rename; folders that appear are watched, folders that go are let go.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalFolderStore } from '../store/local-store.ts';
import { watchTree } from '../store/tree-watch.ts';

const POLL = { timeout: 5_000, interval: 20 };

function tree(agents: number): string {
  const root = mkdtempSync(join(tmpdir(), 'warren-tree-'));
  for (let i = 0; i < agents; i++) {
    mkdirSync(join(root, `a${i}`));
    writeFileSync(join(root, `a${i}`, 'config.yaml'), 'x');
    writeFileSync(join(root, `a${i}`, 'system-prompt.md'), 'x');
  }
  return root;
}

describe('watchTree', () => {
  it('watches each folder once (not each file) and hears writes to any file in them', async () => {
    const root = tree(50);
    const heard: Array<string | null> = [];
    const w = watchTree(root, (p) => heard.push(p));
    try {
      await w.ready;
      expect(w.size).toBe(51); // the root and its 50 folders; 100 files, no watch of their own
      writeFileSync(join(root, 'a7', 'config.yaml'), 'y');
      await expect.poll(() => heard.includes('a7/config.yaml'), POLL).toBe(true);
    } finally {
      w.close();
    }
  });

  it('keeps hearing a file replaced by a rename (as sed -i and vim save), write after write', async () => {
    const root = tree(1);
    const file = join(root, 'a0', 'config.yaml');
    let writes = 0;
    const w = watchTree(root, (p) => void (p === 'a0/config.yaml' && writes++));
    try {
      await w.ready;
      writeFileSync(`${file}.tmp`, 'renamed');
      renameSync(`${file}.tmp`, file);
      await expect.poll(() => writes, POLL).toBeGreaterThan(0);
      for (const text of ['in place', 'in place again']) {
        const before = writes;
        writeFileSync(file, text);
        await expect.poll(() => writes, POLL).toBeGreaterThan(before);
      }
    } finally {
      w.close();
    }
  });

  it('watches folders that appear, deep ones included, and lets go of folders that go', async () => {
    const root = tree(2);
    const heard: Array<string | null> = [];
    const w = watchTree(root, (p) => heard.push(p));
    try {
      await w.ready;
      expect(w.size).toBe(3);
      mkdirSync(join(root, 'late', 'skills', 'deep'), { recursive: true });
      await expect.poll(() => w.size, POLL).toBe(6);
      writeFileSync(join(root, 'late', 'skills', 'deep', 'SKILL.md'), 'x');
      await expect.poll(() => heard.includes('late/skills/deep/SKILL.md'), POLL).toBe(true);
      rmSync(join(root, 'late'), { recursive: true });
      await expect.poll(() => w.size, POLL).toBe(3);
      rmSync(join(root, 'a1'), { recursive: true });
      await expect.poll(() => w.size, POLL).toBe(2);
    } finally {
      w.close();
    }
    expect(w.size).toBe(0);
  });
});

describe('the store watch without its periodic check', () => {
  it('notices a save by rename and then saves in place, each (the check is off: only the watch can)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'warren-store-watch-'));
    mkdirSync(join(root, 'agents', 'echo'), { recursive: true });
    const file = join(root, 'agents', 'echo', 'config.yaml');
    writeFileSync(file, 'name: echo\n');
    const store = new LocalFolderStore(root, { debounceMs: 30, checkIntervalMs: 0 });
    let changes = 0;
    const stop = store.watch(() => changes++);
    try {
      await new Promise((r) => setTimeout(r, 200)); // the watches are set up asynchronously
      writeFileSync(`${file}.tmp`, 'name: echo\n# renamed\n');
      renameSync(`${file}.tmp`, file);
      await expect.poll(() => changes, POLL).toBe(1);
      writeFileSync(file, 'name: echo\n# in place\n');
      await expect.poll(() => changes, POLL).toBe(2);
      writeFileSync(file, 'name: echo\n# in place again\n');
      await expect.poll(() => changes, POLL).toBe(3);
    } finally {
      stop();
    }
  });
});
