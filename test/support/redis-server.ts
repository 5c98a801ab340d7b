// A private redis-server per test run (never the shared instance on :6379), so tests
// can flush, kill and restart it freely.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

export interface PrivateRedis {
  /** With the password when the server has one (`redis://:password@127.0.0.1:port`). */
  readonly url: string;
  /** The same address without credentials: what a client that has none (an agent's user) would use. */
  readonly plainUrl: string;
  readonly port: number;
  /** The server's process id while it runs (a benchmark pins it to a core). */
  readonly pid: number | undefined;
  /** SIGKILL the server (a fault); `start()` brings it back on the same port and dir (and does nothing while it runs). */
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function redisServerAvailable(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

export async function startPrivateRedis(opts: { appendonly?: boolean; /** requirepass: the server refuses clients without it (NOAUTH). */ password?: string } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'warren-redis-'));
  let child: ChildProcess | undefined;

  const alive = (): boolean => child !== undefined && child.exitCode === null && child.signalCode === null;
  const start = async (): Promise<void> => {
    // Already up: a second server would fail to bind and exit, and stop() would then kill that one and leave this
    // one running (a leaked server after every CI run, from a test's cleanup that restarts Redis "in case").
    if (alive()) return;
    child = spawn(
      'redis-server',
      [
        '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
        // appendfsync always: a SIGKILLed server loses no acknowledged write (what the fault tests need)
        '--appendonly', opts.appendonly ? 'yes' : 'no', '--appendfsync', 'always', '--maxmemory-policy', 'noeviction',
        ...(opts.password ? ['--requirepass', opts.password] : []),
      ],
      { stdio: 'ignore' },
    );
    await waitForPort(port, 5000);
  };
  const kill = async (): Promise<void> => {
    const c = child;
    if (!c || !alive()) return; // already gone (killed before): no 'exit' to wait for
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  };
  await start();
  return {
    url: opts.password ? `redis://:${encodeURIComponent(opts.password)}@127.0.0.1:${port}` : `redis://127.0.0.1:${port}`,
    plainUrl: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child?.pid;
    },
    kill,
    start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = createConnection({ port, host: '127.0.0.1' });
      sock.once('connect', () => { sock.end(); resolve(true); });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not listen on ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
