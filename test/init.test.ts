// `warren init` and `warren init agent <name>` through the real command line: what they write validates.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

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

describe('warren init', () => {
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
