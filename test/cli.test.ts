// The `warren` command as a user runs it: a real subprocess on the pinned Node.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { freePort } from './support/free-port.ts';
import { hubCaller, waitFor, type WirePost } from './support/hub-api.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { startHub } from '../local-hub/server.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';

const redisUrl = inject('redisUrl');
const WARREN = resolve('bin/warren.js');

function warren(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [WARREN, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: PROCESS_START_MS });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('warren CLI', () => {
  it('lists its commands', () => {
    const r = warren(['--help']);
    expect(r.status).toBe(0);
    for (const cmd of ['start', 'hub', 'validate', 'reload']) expect(r.stdout).toContain(cmd);
  });

  it('--version prints the package version alone', () => {
    const r = warren(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${(JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version}\n`);
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

  it('a YAML syntax error in warren.yaml is reported at the line that holds the mistake', () => {
    // `port` is one space deeper than `db`, which already has a value (the parser's own report is at 5:1, "All mapping items …").
    const deeper = warren(['start', '--config', configFile('hub:\n  embedded: true\n  host: 127.0.0.1\n  db: ":memory:"\n   port: 0\n')]);
    expect(deeper.status).toBe(1);
    expect(deeper.stderr.trim()).toMatch(/warren\.yaml:5:4: YAML syntax: "port" is indented deeper than the line above, which already has a value/);
    const quote = warren(['validate', '--config', configFile('hub:\n  url: "http://127.0.0.1:7070\nredis:\n  prefix: x\n')]);
    expect(quote.status).toBe(1);
    expect(quote.stderr.trim()).toMatch(/warren\.yaml:2:8: YAML syntax: this quoted value is never closed/);
    expect(deeper.stderr + quote.stderr).not.toMatch(noStack);
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

  it('start runs the embedded hub and the example greeter; a mention is answered; SIGINT exits 0', { timeout: PROCESS_TEST_MS }, async () => {
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
      await waitFor('warren is running', () => (out.includes('warren is running') ? true : undefined), PROCESS_START_MS);
      expect(out).toMatch(/agent ci-helper skipped: its key variable OPENAI_API_KEY/);
      // CLI examples without their CLI are skipped with the reason (goose is not installed in CI).
      expect(out).toMatch(/agent goose-example skipped: the goose CLI \(goose\) is not installed here/);
      const api = hubCaller(`http://127.0.0.1:${port}`);
      const me = await api.post<{ api_key: string }>('/agents/register', admin, { name: 'alice', type: 'human' });
      // How soon greeter answers is bench/latency.ts's figure; a 2 s bound here measured the machine's load.
      const post = await api.post<{ id: string }>('/posts', me.api_key, { content: '@greeter hello' });
      await waitFor('greeter reply', async () => {
        const p = await api.get<WirePost>(`/posts/${post.id}?include_comments=true`, me.api_key);
        return p.comments?.some((c) => c.author.name === 'greeter') ? true : undefined;
      }, 30_000);

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

/** A warren.yaml in a fresh folder; returns its path. */
function configFile(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'warren-errors-'));
  writeFileSync(join(dir, 'warren.yaml'), text);
  return join(dir, 'warren.yaml');
}

/** Holds a TCP port on 127.0.0.1 the way another program would. */
async function occupy(): Promise<{ port: number; close: () => Promise<void> }> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { port: (srv.address() as AddressInfo).port, close: () => new Promise((r) => srv.close(() => r())) };
}

const noStack = /\n\s+at |Reached the max retries|Unhandled error event/;

describe('errors that say what to do', { timeout: PROCESS_TEST_MS }, () => {
  it('a metrics port in use is named with its setting and variable before the hub starts or leadership is taken', async () => {
    const held = await occupy();
    try {
      const hubPort = await freePort();
      const file = configFile(`hub: {embedded: true, db: ":memory:"}\nredis: {prefix: warren-clash-${hubPort}}\nstore: {path: ${resolve('examples')}}\n`);
      const r = warren(['start', '--config', file], { REDIS_URL: redisUrl, WARREN_HUB_PORT: String(hubPort), WARREN_METRICS_PORT: String(held.port), WARREN_HUB_ADMIN_KEY: 'k' });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`port ${held.port} on 127.0.0.1 is already in use`);
      expect(r.stderr).toMatch(/metrics\.port in warren\.yaml or WARREN_METRICS_PORT/);
      expect(r.stdout + r.stderr).not.toMatch(/embedded hub listening|scheduler leadership acquired|redis connected/);
      expect(r.stderr).not.toMatch(noStack);
    } finally {
      await held.close();
    }
  });

  it('a hub port in use is named with its setting and variable (start and hub)', async () => {
    const held = await occupy();
    try {
      const file = configFile(`hub: {embedded: true, db: ":memory:", port: ${held.port}}\nmetrics: {port: 0}\n`);
      const start = warren(['start', '--config', file], { REDIS_URL: redisUrl, WARREN_HUB_ADMIN_KEY: 'k', WARREN_HUB_PORT: '' });
      expect(start.status).toBe(1);
      expect(start.stderr).toMatch(new RegExp(`port ${held.port} on 127\\.0\\.0\\.1 is already in use \\(the embedded hub: hub\\.port in warren\\.yaml or WARREN_HUB_PORT`));
      expect(start.stdout).not.toMatch(/embedded hub listening|redis connected/);
      const hub = warren(['hub', '--config', file, '--db', ':memory:'], { WARREN_HUB_PORT: '' });
      expect(hub.status).toBe(1);
      expect(hub.stderr).toMatch(/is already in use \(the hub: --port, hub\.port in warren\.yaml or WARREN_HUB_PORT/);
      expect(hub.stderr).not.toMatch(noStack);
    } finally {
      await held.close();
    }
  });

  it('Redis unreachable at start says so with the URL and how to start one, before the hub starts', async () => {
    const dead = `redis://127.0.0.1:${await freePort()}`;
    const file = configFile(`hub: {embedded: true, db: ":memory:", port: 0}\nmetrics: {port: 0}\nstore: {path: ${resolve('examples')}}\n`);
    const r = warren(['start', '--config', file], { REDIS_URL: dead, WARREN_HUB_ADMIN_KEY: 'k', WARREN_HUB_PORT: '' });
    expect(r.status).toBe(1);
    const last = r.stderr.trim().split('\n').at(-1)!;
    expect(last).toContain(`cannot reach Redis at ${dead}`);
    expect(last).toMatch(/redis-server|docker run/);
    expect(last).toMatch(/REDIS_URL/);
    expect(r.stdout + r.stderr).not.toMatch(noStack);
    expect(r.stdout).not.toMatch(/embedded hub listening/);
  });

  it('status and reload with Redis down say Redis is down, in one line, without a stack', async () => {
    const dead = `redis://127.0.0.1:${await freePort()}`;
    const file = configFile(`hub: {url: "http://127.0.0.1:${await freePort()}"}\nredis: {url: "${dead}"}\nstore: {path: ${resolve('examples')}}\n`);
    const status = warren(['status', '--config', file], { REDIS_URL: '' });
    expect(status.status).toBe(1);
    expect(status.stdout).not.toContain('no agents defined');
    expect(status.stdout).toMatch(/redis is down: the state of the 6 defined agents is unknown/);
    expect(status.stdout + status.stderr).not.toMatch(noStack);
    const reload = warren(['reload', '--config', file], { REDIS_URL: '' });
    expect(reload.status).toBe(1);
    expect(reload.stderr.trim().split('\n')).toHaveLength(1);
    expect(reload.stderr).toContain(`cannot reach Redis at ${dead}`);
    expect(reload.stdout + reload.stderr).not.toMatch(noStack);
  });

  it('a second hub on the same database refuses with a clear line; the lock goes with the hub, a dead one is taken over', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-lock-'));
    const db = join(dir, 'hub.sqlite');
    const first = await startHub({ dbPath: db, port: 0 });
    try {
      expect(existsSync(`${db}.lock`)).toBe(true);
      const second = warren(['hub', '--db', db, '--port', '0']);
      expect(second.status).toBe(1);
      expect(second.stderr).toContain(`${db} is in use by another hub (pid ${process.pid}`);
      expect(second.stderr).not.toMatch(noStack);
    } finally {
      await first.close();
    }
    expect(existsSync(`${db}.lock`)).toBe(false);
    // A hub killed without its shutdown leaves its lock behind: the next one takes it over.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(`${db}.lock`, JSON.stringify({ pid: Number(gone.stdout), host: hostname() }));
    const again = await startHub({ dbPath: db, port: 0 });
    expect(JSON.parse(readFileSync(`${db}.lock`, 'utf8'))).toMatchObject({ pid: process.pid });
    await again.close();
  });

  it('start warns loudly, naming the skipped agents and why, when no agent is runnable', { timeout: PROCESS_TEST_MS }, async () => {
    const agents = makeAgentsDir(
      { keyless: { config: 'name: keyless\ntype: llm\nbrain:\n  provider: openai\n  model: gpt-4o-mini\n  api_key_env: KEYLESS_API_KEY\ncapabilities: {}\n', prompt: 'x' } },
      { withGreeter: false },
    );
    const port = await freePort();
    const file = configFile(`hub: {embedded: true, db: ":memory:"}\nredis: {prefix: warren-none-${port}}\nstore: {path: ${join(agents, '..')}}\nmetrics: {port: 0}\n`);
    const child = spawn(process.execPath, [WARREN, 'start', '--config', file], {
      env: { ...process.env, REDIS_URL: redisUrl, WARREN_HUB_PORT: String(port), WARREN_HUB_ADMIN_KEY: 'k', KEYLESS_API_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await waitFor('warren is running', () => (out.includes('warren is running') ? true : undefined), PROCESS_START_MS);
      const running = out.split('\n').find((l) => l.includes('warren is running'))!;
      const line = JSON.parse(running) as { level: number; msg: string };
      expect(line.level).toBe(40);
      expect(line.msg).toMatch(/no agent is runnable: keyless \(its key variable KEYLESS_API_KEY \(brain\.api_key_env\) is not set\)$/);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});
