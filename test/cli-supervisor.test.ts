// The CLI supervisor against real subprocesses: group kill of a SIGTERM-ignoring forker, the line cap,
// the environment allow-list (read back from /proc/<pid>/environ), stdin prompts, idle and abort.
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildChildEnv } from '../executors/cli/child-env.ts';
import { LineSplitter, LineTooLongError, TailBuffer } from '../executors/cli/line-splitter.ts';
import { runningSubprocessCount, supervise, type SuperviseOptions } from '../executors/cli/supervisor.ts';
import { ensureWorkspace } from '../executors/cli/workspace.ts';
import { liveGroupMembers } from './support/process-group.ts';
import { Prng } from './support/prng.ts';

const FAKES = join(import.meta.dirname, 'fakes', 'cli');

function opts(script: string, extra: Partial<SuperviseOptions> = {}): SuperviseOptions {
  return {
    command: process.execPath,
    args: [join(FAKES, script)],
    cwd: tmpdir(),
    env: buildChildEnv(process.env),
    deadlineMs: 10_000,
    idleMs: 10_000,
    graceMs: 500,
    onLine: () => {},
    ...extra,
  };
}

function isAlive(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return s.slice(s.lastIndexOf(')') + 2)[0] !== 'Z';
}

describe('LineSplitter', () => {
  it('joins a line split across chunks, strips CR, keeps the unterminated tail for end()', () => {
    const s = new LineSplitter(100);
    expect(s.push(Buffer.from('{"a":'))).toEqual([]);
    expect(s.push(Buffer.from('1}\r\n{"b":2}\n{"c"'))).toEqual(['{"a":1}', '{"b":2}']);
    expect(s.push(Buffer.from(':3}'))).toEqual([]);
    expect(s.end()).toBe('{"c":3}');
    expect(s.end()).toBeUndefined();
  });

  it('decodes as Buffer#toString does, whatever the bytes and wherever the chunks split them (invalid UTF-8 included)', () => {
    const rng = new Prng(7);
    const alphabet = [...Buffer.from('a\n\r✓é😀'), 0xff, 0xc3, 0xe2, 0x80, 0xf0];
    for (let round = 0; round < 300; round++) {
      const bytes = Buffer.from(Array.from({ length: 1 + rng.int(60) }, () => alphabet[rng.int(alphabet.length)]!));
      const s = new LineSplitter(1_000);
      const got: string[] = [];
      for (let at = 0; at < bytes.length; ) {
        const next = Math.min(bytes.length, at + 1 + rng.int(8));
        got.push(...s.push(bytes.subarray(at, next)));
        at = next;
      }
      const last = s.end();
      if (last !== undefined) got.push(last);
      // The reference: every line's bytes, whole, then decoded.
      const want: string[] = [];
      let start = 0;
      for (let nl = bytes.indexOf(10); nl !== -1; nl = bytes.indexOf(10, start)) {
        want.push(bytes.subarray(start, nl).toString('utf8').replace(/\r$/, ''));
        start = nl + 1;
      }
      if (start < bytes.length) want.push(bytes.subarray(start).toString('utf8').replace(/\r$/, ''));
      expect(got, bytes.toString('hex')).toEqual(want);
    }
  });

  it('keeps multi-byte characters split between chunks intact', () => {
    const s = new LineSplitter(100);
    const bytes = Buffer.from('héllo ✓\n');
    expect([...s.push(bytes.subarray(0, 2)), ...s.push(bytes.subarray(2, 8)), ...s.push(bytes.subarray(8))]).toEqual(['héllo ✓']);
  });

  it('throws as soon as an unfinished line passes the cap, then recovers', () => {
    const s = new LineSplitter(10);
    expect(() => s.push(Buffer.from('0123456789A'))).toThrow(LineTooLongError);
    expect(s.push(Buffer.from('ok\n'))).toEqual(['ok']);
    expect(s.push(Buffer.from('0123456789\n'))).toEqual(['0123456789']);
  });
});

describe('TailBuffer', () => {
  it('keeps only the newest bytes', () => {
    const t = new TailBuffer(5);
    t.push(Buffer.from('abc'));
    t.push(Buffer.from('defg'));
    expect(t.text()).toBe('cdefg');
    t.push(Buffer.from('0123456789'));
    expect(t.text()).toBe('56789');
  });
});

describe('buildChildEnv', () => {
  it('passes allow-listed and declared variables only, never CLAUDECODE or CLAUDE_CODE_ENTRYPOINT', () => {
    const env = buildChildEnv(
      { PATH: '/bin', HOME: '/root', SECRET_TOKEN: 's3cret', ANTHROPIC_API_KEY: 'daemon-key', CLAUDECODE: '1', CLAUDE_CODE_ENTRYPOINT: 'cli' },
      { allow: ['MISSING_ONE'], set: { ANTHROPIC_API_KEY: 'agent-key', CLAUDECODE: '1', UNSET: undefined } },
    );
    expect(env).toEqual({ PATH: '/bin', HOME: '/root', ANTHROPIC_API_KEY: 'agent-key' });
  });
});

describe('ensureWorkspace', () => {
  it('creates workspaces/<agent>/ on demand and refuses names that are not agent names', async () => {
    const root = await mkdtemp(join(tmpdir(), 'warren-ws-'));
    const { workspace: dir, stateDir } = await ensureWorkspace(join(root, 'workspaces'), 'coder-one');
    expect(dir).toBe(join(root, 'workspaces', 'coder-one'));
    expect(stateDir).toBe(join(root, 'workspaces', '.state', 'coder-one'));
    expect((await stat(dir)).isDirectory()).toBe(true);
    expect((await stat(stateDir)).isDirectory()).toBe(true);
    await ensureWorkspace(join(root, 'workspaces'), 'coder-one'); // twice is fine
    await expect(ensureWorkspace(root, '../etc')).rejects.toThrow(/cannot name a workspace/);
  });
});

describe('supervise', () => {
  it('kills a SIGTERM-ignoring CLI and its grandchildren as a group within grace + 1 s of the deadline', async () => {
    let pids: number[] = [];
    const graceMs = 700;
    const deadlineMs = 1_500;
    const started = Date.now();
    const exit = await supervise(
      opts('forker.js', {
        deadlineMs,
        graceMs,
        onLine: (l) => {
          pids = (JSON.parse(l) as { pids: number[] }).pids;
        },
      }),
    );
    const elapsed = Date.now() - started;
    expect(exit.stoppedBy).toBe('deadline');
    expect(exit.signal).toBe('SIGKILL'); // SIGTERM was ignored; only the SIGKILL ended it
    expect(pids).toHaveLength(3);
    expect(elapsed).toBeLessThan(deadlineMs + graceMs + 1_000);
    // Nothing of the group is left, grandchildren included. (A SIGKILLed grandchild may take a moment on a loaded
    // machine before the kernel has it gone: it gets what is left of the grace + 1 s bound.)
    await expect.poll(() => liveGroupMembers(exit.pid!), { timeout: Math.max(100, deadlineMs + graceMs + 1_000 - elapsed), interval: 20 }).toEqual([]);
    for (const pid of pids) expect(isAlive(pid), `pid ${pid} still alive`).toBe(false);
    expect(runningSubprocessCount()).toBe(0);
  });

  it('fails the run on a 10 MB line, kills the child, and the next run works', async () => {
    const lines: string[] = [];
    const exit = await supervise(opts('long-line.js', { onLine: (l) => lines.push(l) }));
    expect(exit.stoppedBy).toBe('line_too_long');
    expect(exit.detail).toMatch(/exceeded 8388608 bytes/);
    expect(lines).toEqual(['{"type":"before"}']);
    expect(liveGroupMembers(exit.pid!)).toEqual([]);
    const again = await supervise(opts('echo-stdin.js', { stdin: 'still serving' }));
    expect(again.code).toBe(0);
  });

  it('never lets a daemon secret into the child or its grandchild (read from /proc/<pid>/environ)', async () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}`;
    const daemonEnv = { ...process.env, WARREN_CANARY_SECRET: canary, CLAUDECODE: '1' };
    const environs: string[] = [];
    const exit = await supervise(
      opts('env-reporter.js', {
        env: buildChildEnv(daemonEnv, { set: { DECLARED_KEY: 'declared-value' } }),
        deadlineMs: 3_000,
        onLine: (l) => {
          for (const pid of (JSON.parse(l) as { pids: number[] }).pids) environs.push(readFileSync(`/proc/${pid}/environ`, 'utf8'));
        },
      }),
    );
    expect(exit.stoppedBy).toBe('deadline');
    expect(environs).toHaveLength(2);
    for (const env of environs) {
      expect(env).not.toContain(canary);
      expect(env).not.toContain('CLAUDECODE=');
      expect(env.split('\0')).toContain('DECLARED_KEY=declared-value');
    }
  });

  it('writes a long prompt to stdin and closes it; argv stays short; stderr tail kept', async () => {
    const prompt = `${'long prompt '.repeat(20_000)}end`; // 240 kB: over Linux's 128 KiB per-argument cap
    const lines: string[] = [];
    const cwd = await mkdtemp(join(tmpdir(), 'warren-cwd-'));
    const exit = await supervise(opts('echo-stdin.js', { stdin: prompt, args: [join(FAKES, 'echo-stdin.js'), '-p'], cwd, onLine: (l) => lines.push(l) }));
    expect(exit.code).toBe(0);
    expect(exit.stoppedBy).toBeUndefined();
    const seen = JSON.parse(lines[0] ?? '{}') as { stdin: string; argv: string[]; cwd: string };
    expect(seen.stdin).toBe(prompt);
    expect(seen.argv).toEqual(['-p']);
    expect(seen.cwd).toBe(cwd);
    expect(exit.stderrTail).toBe('done\n');
  });

  it('stops a silent CLI by the idle watchdog, and an aborted one by the signal', async () => {
    const idle = await supervise(opts('silent.js', { idleMs: 400 }));
    expect(idle.stoppedBy).toBe('idle');
    expect(idle.signal).toBe('SIGTERM');
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('shutdown')), 300);
    const aborted = await supervise(opts('silent.js', { signal: ac.signal }));
    expect(aborted.stoppedBy).toBe('aborted');
    expect(aborted.detail).toMatch(/shutdown/);
    expect(liveGroupMembers(aborted.pid!)).toEqual([]);
  });

  it('reports a missing binary as a spawn error', async () => {
    const exit = await supervise(opts('x', { command: '/nonexistent/claude', args: [] }));
    expect(exit.spawnError).toMatch(/ENOENT/);
    expect(exit.pid).toBeUndefined();
  });
});
