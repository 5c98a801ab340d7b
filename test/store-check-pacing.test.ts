// A watched folder store's periodic check waits longer the more a check costs (store/check-pacing.ts), so a large
// store is not stat'ed continuously, and a change is still noticed by the check.
import { writeFileSync } from 'node:fs';
import type * as Fs from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { CHECK_COST_FACTOR, nextCheckDelayMs, stretchWorthLogging } from '../store/check-pacing.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';

// The cost of a stat and what fs.watch can do are the machine's, not the store's: set here, not by a hook in it.
const fsStub = vi.hoisted(() => ({ statDelayMs: 0, probe: '', probeStats: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  const stat = (async (path: string, opts?: { bigint?: boolean }) => {
    if (path === fsStub.probe) fsStub.probeStats++; // the check stats each file once: this counts the checks
    if (fsStub.statDelayMs > 0) await new Promise((r) => setTimeout(r, fsStub.statDelayMs)); // a slow disk
    return real.stat(path, opts);
  }) as typeof real.stat;
  return { ...real, stat };
});
// No watcher at all (as when inotify's watches run out: ENOSPC): only the periodic check can notice a change.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof Fs>();
  return {
    ...real,
    watch: () => {
      throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' });
    },
  };
});

const config = (name: string): string => `name: ${name}\ntype: llm\nbrain: {provider: scripted, model: m, responses: [x]}\n`;

function storeOf(agents: number): { dir: string; probe: string } {
  const defs = Object.fromEntries(Array.from({ length: agents }, (_, i) => [`a${String(i).padStart(3, '0')}`, { config: config(`a${i}`), prompt: 'x' }]));
  const dir = makeAgentsDir(defs, { withGreeter: false });
  return { dir, probe: join(dir, 'a000', 'config.yaml') };
}

describe('check pacing (decisions)', () => {
  it('waits the configured interval, or CHECK_COST_FACTOR × the last check when that is longer', () => {
    const cases: Array<[string, { configuredMs: number; lastCheckMs: number }, number]> = [
      ['a cheap check: the configured interval', { configuredMs: 2_000, lastCheckMs: 5 }, 2_000],
      ['exactly at the boundary', { configuredMs: 2_000, lastCheckMs: 20 }, 2_000],
      ['1,200 files (35 ms)', { configuredMs: 2_000, lastCheckMs: 35 }, 3_500],
      ['20,000 files (~0.3 s)', { configuredMs: 2_000, lastCheckMs: 300 }, 30_000],
      ['200,000 files (~6 s): no cap', { configuredMs: 2_000, lastCheckMs: 6_000 }, 600_000],
      ['a longer configured interval wins while it is longer', { configuredMs: 60_000, lastCheckMs: 500 }, 60_000],
      ['a fraction of a millisecond rounds up', { configuredMs: 10, lastCheckMs: 0.314 }, 32],
      ['no measure (NaN): the configured interval', { configuredMs: 2_000, lastCheckMs: Number.NaN }, 2_000],
      ['a clock step backwards: the configured interval', { configuredMs: 2_000, lastCheckMs: -30 }, 2_000],
    ];
    for (const [what, input, delay] of cases) expect(nextCheckDelayMs(input), what).toBe(delay);
    expect(CHECK_COST_FACTOR).toBe(100); // ≈ 2 % of a core: the check's CPU ≈ 2 × its main thread's ≤ 2 × its wall time, / (1 + 100)
  });

  it('logs a stretch the first time it doubles the interval and when it doubles again, not at every check', () => {
    const cases: Array<[string, { configuredMs: number; loggedMs: number | undefined; delayMs: number }, boolean]> = [
      ['not stretched', { configuredMs: 2_000, loggedMs: undefined, delayMs: 2_000 }, false],
      ['a slight stretch (a small store checked while the daemon starts)', { configuredMs: 2_000, loggedMs: undefined, delayMs: 2_332 }, false],
      ['just short of twice', { configuredMs: 2_000, loggedMs: undefined, delayMs: 3_999 }, false],
      ['first stretch to twice the interval', { configuredMs: 2_000, loggedMs: undefined, delayMs: 4_000 }, true],
      ['first stretch, a large store', { configuredMs: 2_000, loggedMs: undefined, delayMs: 235_800 }, true],
      ['the same again', { configuredMs: 2_000, loggedMs: 30_000, delayMs: 31_000 }, false],
      ['back to the configured interval', { configuredMs: 2_000, loggedMs: 30_000, delayMs: 2_000 }, false],
      ['doubled: the store grew', { configuredMs: 2_000, loggedMs: 30_000, delayMs: 60_000 }, true],
    ];
    for (const [what, input, log] of cases) expect(stretchWorthLogging(input), what).toBe(log);
  });
});

describe('check pacing (a folder store)', () => {
  // Under a loaded machine a check takes longer and the next one is further away (100 × its time): generous ceilings.
  it('a store whose check is slow is checked less often, and a change is still noticed by the check', { timeout: 180_000 }, async () => {
    const { dir, probe } = storeOf(24); // 48 files, 16 stats at a time: 3 rounds of an 8 ms stat, ≥ 24 ms a check
    Object.assign(fsStub, { statDelayMs: 8, probe, probeStats: 0 });
    const logs: Array<Record<string, unknown>> = [];
    const store = new LocalFolderStore(dir, { debounceMs: 20, checkIntervalMs: 20, logger: { info: (obj, msg) => void logs.push({ ...obj, msg }) } });
    const noticed: Array<string | undefined> = [];
    const stop = store.watch((how) => noticed.push(how));
    try {
      // Every 20 ms as configured, this would be some 30 checks in 1.5 s; paced, the first check's ≥ 24 ms put the
      // next ≥ 2.4 s away.
      await new Promise((r) => setTimeout(r, 1_500));
      expect(fsStub.probeStats).toBeLessThanOrEqual(2);
      // Told once that the folders cannot be watched (ENOSPC for each of them here), and once that the wait stretched.
      const unwatched = logs.filter((l) => /cannot be watched/.test(String(l.msg)));
      expect(unwatched).toHaveLength(1);
      expect(String(unwatched[0]!.err)).toContain('ENOSPC');
      const stretched = logs.filter((l) => !/cannot be watched/.test(String(l.msg)));
      expect(stretched).toHaveLength(1);
      expect(stretched[0]).toMatchObject({ msg: "store check interval stretched with the store's size", files: 48, configuredMs: 20 });
      expect(stretched[0]!.checkIntervalMs).toBeGreaterThanOrEqual(20 * CHECK_COST_FACTOR);

      writeFileSync(probe, config('changed')); // no watcher: only the check can see it
      await expect.poll(() => noticed.length, { timeout: 150_000, interval: 50 }).toBeGreaterThanOrEqual(1);
      expect(noticed[0]).toMatch(/^by the periodic check, not fs\.watch.*agents\/a000\/config\.yaml/);
      expect(fsStub.probeStats).toBeLessThanOrEqual(4); // still paced: the start, then one or two checks
    } finally {
      stop();
      fsStub.statDelayMs = 0;
    }
  });

  it('check_interval 0 turns the check off', async () => {
    const { dir, probe } = storeOf(2);
    Object.assign(fsStub, { statDelayMs: 0, probe, probeStats: 0 });
    const stop = new LocalFolderStore(dir, { checkIntervalMs: 0 }).watch(() => undefined);
    try {
      await new Promise((r) => setTimeout(r, 200));
      expect(fsStub.probeStats).toBe(0);
    } finally {
      stop();
    }
  });
});
