// `warren start` runs the daemon with warren's heap settings (bin/heap-settings.js), applied by bin/warren.js
// re-running itself in the same process (execve): a preload (NODE_OPTIONS --require) records each process image's
// pid, V8 flags and marker, and the command then fails on a missing config, so no daemon needs to run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_PERCENT, heapSettings } from '../bin/heap-settings.js';
import { PROCESS_START_MS } from './support/ceilings.ts';

const WARREN = resolve('bin/warren.js');
const OURS = `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;

interface Image {
  pid: number;
  execArgv: string[];
  marker: string | null;
}

function run(nodeArgs: string[], args: string[], env: Record<string, string> = {}): Image[] {
  const dir = mkdtempSync(join(tmpdir(), 'warren-heap-'));
  const probe = join(dir, 'probe.cjs');
  const out = join(dir, 'images.jsonl');
  writeFileSync(probe, `require('node:fs').appendFileSync(${JSON.stringify(out)}, JSON.stringify({ pid: process.pid, execArgv: process.execArgv, marker: process.env.WARREN_HEAP_SETTINGS ?? null }) + '\\n');\n`);
  const base = { ...process.env };
  delete base.WARREN_HEAP_SETTINGS;
  spawnSync(process.execPath, [...nodeArgs, WARREN, ...args], { encoding: 'utf8', env: { ...base, NODE_OPTIONS: `--require ${probe}`, ...env }, timeout: PROCESS_START_MS });
  return existsSync(out) ? readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Image) : [];
}

describe('heap settings of warren start', () => {
  it('are a fixed growing factor, V8’s own young generation and no hard limit', () => {
    expect(heapSettings().execArgv).toEqual([OURS]);
    expect(heapSettings().execArgv.some((f) => f.startsWith('--max-old-space-size') || f.startsWith('--max-semi-space-size'))).toBe(false);
  });

  const missing = join(tmpdir(), 'warren-heap-no-such-dir', 'warren.yaml');
  const cases: Array<{ name: string; nodeArgs: string[]; args: string[]; env?: Record<string, string>; images: number; lastFlags: string[]; notFlags: string[] }> = [
    { name: 'start: re-run once, same pid, with our flag', nodeArgs: [], args: ['start', '-c', missing], images: 2, lastFlags: [OURS], notFlags: [] },
    { name: 'start with the operator’s own growing factor: theirs wins', nodeArgs: ['--heap-growing-percent=70'], args: ['start', '-c', missing], images: 2, lastFlags: ['--heap-growing-percent=70'], notFlags: [OURS] },
    { name: 'start with the operator’s own semi-space size: kept beside ours', nodeArgs: ['--max-semi-space-size=16'], args: ['start', '-c', missing], images: 2, lastFlags: ['--max-semi-space-size=16', OURS], notFlags: [] },
    { name: 'WARREN_HEAP_SETTINGS=off: Node’s defaults, no re-run', nodeArgs: [], args: ['start', '-c', missing], env: { WARREN_HEAP_SETTINGS: 'off' }, images: 1, lastFlags: [], notFlags: [OURS] },
    { name: 'other commands: no re-run', nodeArgs: [], args: ['validate', join(tmpdir(), 'warren-heap-no-such-dir')], images: 1, lastFlags: [], notFlags: [OURS] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const images = run(c.nodeArgs, c.args, c.env);
      expect(images).toHaveLength(c.images);
      expect(new Set(images.map((i) => i.pid)).size).toBe(1);
      const last = images.at(-1)!;
      for (const f of c.lastFlags) expect(last.execArgv).toContain(f);
      for (const f of c.notFlags) expect(last.execArgv).not.toContain(f);
      if (c.images === 2) expect(last.marker).toBe('applied');
    });
  }
});
