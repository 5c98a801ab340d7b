// Table-driven: every folder under test/fixtures/malformed/<case>/ is a store with one broken definition (two
// for duplicate names) and an expected.txt listing each problem exactly as `warren validate` prints it.
import { cpSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildCli } from '../daemon/cli.ts';
import { AgentRegistry } from '../daemon/agent-registry.ts';
import { ExecutorRegistry } from '../services/executor-registry.ts';
import { LlmExecutor } from '../executors/llm/llm-executor.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { formatProblem } from '../store/problems.ts';

const ROOT = join(import.meta.dirname, 'fixtures', 'malformed');
const CASES = readdirSync(ROOT).sort();

afterEach(() => {
  vi.restoreAllMocks();
});

describe('malformed agent configs', () => {
  it('has at least 60 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(60);
  });

  it.each(CASES)('%s', async (name) => {
    const dir = join(ROOT, name);
    const expected = readFileSync(join(dir, 'expected.txt'), 'utf8').trim().split('\n');
    const { agents, problems } = await new LocalFolderStore(dir).load();
    const shown = problems.map((p) => formatProblem({ ...p, file: relative(dir, p.file) }));
    expect(shown).toEqual(expected);
    expect(problems.some((p) => p.severity === 'error')).toBe(true);
    // The broken definition never loads (duplicate names: only the folder that matches the name does).
    expect(agents.map((a) => a.name)).toEqual(name === 'duplicate-name-two-folders' ? ['dup-agent'] : []);
    // Every problem inside a config file says where: file:line:column.
    for (const p of problems) if (p.file.endsWith('config.yaml')) expect(p.line, formatProblem(p)).toBeGreaterThan(0);
  });

  it.each(CASES)('warren validate %s prints exactly the expected lines and exits 1', async (name) => {
    const dir = join(ROOT, name);
    const expected = readFileSync(join(dir, 'expected.txt'), 'utf8').trim().split('\n');
    const printed: string[] = [];
    const capture = (...args: unknown[]): void => void printed.push(args.map(String).join(' '));
    vi.spyOn(console, 'error').mockImplementation(capture);
    vi.spyOn(console, 'warn').mockImplementation(capture);
    vi.spyOn(console, 'log').mockImplementation(() => undefined);
    // In-process: the real command and formatting, without 76 Node start-ups.
    await buildCli().parseAsync(['node', 'warren', 'validate', dir]);
    const exitCode = process.exitCode;
    process.exitCode = 0;
    expect(exitCode).toBe(1);
    const prefix = `${relative(process.cwd(), dir)}/`;
    expect(printed.map((l) => (l.startsWith(prefix) ? l.slice(prefix.length) : l))).toEqual(expected);
  });

  it('all of them at once in one store: the registry does not crash and the good agent beside them runs', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'warren-malformed-')), 'agents');
    cpSync('examples/agents/greeter', join(store, 'greeter'), { recursive: true });
    for (const c of CASES) {
      for (const folder of readdirSync(join(ROOT, c, 'agents'))) cpSync(join(ROOT, c, 'agents', folder), join(store, `${c}--${folder}`), { recursive: true });
    }
    const logs: string[] = [];
    const registry = new AgentRegistry({
      store: new LocalFolderStore(store),
      executors: new ExecutorRegistry(new LlmExecutor({ secret: () => undefined })),
      logger: pino({ level: 'info' }, { write: (l: string) => void logs.push(l) }),
    });
    expect(await registry.reload()).toBe(true);
    expect([...registry.runnable()]).toEqual(['greeter']);
    expect(logs.filter((l) => l.includes('agent skipped')).length).toBeGreaterThanOrEqual(CASES.length);
  });
});
