// `warren doctor`: CLI presence and versions against the verified ones, agents that would be skipped and
// why, Redis and hub reachability. Real subprocesses (`--version` of the pinned CLIs and of fakes): each a Node
// process start, so the process tests' ceiling (one took 25 s of a 30 s default on a loaded machine).
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { WarrenConfigSchema } from '../services/config.ts';
import { formatCheck, runDoctor } from '../daemon/commands/doctor.ts';
import { judgeVersion, parseVersion } from '../executors/cli/versions.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';
import { freePort } from './support/free-port.ts';
import { FAKE_CLIS } from './support/cli-agent.ts';

describe('CLI versions', () => {
  it('parses --version outputs and judges them against the verified versions', () => {
    expect(parseVersion('2.1.330 (Claude Code)')).toBe('2.1.330');
    expect(parseVersion('aider 0.86.1')).toBe('0.86.1');
    expect(parseVersion('no digits')).toBeUndefined();
    expect(judgeVersion('claude-code', '2.1.330').status).toBe('match');
    expect(judgeVersion('opencode', '1.19.0')).toMatchObject({ status: 'differs', detail: expect.stringContaining('verified version is 1.18.33') as unknown });
    expect(judgeVersion('goose', '1.9.0').status).toBe('unverified');
  });
});

describe('warren doctor', { timeout: PROCESS_TEST_MS }, () => {
  it('reports installed CLIs with versions, missing ones, skipped agents with reasons, Redis ok and an unreachable hub as a failure', async () => {
    const deadPort = await freePort();
    const config = WarrenConfigSchema.parse({
      hub: { url: `http://127.0.0.1:${deadPort}`, embedded: false },
      redis: { url: inject('redisUrl') },
      store: { path: join(import.meta.dirname, '..', 'examples') },
      executors: { cli: { binaries: { goose: join(FAKE_CLIS, 'goose.js'), aider: '/nonexistent/aider' } } },
    });
    const checks = await runDoctor(config, { PATH: process.env.PATH });
    const by = (area: string) => checks.find((c) => c.area === area);
    expect(by('claude-code')).toMatchObject({ status: 'ok', message: expect.stringContaining('2.1.330 (known good)') as unknown });
    expect(by('opencode')).toMatchObject({ status: 'ok', message: expect.stringContaining('1.18.33 (known good)') as unknown });
    expect(by('goose')).toMatchObject({ status: 'ok', message: expect.stringContaining('1.9.0 (warren knows this CLI from its source') as unknown });
    expect(by('aider')).toMatchObject({ status: 'warn', message: 'not installed (agents of this type are skipped)' });
    expect(by('agent greeter')).toMatchObject({ status: 'ok' });
    expect(by('agent ci-helper')).toMatchObject({ status: 'warn', message: 'skipped: its key variable OPENAI_API_KEY (brain.api_key_env) is not set' });
    expect(by('redis')?.status).toBe('ok');
    expect(by('hub')).toMatchObject({ status: 'fail', message: expect.stringContaining(`cannot reach http://127.0.0.1:${deadPort}`) as unknown });
    if (process.getuid?.() === 0) expect(by('root')?.message).toMatch(/refuses --dangerously-skip-permissions/);
    expect(formatCheck({ status: 'ok', area: 'redis', message: 'fine' })).toBe('ok   redis: fine');
  });
});

describe('warren doctor and a Redis that answers without credentials', { timeout: PROCESS_TEST_MS }, () => {
  it.runIf(process.getuid?.() === 0)('says, as warren start decides, that CLI agents would not start beside it, and the opt-out turns that into a warning', async () => {
    const config = (allow: boolean) => WarrenConfigSchema.parse({
      hub: { url: 'http://127.0.0.1:9', embedded: false },
      redis: { url: inject('redisUrl'), allow_unauthenticated: allow },
      store: { path: join(import.meta.dirname, '..', 'examples') },
    });
    // The suite's private Redis takes no password; the examples define CLI agents.
    const open = (await runDoctor(config(false), { PATH: process.env.PATH })).find((c) => c.area === 'redis exposure');
    expect(open).toMatchObject({ status: 'fail', message: expect.stringMatching(/answers without credentials[\s\S]*requirepass[\s\S]*CLI agents are not started/) as unknown });
    const allowed = (await runDoctor(config(true), { PATH: process.env.PATH })).find((c) => c.area === 'redis exposure');
    expect(allowed).toMatchObject({ status: 'warn', message: expect.stringContaining('redis.allow_unauthenticated is set') as unknown });
  });
});

describe('warren doctor and the ports warren start listens on', { timeout: PROCESS_TEST_MS }, () => {
  it('fails (exit 1, not "all required checks passed") when the hub port is taken, naming the setting; passes the ports check when free', async () => {
    const holder = createServer();
    await new Promise<void>((res) => holder.listen({ host: '127.0.0.1', port: 0 }, res));
    const taken = (holder.address() as AddressInfo).port;
    const dir = mkdtempSync(join(tmpdir(), 'warren-doctor-'));
    const yaml = (port: number): string => {
      const file = join(dir, `warren-${port}.yaml`);
      writeFileSync(file, `hub: {embedded: true, port: ${port}, db: ":memory:"}\nredis: {url: "${inject('redisUrl')}"}\nstore: {path: "${resolve('examples')}"}\nmetrics: {port: 0}\n`);
      return file;
    };
    const doctor = async (file: string): Promise<{ code: number; stdout: string }> => {
      try {
        return { code: 0, stdout: (await promisify(execFile)(process.execPath, [resolve('bin/warren.js'), 'doctor', '--config', file], { env: { ...process.env, WARREN_HUB_PORT: '', WARREN_METRICS_PORT: '', WARREN_HUB_EMBEDDED: '', WARREN_STORE: '' } })).stdout };
      } catch (err) {
        const e = err as { code: number; stdout: string };
        return { code: e.code, stdout: e.stdout };
      }
    };
    try {
      const clash = await doctor(yaml(taken));
      expect(clash.stdout).toMatch(new RegExp(`^fail ports: port ${taken} on 127\\.0\\.0\\.1 is already in use \\(the embedded hub: hub\\.port in warren\\.yaml or WARREN_HUB_PORT`, 'm'));
      expect(clash.stdout).not.toMatch(/all required checks passed/);
      expect(clash.code).toBe(1);
    } finally {
      await new Promise((res) => holder.close(res));
    }
    const free = await doctor(yaml(await freePort()));
    expect(free.stdout).toMatch(/^ok {3}ports: free: 127\.0\.0\.1:\d+ \(the embedded hub\)$/m);
  });
});
