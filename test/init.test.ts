// `warren init` and `warren init agent <name>` through the real command line: what they write validates.
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const WARREN = resolve('bin/warren.js');
const exec = promisify(execFile);

async function warren(cwd: string, ...args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [WARREN, ...args], { cwd, env: { ...process.env, WARREN_STORE: '' } });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

describe('warren init', { timeout: PROCESS_TEST_MS }, () => {
  it('creates warren.yaml and an example agent in an empty folder, which validate accepts; a second run keeps them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-init-'));
    const first = await warren(dir, 'init');
    expect(first).toMatchObject({ code: 0 });
    expect(first.out).toMatch(/created warren.yaml/);
    expect(readFileSync(join(dir, 'warren.yaml'), 'utf8')).toMatch(/path: \.\/definitions/);
    expect(existsSync(join(dir, 'definitions/agents/greeter/system-prompt.md'))).toBe(true);
    expect(await warren(dir, 'validate')).toEqual({ code: 0, out: '1 agent valid in definitions/agents\n' });
    expect((await warren(dir, 'init')).out).toMatch(/warren.yaml exists: left as it is/);
  });

  it('`init agent <name>` scaffolds a folder in the store that validates; a taken or bad name is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-init-'));
    await warren(dir, 'init');
    const made = await warren(dir, 'init', 'agent', 'scout');
    expect(made).toMatchObject({ code: 0 });
    expect(made.out).toMatch(/created definitions\/agents\/scout/);
    expect(readFileSync(join(dir, 'definitions/agents/scout/config.yaml'), 'utf8')).toMatch(/^name: scout/m);
    expect(await warren(dir, 'validate')).toEqual({ code: 0, out: '2 agents valid in definitions/agents\n' });
    expect(await warren(dir, 'init', 'agent', 'scout')).toEqual({ code: 1, out: 'warren: definitions/agents/scout exists already: choose another name\n' });
    expect((await warren(dir, 'init', 'agent', 'Bad_Name')).out).toMatch(/"Bad_Name" is not an agent name/);
  });
});

/** A git repository holding this checkout's files as they are now (tracked and not ignored), node_modules linked. */
async function checkoutCopy(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-checkout-'));
  const { stdout } = await exec('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { maxBuffer: 16 * 1024 * 1024 });
  for (const file of stdout.split('\0').filter((f) => f && existsSync(f))) cpSync(file, join(dir, file), { recursive: false, force: true });
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  const git = (...args: string[]) => exec('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-qm', 'checkout');
  return dir;
}

describe('`warren init agent` in the repository (README: Your first agent)', () => {
  it('writes to ./definitions, which git ignores and npm pack leaves out; validate, agents and run see the new agent beside the examples', { timeout: 120_000 }, async () => {
    const repo = await checkoutCopy();
    const env = { ...process.env, WARREN_STORE: '', WARREN_HUB_ADMIN_KEY: '', REDIS_URL: inject('redisUrl') };
    const inRepo = (cmd: string, args: string[]) => exec(cmd, args, { cwd: repo, env, maxBuffer: 16 * 1024 * 1024 });
    const COPY = join(repo, 'bin/warren.js');
    const packed = async (): Promise<string[]> => (JSON.parse((await inRepo('npm', ['pack', '--dry-run', '--json'])).stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path).sort();
    const status = async (): Promise<string> => (await inRepo('git', ['status', '--porcelain', '--untracked-files=all'])).stdout;
    const [statusBefore, packBefore] = [await status(), await packed()];
    expect(statusBefore).toBe('');
    expect((await inRepo(process.execPath, [COPY, 'validate'])).stdout).toBe('6 agents valid in examples/agents and definitions/agents\n');

    const made = await inRepo(process.execPath, [COPY, 'init', 'agent', 'foo']);
    expect(made.stdout).toMatch(/^created definitions\/agents\/foo: /);
    expect(existsSync(join(repo, 'definitions/agents/foo/config.yaml'))).toBe(true);
    expect(existsSync(join(repo, 'examples/agents/foo'))).toBe(false);
    expect(await status()).toBe(statusBefore);
    expect(await packed()).toEqual(packBefore);

    expect((await inRepo(process.execPath, [COPY, 'validate'])).stdout).toBe('7 agents valid in examples/agents and definitions/agents\n');
    const listed = JSON.parse((await inRepo(process.execPath, [COPY, 'agents', '--json'])).stdout) as Array<{ name: string }>;
    expect(listed.map((a) => a.name)).toEqual(expect.arrayContaining(['foo', 'greeter']));
    const ran = JSON.parse((await inRepo(process.execPath, [COPY, 'run', 'foo', '--prompt', 'hi', '--json'])).stdout) as { text: string };
    expect(ran.text).toBe('Hello from foo!');
    // The new agent's schema link points at the repository's schema.
    expect(readFileSync(join(repo, 'definitions/agents/foo/config.yaml'), 'utf8')).toMatch(/\$schema=\.\.\/\.\.\/\.\.\/schemas\/agent-config\.schema\.json/);
  });

  it('an agent name defined twice across store.path and store.include is an error on the later file; the first is kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-init-'));
    await warren(dir, 'init');
    await warren(dir, 'init', 'other');
    cpSync(join(dir, 'definitions'), join(dir, 'other', 'definitions'), { recursive: true });
    writeFileSync(join(dir, 'warren.yaml'), readFileSync(join(dir, 'warren.yaml'), 'utf8').replace('path: ./definitions', 'path: ./definitions\n  include: [./other/definitions]'));
    const r = await warren(dir, 'validate');
    expect(r.code).toBe(1);
    expect(r.out).toContain('definitions/agents/greeter/config.yaml: name: agent "greeter" is defined in');
    expect(r.out).toContain('1 agent valid, 1 problem in other/definitions/agents and definitions/agents\n');
  });
});
