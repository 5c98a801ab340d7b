// `warren doctor`: CLI presence and versions against the verified ones, agents that would be skipped and
// why, Redis and hub reachability. Real subprocesses (`--version` of the pinned CLIs and of fakes).
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { WarrenConfigSchema } from '../services/config.ts';
import { formatCheck, runDoctor } from '../daemon/commands/doctor.ts';
import { judgeVersion, parseVersion } from '../executors/cli/versions.ts';
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

describe('warren doctor', () => {
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
