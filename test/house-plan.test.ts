// The house plan holds: imports point down the floors of lint/floors.js, and no files import each other in a loop.
// The lint rule and the circle check are themselves shown to fail on a wrong import and on a loop.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';
import { afterAll, describe, expect, it } from 'vitest';
import { circles, importGraph } from '../lint/import-circles.js';
import { FLOORS, floorOf } from '../lint/floors.js';

const ROOT = path.resolve(import.meta.dirname, '..');

describe('floors', () => {
  // The project's own config, the floors rule alone and without type information: the rule reads import paths only,
  // and building the project's type program first took ~40 s of a loaded CI run (the test's ceiling was 60).
  const eslint = new ESLint({ cwd: ROOT, ruleFilter: ({ ruleId }) => ruleId === 'warren/floors', overrideConfig: { languageOptions: { parserOptions: { projectService: false } } } });
  const floorErrors = async (file: string, code: string): Promise<string[]> => {
    const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
    return (result?.messages ?? []).filter((m) => m.ruleId === 'warren/floors').map((m) => m.message);
  };

  it.each([
    // [file, import, allowed]
    ['redis/keys.ts', '../agent-loop/loop.ts', false],
    ['hub-client/moltbook/state.ts', '../../scheduler/agent-state.ts', false],
    ['agent-loop/loop.ts', '../executors/run-outcome.ts', false],
    ['memory/agent-memory.ts', '../prompts/activation-context.ts', false],
    ['store/definition.ts', '../redis/keys.ts', false], // same floor, another folder
    ['activation/worker.ts', '../daemon/daemon.ts', false],
    ['activation/worker.ts', '../scheduler/agent-state.ts', true],
    ['daemon/daemon.ts', '../activation/worker.ts', true],
    ['hub-client/moltbook/state.ts', '../../redis/keys.ts', true],
    ['agent-loop/loop.ts', './tool-runner.ts', true],
    ['store/reloader.ts', '../policy/exponential-backoff.ts', true],
    ['policy/exponential-backoff.ts', '../store/definition.ts', false],
  ] as const)('%s importing %s: allowed %s', async (file, spec, allowed) => {
    const errors = await floorErrors(file, `import { x } from '${spec}';\nexport const y = x;\n`);
    expect(errors.length === 0).toBe(allowed);
    if (!allowed) expect(errors[0]).toMatch(/may not import/);
  });

  it('a dynamic import up a floor fails too', async () => {
    const errors = await floorErrors('scheduler/scheduler.ts', "export const m = await import('../activation/worker.ts');\n");
    expect(errors).toHaveLength(1);
  });

  it('every source folder is on exactly one floor', () => {
    const names = FLOORS.flat();
    expect(new Set(names).size).toBe(names.length);
    expect(floorOf('test')).toBeUndefined();
    // policy/ (pure decisions, imports nothing of warren's) is the ground under store/, which reloads with its backoff.
    expect(floorOf('policy')).toBe(0);
    expect(floorOf('store')).toBe(1);
    expect(floorOf('daemon')).toBe(FLOORS.length - 1);
  });
});

describe('circles of files', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('finds a loop of files and names them', () => {
    const root = mkdtempSync(path.join(tmpdir(), 'warren-circles-'));
    dirs.push(root);
    mkdirSync(path.join(root, 'agent-loop'));
    writeFileSync(path.join(root, 'agent-loop/a.ts'), "import { b } from './b.ts';\nexport const a = b;\n");
    writeFileSync(path.join(root, 'agent-loop/b.ts'), "import type { C } from './c.ts';\nexport const b = 1 as C;\n");
    writeFileSync(path.join(root, 'agent-loop/c.ts'), "export type C = number;\nexport { a } from './a.ts';\n");
    writeFileSync(path.join(root, 'agent-loop/d.ts'), "import { a } from './a.ts';\nexport const d = a;\n");
    expect(circles(importGraph(root))).toEqual([['agent-loop/a.ts', 'agent-loop/b.ts', 'agent-loop/c.ts']]);
  });

  it('the project has none', () => {
    expect(circles(importGraph(ROOT))).toEqual([]);
  });
});
