// openServices (services/composition.ts): what each role opens, and that the bundle closes it. A private Redis, a
// real embedded hub on port 0, an in-memory hub database; no daemon around it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';
import { describe, expect, inject, it, vi } from 'vitest';
import { openServices } from '../services/composition.ts';
import { WarrenConfigSchema } from '../services/config.ts';
import { RedisUnreachableError } from '../redis/connect.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { REDACTED } from '../services/redact.ts';
import type { FleetSource } from '../local-hub/watch/fleet.ts';

const redisUrl = inject('redisUrl');
const silent = pino({ level: 'silent' });
const workspaces = (): string => mkdtempSync(join(tmpdir(), 'warren-open-services-'));

describe('openServices', () => {
  it('ops: nothing is opened until asked; Redis once, checked, and closed with the bundle', async () => {
    const config = WarrenConfigSchema.parse({ redis: { url: redisUrl, prefix: 'open-services-ops' }, store: { path: resolve('examples') } });
    const services = await openServices(config, {}, { name: 'ops' });
    expect(services.closers).toEqual([]);
    expect(services.budgetHub).toBeUndefined(); // no admin key
    const redis = await services.redis();
    expect(await services.redis()).toBe(redis);
    expect((await services.agentState()).constructor.name).toBe('AgentStateStore');
    expect((await services.definitions()).agents.map((a) => a.name)).toContain('greeter');
    expect(services.closers.map((c) => c.name)).toEqual(['redis connection']);
    await services.close();
    await vi.waitFor(() => expect(redis.status).toBe('end'));
  });

  it('ops: a Redis that does not answer is a RedisUnreachableError, and asked again next time', async () => {
    const config = WarrenConfigSchema.parse({ redis: { url: 'redis://127.0.0.1:1', prefix: 'open-services-down' } });
    const services = await openServices(config, {}, { name: 'ops' });
    await expect(services.redis(500)).rejects.toBeInstanceOf(RedisUnreachableError);
    await expect(services.redis(500)).rejects.toBeInstanceOf(RedisUnreachableError);
    expect(services.closers).toEqual([]);
    await services.close();
  });

  it('doctor: the executors as the daemon builds them, the CLIs listed for their version checks', async () => {
    const config = WarrenConfigSchema.parse({ executors: { cli: { workspaces: workspaces() } } });
    const services = await openServices(config, { PATH: process.env.PATH }, { name: 'doctor' });
    try {
      expect(services.executors.cli.map((e) => e.type)).toEqual(['claude-code', 'goose', 'aider', 'opencode']);
      const { agents } = await new LocalFolderStore(resolve('examples')).load();
      const ci = agents.find((a) => a.name === 'ci-helper')!;
      expect(services.executors.resolve(ci)).toEqual({ unavailable: 'its key variable OPENAI_API_KEY (brain.api_key_env) is not set' });
    } finally {
      await services.close();
    }
  });

  it('run without --post: no write allowance, no hub without an admin key; the agents\' secrets redacted', async () => {
    const { agents } = await new LocalFolderStore(resolve('examples')).load();
    const config = WarrenConfigSchema.parse({ redis: { url: redisUrl }, executors: { cli: { workspaces: workspaces() } }, memory: { store: join(workspaces(), 'memory.sqlite') } });
    const env = { PATH: process.env.PATH, OPENAI_API_KEY: 'sk-open-services-secret-0123456789' };
    const services = await openServices(config, env, { name: 'run', logger: silent, agents, post: false, llm: { stream: false }, onWarning: () => undefined });
    try {
      expect(services.writes).toBeUndefined();
      expect(services.hub).toBeUndefined();
      expect(services.memory.readOnly).toBe(true);
      expect(services.redactor.redact('key sk-open-services-secret-0123456789 here')).toBe(`key ${REDACTED} here`);
      expect(services.closers.map((c) => c.name)).toEqual(['memory store']);
    } finally {
      await services.close();
    }
  });

  it('run with --post needs Redis for the write limits, and leaves nothing open when it is not there', async () => {
    const config = WarrenConfigSchema.parse({ redis: { url: 'redis://127.0.0.1:1' }, executors: { cli: { workspaces: workspaces() } } });
    await expect(openServices(config, {}, { name: 'run', logger: silent, agents: [], post: true, llm: { stream: false }, onWarning: () => undefined })).rejects.toThrow(/--post counts the agent's writes against its limits in Redis/);
  });

  it('daemon: Redis first, then the embedded hub and the rest; closers by shutdown stage; closing stops the hub', async () => {
    const config = WarrenConfigSchema.parse({
      redis: { url: redisUrl, prefix: 'open-services-daemon' },
      hub: { embedded: true, db: ':memory:', port: 0 },
      store: { path: resolve('examples') },
      executors: { cli: { workspaces: workspaces() } },
      memory: { store: join(workspaces(), 'memory.sqlite') },
    });
    const fleet: FleetSource = { agents: () => Promise.resolve([]), setPaused: () => Promise.resolve() };
    let redactLine: ((line: string) => string) | undefined;
    const services = await openServices(config, { PATH: process.env.PATH }, { name: 'daemon', logger: silent, runsActivations: false, agents: { get: () => undefined }, fleet, redactLogs: (redact) => (redactLine = redact) });
    try {
      expect(services.generatedAdminKey).toBe(services.adminKey);
      expect(services.hubUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await services.hub.health()).toBe(true);
      // A scheduler-only process (runsActivations false) opens no hub gateway.
      expect(services.closers.map((c) => [c.name, c.stage])).toEqual([
        ['redis producer connection', 'connections'],
        ['embedded hub', 'services'],
        ['memory store', 'connections'],
        ['store', 'services'],
      ]);
      // The generated admin key is a secret like any: out of what agents write, and out of every log line.
      expect(services.redactor.redact(`admin ${services.adminKey!}`)).toBe(`admin ${REDACTED}`);
      expect(redactLine?.(`admin ${services.adminKey!}`)).toBe(`admin ${REDACTED}`);
    } finally {
      await services.close();
    }
    await vi.waitFor(() => expect(services.redis.status).toBe('end'));
    await expect(fetch(`${services.hubUrl}/health`)).rejects.toThrow();
  });

  it('daemon: without an admin key or an embedded hub the start fails with the reason (after Redis, which it closes)', async () => {
    const config = WarrenConfigSchema.parse({ redis: { url: redisUrl, prefix: 'open-services-no-key' }, hub: { embedded: false } });
    const fleet: FleetSource = { agents: () => Promise.resolve([]), setPaused: () => Promise.resolve() };
    await expect(openServices(config, {}, { name: 'daemon', logger: silent, runsActivations: true, agents: { get: () => undefined }, fleet, redactLogs: () => undefined })).rejects.toThrow(/the hub's admin key is not set/);
  });
});
