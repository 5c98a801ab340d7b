// The `warren` command as a user runs it: a real subprocess on the pinned Node.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { freePort } from './support/free-port.ts';
import { hubCaller, waitFor, type WirePost } from './support/hub-api.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';

const redisUrl = inject('redisUrl');
const WARREN = resolve('bin/warren.js');

function warren(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [WARREN, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('warren CLI', () => {
  it('lists its commands', () => {
    const r = warren(['--help']);
    expect(r.status).toBe(0);
    for (const cmd of ['start', 'hub', 'validate', 'reload']) expect(r.stdout).toContain(cmd);
  });

  it('validate exits 0 on the examples and 1 with file:line on a broken folder', () => {
    const ok = warren(['validate', 'examples/agents']);
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(/6 agents valid/);
    const dir = makeAgentsDir({ broken: { config: 'name: broken\ntype: llm\nbrain:\n  model: m\n  max_tokens: 5\ncapabilities: {}\n', prompt: 'x' } });
    const bad = warren(['validate', dir]);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/broken\/config\.yaml:5:15: brain\.max_tokens: /);
    expect(bad.stdout).toMatch(/1 agent valid, 1 problem/);
  });

  it('the scripted greeter costs nothing: no tokens and $0 unless its replies give usage', () => {
    const r = warren(['run', 'greeter', '--prompt', 'hello there, greeter', '--agents', 'examples/agents', '--json'], { WARREN_HUB_ADMIN_KEY: '' });
    expect(r.status, r.stderr).toBe(0);
    const rec = JSON.parse(r.stdout) as { text: string; usage: { input_tokens: number; output_tokens: number; cost_usd: number } };
    expect(rec.text).toContain('greeter');
    expect(rec.usage).toMatchObject({ input_tokens: 0, output_tokens: 0, cost_usd: 0 });
  });

  it('reports a bad warren.yaml as file:line, not a stack trace', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-cfg-'));
    writeFileSync(join(dir, 'warren.yaml'), 'hub:\n  embeded: true\n');
    const r = warren(['start', '--config', join(dir, 'warren.yaml')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/warren\.yaml:2:3: hub\.embeded: unknown key "embeded"/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('start runs the embedded hub and the example greeter; a mention is answered; SIGINT exits 0', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'warren-start-'));
    writeFileSync(
      join(dir, 'warren.yaml'),
      `hub: {embedded: true, db: ":memory:"}\nredis: {prefix: warren-cli-${port}}\nstore: {path: ${resolve('examples')}}\nscheduler: {poll_interval: 100ms}\n`,
    );
    const admin = 'cli-test-admin-key';
    const child = spawn(process.execPath, [WARREN, 'start', '--config', join(dir, 'warren.yaml')], {
      env: { ...process.env, REDIS_URL: redisUrl, WARREN_HUB_PORT: String(port), WARREN_HUB_ADMIN_KEY: admin, OPENAI_API_KEY: '', WARREN_METRICS_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await waitFor('warren is running', () => (out.includes('warren is running') ? true : undefined), 15_000);
      expect(out).toMatch(/agent ci-helper skipped: its key variable OPENAI_API_KEY/);
      // CLI examples without their CLI are skipped with the reason (goose is not installed in CI).
      expect(out).toMatch(/agent goose-example skipped: the goose CLI \(goose\) is not installed here/);
      const api = hubCaller(`http://127.0.0.1:${port}`);
      const me = await api.post<{ api_key: string }>('/agents/register', admin, { name: 'alice', type: 'human' });
      const started = Date.now();
      const post = await api.post<{ id: string }>('/posts', me.api_key, { content: '@greeter hello' });
      await waitFor('greeter reply', async () => {
        const p = await api.get<WirePost>(`/posts/${post.id}?include_comments=true`, me.api_key);
        return p.comments?.some((c) => c.author.name === 'greeter') ? true : undefined;
      }, 2_000);
      expect(Date.now() - started).toBeLessThan(2_000);

      // SIGHUP reloads the definitions in place; the process keeps running.
      const loads = (): number => out.split('agent definitions loaded').length - 1;
      const before = loads();
      child.kill('SIGHUP');
      await waitFor('reload on SIGHUP', () => (loads() > before ? true : undefined), 5_000);
      expect(out).toContain('SIGHUP: reloading agent definitions');
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(out).not.toMatch(/\n\s+at /);
    // A key the user chose is never echoed into the logs (only a generated one is printed, once).
    expect(out).not.toContain(admin);
  });
});
