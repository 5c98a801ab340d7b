// A real AT Protocol network for a test file: @atproto/dev-env's TestNetwork (PLC, PDS with its rate limits on,
// Bluesky AppView) in a child process (bluesky-network-sidecar.js), on a private PostgreSQL database, a private
// Redis and a private temporary folder, all removed by stop(). Accounts are created by the sidecar.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { AtpAgent, RichText } from '@atproto/api';
import { createTestDatabase, type TestDatabase } from './postgres-db.ts';
import { startPrivateRedis, type PrivateRedis } from './redis-server.ts';
import { ensureBlueskyNative } from './bluesky-native.ts';

export interface BlueskyAccountInfo {
  handle: string;
  password: string;
  did: string;
}

export interface BlueskyNetwork {
  pds: string;
  appview: string;
  accounts: Record<string, BlueskyAccountInfo>;
  /** A client logged in as `handle`. */
  login(handle: string): Promise<AtpAgent>;
  /** Lets the AppView index everything so far (a shortcut for waits, never what a test checks). */
  processAll(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the network with accounts `handles` (each `name.test`); the password of each is `pw-<name>`. */
export async function startBlueskyNetwork(handles: readonly string[], log: (line: string) => void = () => {}): Promise<BlueskyNetwork> {
  ensureBlueskyNative(log);
  const db: TestDatabase = await createTestDatabase();
  const redis: PrivateRedis = await startPrivateRedis();
  const tmp = mkdtempSync(join(tmpdir(), 'warren-bsky-'));
  // Schema names must be letters and underscores.
  const schema = `bsky_${Math.random().toString(36).replace(/[^a-z]/g, '').slice(0, 8) || 'run'}`;
  const specs = handles.map((h) => `${h}:pw-${h.split('.')[0]}`);
  const child: ChildProcess = spawn(process.execPath, [join(import.meta.dirname, 'bluesky-network-sidecar.js'), db.url, schema, ...specs], {
    env: { ...process.env, REDIS_HOST: `127.0.0.1:${redis.port}`, TMPDIR: tmp, LOG_ENABLED: 'false', NODE_ENV: 'test' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  child.stderr!.on('data', (b: Buffer) => {
    stderr.push(b.toString('utf8'));
    if (stderr.length > 200) stderr.shift();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => {
    if (!line.startsWith('{"pds"') && line !== 'processed' && !line.startsWith('process failed')) return;
    waiting.shift()?.(line);
  });
  const next = (timeoutMs: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the Bluesky network did not answer within ${timeoutMs} ms:\n${stderr.join('').slice(-3000)}`)), timeoutMs);
      waiting.push((l) => {
        clearTimeout(timer);
        resolve(l);
      });
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`the Bluesky network exited:\n${stderr.join('').slice(-3000)}`));
      });
    });
  const stop = async (): Promise<void> => {
    child.stdin!.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
    await redis.stop();
    await db.drop();
    rmSync(tmp, { recursive: true, force: true });
  };
  let ready: { pds: string; appview: string; accounts: BlueskyAccountInfo[] };
  try {
    ready = JSON.parse(await next(120_000)) as typeof ready;
  } catch (err) {
    child.kill('SIGKILL');
    await stop();
    throw err;
  }
  // dev-env's hosts are localhost; pin them to IPv4, the address the PDS listens on for sure.
  const v4 = (u: string): string => u.replace('//localhost:', '//127.0.0.1:');
  return {
    pds: v4(ready.pds),
    appview: v4(ready.appview),
    accounts: Object.fromEntries(ready.accounts.map((a) => [a.handle.split('.')[0]!, a])),
    async login(handle) {
      const a = ready.accounts.find((x) => x.handle === handle || x.handle.split('.')[0] === handle);
      if (!a) throw new Error(`no account ${handle}`);
      const client = new AtpAgent({ service: v4(ready.pds) });
      await client.login({ identifier: a.handle, password: a.password });
      return client;
    },
    async processAll() {
      child.stdin!.write('process\n');
      await next(30_000);
    },
    stop,
  };
}

/** A post by `client` with facets for its @-mentions and links (mentions notify only through facets). */
export async function postWithFacets(client: AtpAgent, text: string, reply?: { root: { uri: string; cid: string }; parent: { uri: string; cid: string } }): Promise<{ uri: string; cid: string }> {
  const rt = new RichText({ text });
  await rt.detectFacets(client);
  return client.post({ text: rt.text, facets: rt.facets, ...(reply ? { reply } : {}) });
}
