// `npm pack` makes a package that works once installed: no tests or fixtures in it, not private, and `npx warren`
// runs from node_modules (where Node will not strip types by itself) in an empty folder: `init`, then `validate`.
// The tarball is unpacked the way npm installs it (node_modules/warren plus its bin link); its dependencies are
// this checkout's, linked, so the test needs no registry.
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from './support/free-port.ts';
import { waitFor } from './support/hub-api.ts';

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
