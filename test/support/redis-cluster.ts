// A private 3-master Redis Cluster per test file, on free ports, in a temp dir removed after: the same
// redis-server binary as test/support/redis-server.ts, with cluster mode on and slots spread by redis-cli.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

export interface PrivateRedisCluster {
  /** `redis://127.0.0.1:<port>` of each master: what `redis.cluster` in warren.yaml takes. */
  readonly urls: string[];
  stop(): Promise<void>;
}

export async function startPrivateRedisCluster(masters = 3): Promise<PrivateRedisCluster> {
  // redis-cli joins the nodes; Debian's redis-server package brings it (redis-tools).
  if (spawnSync('redis-cli', ['--version'], { stdio: 'ignore' }).status !== 0) throw new Error('the Redis Cluster tests need redis-cli on PATH (apt install redis-tools)');
  const dir = mkdtempSync(join(tmpdir(), 'warren-redis-cluster-'));
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) ports.push(await freePort({ withBus: true }));
  const children: ChildProcess[] = ports.map((port) =>
    spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'],
      { stdio: 'ignore' },
    ),
  );
  const stop = async (): Promise<void> => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports) await until(`redis-server on ${port}`, async () => (await cli(port, 'PING')) === 'PONG');
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    // Every node must know every slot's owner before clients come: `cluster_state:ok` on each.
    for (const port of ports) await until(`cluster state ok on ${port}`, async () => (await cli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'));
  } catch (err) {
    await stop();
    throw err;
  }
  return { urls: ports.map((p) => `redis://127.0.0.1:${p}`), stop };
}

async function cli(port: number, ...args: string[]): Promise<string> {
  try {
    return (await run('redis-cli', ['-p', String(port), ...args])).stdout.trim();
  } catch {
    return '';
  }
}

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
