// Bounded shutdown, with a real `warren start` subprocess: one SIGTERM ends the process with exit code 0
// within workers.shutdown_grace plus a few seconds, whatever Redis and the hub are doing meanwhile.
import { randomUUID } from 'node:crypto';
import { connect, createServer, type Socket } from 'node:net';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { runShutdown, type ShutdownStep } from '../daemon/shutdown.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { ACTIVATION_QUEUE } from '../redis/keys.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller, waitFor } from './support/hub-api.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const GRACE_MS = 1_000;
/** What the acceptance allows beyond the grace: the bound of every other cleanup step together. */
const SLACK_MS = 5_000;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** One scripted agent whose answer takes `delayMs`, so a mention keeps a worker busy that long. */
function slowAgent(delayMs: number): string {
  return makeAgentsDir(
    {
      slow: {
        config: `name: slow\ntype: llm\nbrain:\n  provider: scripted\n  model: m\n  responses:\n    - {content: "Done at last.", delay_ms: ${delayMs}}\ncapabilities: {grants: [hub:read, hub:write]}\n`,
        prompt: 'You are {{name}}.',
      },
    },
    { withGreeter: false },
  );
}

/**
 * A TCP relay in front of the hub that can fall silent: connections stay open (new ones are accepted) and
 * nothing more passes either way, like a hub that hangs rather than one that is gone.
 */
async function silenceableRelay(target: string): Promise<{ url: string; silence(): void; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let silent = false;
  const server = createServer((client) => {
    sockets.add(client);
    client.on('error', () => undefined);
    if (silent) return;
    const upstream = connect(Number(port), hostname);
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: relayPort } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${relayPort}`,
    silence() {
      silent = true;
      for (const s of sockets) {
        s.unpipe();
        s.pause();
      }
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

interface World {
  redis: PrivateRedis;
  hub: RunningHub;
  prefix: string;
  queue: Queue;
  mention(): Promise<void>;
  daemon(graceMs?: number): Promise<WarrenProcess>;
  /** Makes the hub, as the daemon sees it, hang without answering. */
  silenceHub(): void;
}

async function world(): Promise<World> {
  const redis = await startPrivateRedis();
  cleanups.push(() => redis.stop());
  const hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
  cleanups.push(() => hub.close());
  const relay = await silenceableRelay(hub.url);
  cleanups.push(() => relay.close());
  const prefix = `shutdown-${randomUUID().slice(0, 8)}`;
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  client.on('error', () => undefined); // the tests take Redis down on purpose
  cleanups.push(() => Promise.resolve(client.disconnect()));
  const queue = new Queue(ACTIVATION_QUEUE, { connection: client, prefix });
  queue.on('error', () => undefined);
  const api = hubCaller(hub.url);
  const { api_key: userKey } = await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'dana', type: 'human' });
  const agentsDir = slowAgent(60_000);
  return {
    redis,
    hub,
    prefix,
    queue,
    mention: async () => void (await api.post('/posts', userKey, { title: 'for slow', content: '@slow take your time' })),
    daemon: async (graceMs = GRACE_MS) => {
      const p = startWarren({ hubUrl: relay.url, adminKey: hub.adminKey, redisUrl: redis.url, prefix, agentsDir, workers: `shutdown_grace: ${graceMs}ms` });
      cleanups.push(async () => {
        p.kill('SIGKILL');
        await p.exited;
      });
      await p.waitForLine(/warren is running/);
      return p;
    },
    silenceHub: () => relay.silence(),
  };
}

async function activationRunning(w: World): Promise<void> {
  await waitFor('the activation to start', async () => ((await w.queue.getActiveCount()) === 1 ? true : undefined), 15_000, 20);
}

/** One SIGTERM; resolves with the exit code and how long the process took to end (capped well beyond the bound). */
async function terminate(p: WarrenProcess): Promise<{ code: number | string; ms: number }> {
  const signalled = Date.now();
  p.kill('SIGTERM');
  const cap = new Promise<string>((resolve) => setTimeout(() => resolve('still running'), GRACE_MS + SLACK_MS + 10_000).unref());
  const code = await Promise.race([p.exited, cap]);
  return { code, ms: Date.now() - signalled };
}

describe('bounded shutdown', { timeout: PROCESS_TEST_MS }, () => {
  it('Redis killed while an activation runs: one SIGTERM exits 0 within the grace plus 5 s', async () => {
    const w = await world();
    const p = await w.daemon();
    await w.mention();
    await activationRunning(w);
    await w.redis.kill();
    await p.waitForLine(/redis connection error/);
    const { code, ms } = await terminate(p);
    expect(code, p.lines.slice(-8).join('\n')).toBe(0);
    expect(ms).toBeLessThan(GRACE_MS + SLACK_MS);
    expect(p.lines.some((l) => l.includes('activations still running at the shutdown deadline'))).toBe(true);
  });

  it('Redis killed with nothing running: one SIGTERM exits 0 within the grace plus 5 s', async () => {
    const w = await world();
    const p = await w.daemon();
    await w.redis.kill();
    await p.waitForLine(/redis connection error/);
    const { code, ms } = await terminate(p);
    expect(code, p.lines.slice(-8).join('\n')).toBe(0);
    expect(ms).toBeLessThan(GRACE_MS + SLACK_MS);
  });

  it('the hub killed while an activation runs: one SIGTERM exits 0 within the grace plus 5 s', async () => {
    const w = await world();
    const p = await w.daemon();
    await w.mention();
    await activationRunning(w);
    await w.hub.close();
    const { code, ms } = await terminate(p);
    expect(code, p.lines.slice(-8).join('\n')).toBe(0);
    expect(ms).toBeLessThan(GRACE_MS + SLACK_MS);
  });

  it('the hub hangs without answering while an activation runs: one SIGTERM exits 0 within the grace plus 5 s', async () => {
    const w = await world();
    const p = await w.daemon();
    await w.mention();
    await activationRunning(w);
    w.silenceHub();
    const { code, ms } = await terminate(p);
    expect(code, p.lines.slice(-8).join('\n')).toBe(0);
    expect(ms).toBeLessThan(GRACE_MS + SLACK_MS);
  });
});

describe('bounded shutdown: a second signal', { timeout: PROCESS_TEST_MS }, () => {
  it('exits at once (code 1) instead of waiting out the grace', async () => {
    const w = await world();
    const p = await w.daemon(20_000);
    await w.mention();
    await activationRunning(w);
    p.kill('SIGTERM');
    await p.waitForLine(/shutting down/);
    const second = Date.now();
    p.kill('SIGTERM');
    expect(await p.exited).toBe(1);
    expect(Date.now() - second).toBeLessThan(2_000);
    expect(p.lines.some((l) => l.includes('second signal: exiting now'))).toBe(true);
  });
});

describe('runShutdown', () => {
  const silent = pino({ level: 'silent' });
  const step = (name: string, stage: ShutdownStep['stage'], run: () => Promise<unknown>, boundMs = 1_000): ShutdownStep => ({ name, stage, boundMs, run });
  const never = (): Promise<never> => new Promise<never>(() => undefined);
  const after = (ms: number, log: string[], what: string) => () => new Promise<void>((r) => setTimeout(() => (log.push(what), r()), ms));

  it('runs stages in order, the steps of a stage side by side, whatever order they were given in', async () => {
    const log: string[] = [];
    const report = await runShutdown(
      [step('health', 'last', after(0, log, 'health')), step('conn', 'connections', after(0, log, 'conn')), step('worker', 'work', after(60, log, 'worker')), step('scheduler', 'work', after(10, log, 'scheduler'))],
      5_000,
      silent,
    );
    expect(log).toEqual(['scheduler', 'worker', 'conn', 'health']);
    expect(report).toMatchObject({ unfinished: [], failed: [] });
    expect(report.durationMs).toBeLessThan(1_000); // side by side: the 60 ms step, not 70 ms in a row
  });

  it("names a step that outlives its bound and goes on with the next stages", async () => {
    const log: string[] = [];
    const started = Date.now();
    const report = await runShutdown([step('stuck quit', 'connections', never, 100), step('health', 'last', after(0, log, 'health'))], 5_000, silent);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(report.unfinished).toEqual(['stuck quit']);
    expect(log).toEqual(['health']);
  });

  it('ends by the overall deadline even when bounds add up beyond it; later steps are not started', async () => {
    const log: string[] = [];
    const started = Date.now();
    const report = await runShutdown([step('worker', 'work', never, 10_000), step('queue', 'clients', after(0, log, 'queue'), 10_000)], 200, silent);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(report.unfinished).toEqual(['worker', 'queue']);
    expect(log).toEqual([]);
  });

  it('a step that throws, at once or later, is reported as failed and stops nothing else', async () => {
    const log: string[] = [];
    const report = await runShutdown(
      [
        step('sync throw', 'work', () => {
          throw new Error('boom');
        }),
        step('rejects', 'work', () => Promise.reject(new Error('later boom'))),
        step('health', 'last', after(0, log, 'health')),
      ],
      5_000,
      silent,
    );
    expect(report.failed.sort()).toEqual(['rejects', 'sync throw']);
    expect(report.unfinished).toEqual([]);
    expect(log).toEqual(['health']);
  });
});
