// What a benchmark runs against, each part its own process where it would be in production: a private
// redis-server, the local hub (`warren hub`, in memory) and the fake model server; the daemon under test
// runs in the benchmark's process so its memory and event loop can be measured.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';
import { WarrenConfigSchema, type WarrenConfig } from '../../services/config.ts';
import { freePort } from '../../test/support/free-port.ts';
import { startPrivateRedis, type PrivateRedis } from '../../test/support/redis-server.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

export interface World {
  redis: PrivateRedis;
  hubUrl: string;
  adminKey: string;
  modelUrl: string;
  hubProcess: ChildProcess;
  modelProcess: ChildProcess;
  stop(): Promise<void>;
}

async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not come up within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startWorld(opts: { modelDelayMs: number }): Promise<World> {
  const redis = await startPrivateRedis();
  const adminKey = `bench-admin-${randomUUID()}`;
  const hubPort = await freePort();
  const hubProcess = spawn(process.execPath, [join(ROOT, 'bin/warren.js'), 'hub', '--port', String(hubPort), '--db', ':memory:', '--watch', 'off'], {
    cwd: ROOT,
    env: { ...process.env, WARREN_HUB_ADMIN_KEY: adminKey, WARREN_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const hubUrl = `http://127.0.0.1:${hubPort}`;
  const model = spawn(process.execPath, [join(ROOT, 'bench/support/fake-model-main.ts')], {
    cwd: ROOT,
    env: { ...process.env, FAKE_DELAY_MS: String(opts.modelDelayMs) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const modelUrl = await new Promise<string>((res, reject) => {
    const rl = createInterface({ input: model.stdout });
    rl.once('line', (l) => res(l.trim()));
    model.once('exit', (code) => reject(new Error(`fake model server exited (${code})`)));
  });
  await waitForHttp(`${hubUrl}/health`, 15_000);
  const kill = (p: ChildProcess): Promise<void> =>
    new Promise((res) => {
      if (p.exitCode !== null || p.signalCode !== null) return res();
      p.once('exit', () => res());
      p.kill('SIGTERM');
      setTimeout(() => p.kill('SIGKILL'), 3_000).unref();
    });
  return {
    redis,
    hubUrl,
    adminKey,
    modelUrl,
    hubProcess,
    modelProcess: model,
    async stop() {
      await Promise.all([kill(hubProcess), kill(model)]);
      await redis.stop();
    },
  };
}

/** `count` agents a0001… on the fake model (OpenAI protocol through the real SDK); returns the store root. */
export function makeBenchAgents(count: number, modelUrl: string, behavior = ''): { root: string; names: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'warren-bench-'));
  const names: string[] = [];
  for (let i = 1; i <= count; i++) {
    const name = `a${String(i).padStart(5, '0')}`;
    names.push(name);
    const dir = join(root, 'agents', name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'config.yaml'),
      // A benchmark agent answers as often as it is asked: its write limits are out of the way.
      `name: ${name}\ntype: llm\nbrain:\n  provider: openai\n  model: fake-gpt\n  api_base: ${modelUrl}\n  api_key_env: BENCH_MODEL_KEY\ncapabilities:\n  grants: [hub:read, hub:write]\nbehavior:\n  limits: {min_interval_seconds: 0, max_daily_comments: 1000000, max_daily_posts: 1000000, max_responses_per_thread: 1000000}\n${behavior}`,
    );
    writeFileSync(join(dir, 'system-prompt.md'), 'You are {{name}}, a benchmark agent. Answer briefly.');
  }
  return { root, names };
}

export function benchConfig(world: World, storeRoot: string, patch: (c: WarrenConfig) => void = () => undefined): WarrenConfig {
  const config = WarrenConfigSchema.parse({
    hub: { url: world.hubUrl, embedded: false },
    redis: { url: world.redis.url, prefix: `bench-${randomUUID().slice(0, 6)}` },
    store: { path: storeRoot },
    scheduler: { poll_interval: '20ms', exploration_interval: 0 },
    workers: { concurrency: 50, shutdown_grace: '2s' },
    metrics: { enabled: false },
  });
  patch(config);
  return config;
}

export const BENCH_ENV = (world: World): NodeJS.ProcessEnv => ({ WARREN_HUB_ADMIN_KEY: world.adminKey, BENCH_MODEL_KEY: 'sk-bench-not-a-secret' });

/** The hub lets one author's mentions notify at most 100 times an hour; a new human takes over before that. */
const MENTIONS_PER_HUMAN = 90;

async function registerHuman(world: World): Promise<string> {
  const res = await fetch(`${world.hubUrl}/api/v1/agents/register`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `bench-${randomUUID().slice(0, 8)}`, type: 'human' }),
  });
  return ((await res.json()) as { api_key: string }).api_key;
}

/** Humans on the hub who mention the agents; returns a function posting one mention (resolves with the send time). */
export async function mentioner(world: World): Promise<(agent: string, text?: string) => Promise<{ postId: string; sentAt: number }>> {
  let key = registerHuman(world);
  await key;
  // The next human is registered ahead: switching used to make every mention in flight wait for a registration.
  const ahead = (): Promise<string> => {
    const p = registerHuman(world);
    p.catch(() => undefined); // reported when used, not as an unhandled rejection before
    return p;
  };
  let next = ahead();
  let used = 0;
  // node:http with keep-alive: the load generator shares the daemon's process and must stay light.
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 64 });
  return async (mentioned, text = 'quick question?') => {
    if (++used > MENTIONS_PER_HUMAN) {
      [key, next] = [next, ahead()];
      used = 1;
    }
    const auth = `Bearer ${await key}`;
    return new Promise((res, reject) => {
      const sentAt = Date.now();
      const body = JSON.stringify({ content: `@${mentioned} ${text}` });
      const req = httpRequest(`${world.hubUrl}/api/v1/posts`, { method: 'POST', agent, headers: { authorization: auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (r.statusCode !== 200 && r.statusCode !== 201) reject(new Error(`posting a mention failed: ${r.statusCode} ${text}`));
          else res({ postId: (JSON.parse(text) as { id: string }).id, sentAt });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  };
}

/** Registers agents on the hub directly (so mentions of them notify before any daemon starts). */
export async function registerAgents(world: World, names: readonly string[], parallel = 16): Promise<void> {
  let next = 0;
  const one = async (): Promise<void> => {
    while (next < names.length) {
      const name = names[next++]!;
      const send = (): Promise<Response> =>
        fetch(`${world.hubUrl}/api/v1/agents/register`, {
          method: 'POST',
          headers: { authorization: `Bearer ${world.adminKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name, type: 'native' }),
        });
      // A kept-alive connection the hub closes as it is reused fails the call ("other side closed"): once more.
      const r = await send().catch(send);
      if (!r.ok && r.status !== 409) throw new Error(`registering ${name}: ${r.status} ${await r.text()}`);
    }
  };
  await Promise.all(Array.from({ length: parallel }, one));
}

/** Runs `fn` over items with at most `parallel` at once. */
export async function inParallel<T>(items: readonly T[], parallel: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** CPU milliseconds (user + system) a process has used so far, from /proc (Linux). */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat, i.e. 11 and 12 after the command name; clock ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}
