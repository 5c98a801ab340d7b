// `npm pack` makes a package that works once installed: no tests or fixtures in it, not private, and `npx warren`
// runs from node_modules (where Node will not strip types by itself) in an empty folder: `init`, then `validate`.
// The tarball is unpacked the way npm installs it (node_modules/warren plus its bin link); its dependencies are
// this checkout's, linked, so the test needs no registry.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from './support/free-port.ts';
import { waitFor } from './support/hub-api.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const exec = promisify(execFile);

describe('the npm package', () => {
  it('packs only what runs, and `npx warren init` then `validate` work from the installed tarball', { timeout: 120_000 }, async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'warren-pack-'));
    const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: resolve('.') });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const paths = packed!.files.map((f) => f.path);
    expect(paths).toContain('bin/warren.js');
    expect(paths).toContain('daemon/cli.ts');
    expect(paths).toContain('examples/agents/greeter/config.yaml');
    expect(paths.filter((p) => /^(test|bench|docs|vendor|data|workspaces|node_modules)\/|\.test\.ts$|fixtures\//.test(p))).toEqual([]);
    expect(paths).not.toContain('local-hub/testing.ts'); // helpers for tests, not for an installed hub
    for (const folder of ['redis/lua/', 'services/', 'activation/']) expect(paths.some((p) => p.startsWith(folder))).toBe(true);

    // npm's layout of an installed package: <project>/node_modules/warren and <project>/node_modules/.bin/warren.
    const project = join(tmp, 'project');
    const modules = join(project, 'node_modules');
    mkdirSync(join(modules, '.bin'), { recursive: true });
    await exec('tar', ['xzf', join(tmp, packed!.filename), '-C', modules]);
    await exec('mv', [join(modules, 'package'), join(modules, 'warren')]);
    symlinkSync(resolve('node_modules'), join(modules, 'warren', 'node_modules'));
    symlinkSync('../warren/bin/warren.js', join(modules, '.bin', 'warren'));
    const manifest = JSON.parse(readFileSync(join(modules, 'warren', 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    expect(manifest.bin).toEqual({ warren: 'bin/warren.js' });

    // This test's Node (24) first on PATH: the bin's shebang picks it, as on a machine with a current Node.
    const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`, WARREN_STORE: '' };
    const init = await exec('npx', ['warren', 'init'], { cwd: project, env });
    expect(init.stdout).toMatch(/created warren.yaml\ncreated definitions\/agents\/greeter/);
    const validate = await exec('npx', ['warren', 'validate'], { cwd: project, env });
    expect(validate.stdout).toBe('1 agent valid in definitions/agents\n');
    // Type stripping is experimental in Node; an installed warren does not say so on every command.
    expect(init.stderr + validate.stderr).not.toMatch(/ExperimentalWarning/);

    // The installed hub serves its API and the watch page's script (TypeScript the hub strips for the browser).
    const port = await freePort();
    const hub = spawn(join(modules, '.bin', 'warren'), ['hub', '--db', ':memory:', '--port', String(port)], { cwd: project, env: { ...env, WARREN_HUB_PORT: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let out = '';
      hub.stdout.on('data', (d: Buffer) => (out += d.toString()));
      hub.stderr.on('data', (d: Buffer) => (out += d.toString()));
      await waitFor('the installed hub', () => (out.includes('hub listening') ? true : undefined), 30_000);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      const script = await fetch(`http://127.0.0.1:${port}/watch/app.js`);
      expect(script.status).toBe(200);
      expect(await script.text()).not.toMatch(/: (string|number|boolean)\b[,)]/);
    } finally {
      hub.kill('SIGTERM');
    }
  });
});

/** `>=22.15.0` → [22, 15, 0]; ranges of another shape (`^16`, `>= 4 || …`) give their first `>=` bound or nothing. */
function lowerBound(range: string): number[] | undefined {
  const m = />=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(range);
  return m ? [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)] : undefined;
}
function newer(a: number[], b: number[]): boolean {
  const i = a.findIndex((n, k) => n !== b[k]);
  return i >= 0 && a[i]! > b[i]!;
}

describe('the Node warren needs', { timeout: PROCESS_TEST_MS }, () => {
  it('engines.node is at least what every production dependency asks for', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
    const ours = lowerBound(pkg.engines.node)!;
    const { stdout } = await exec('npm', ['ls', '--omit=dev', '--all', '--parseable'], { maxBuffer: 16 * 1024 * 1024 });
    const needs = stdout.split('\n').slice(1).filter(Boolean).flatMap((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string; engines?: { node?: string } };
      const bound = manifest.engines?.node ? lowerBound(manifest.engines.node) : undefined;
      return bound ? [{ name: manifest.name, bound }] : [];
    });
    expect(needs.length).toBeGreaterThan(10);
    expect(needs.filter((n) => newer(n.bound, ours)).map((n) => `${n.name} ${n.bound.join('.')}`)).toEqual([]);
  });

  // Where the system's Node is older than the pinned one, npm itself runs on it and used to warn EBADENGINE.
  const oldNode = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => {
    if (!existsSync(p)) return false;
    const [major, minor] = execFileSync(p, ['--version'], { encoding: 'utf8' }).trim().slice(1).split('.').map(Number);
    return major! < 22 || (major === 22 && minor! < 15);
  });
  it.skipIf(!oldNode)('`npx warren` in the checkout on an older system Node prints no EBADENGINE warning, even the first time', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'warren-npx-cache-')); // a first run: npx links the checkout into its cache
    const env = { ...process.env, PATH: `${dirname(oldNode!)}${delimiter}${process.env.PATH ?? ''}`, npm_config_cache: cache };
    const { stdout, stderr } = await exec('npx', ['warren', '--help'], { cwd: resolve('.'), env });
    expect(stdout).toMatch(/^Usage: warren/);
    expect(stderr).not.toMatch(/EBADENGINE/);
  });
});
