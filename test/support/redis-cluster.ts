// A private 3-master Redis Cluster per test file, on free ports, in a temp dir removed after: the same
// redis-server binary as test/support/redis-server.ts, with cluster mode on and slots spread by redis-cli.
// With `persistence`, each master keeps an append-only file synced on every write, so a master killed with SIGKILL
// and started again on its port and folder (killMaster, restartMaster) comes back with every write it acknowledged.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

export interface ClusterOptions {
  /** appendonly yes, appendfsync always: nothing acknowledged is lost when a master is killed and restarted. */
  persistence?: boolean;
}

/** What one master holds and has done, as `DBSIZE` and `INFO commandstats` tell. */
export interface MasterStats {
  url: string;
  /** DBSIZE now. */
  keys: number;
  /**
   * Commands executed (the sum of `calls` over every `cmdstat_*` line, the commands scripts ran included), counted
   * across restarts: a restart zeroes Redis's own counters, so the count read just before each killMaster is added.
   * The commands between that read and the kill are not counted.
   */
  commands: number;
}

export interface PrivateRedisCluster {
  /** `redis://127.0.0.1:<port>` of each master: what `redis.cluster` in warren.yaml takes. */
  readonly urls: string[];
  /** The port of each master, by the same index as `urls`. */
  readonly ports: number[];
  /** SIGKILL one master (by index); resolves once the process is gone. */
  killMaster(index: number): Promise<void>;
  /** Starts a killed master again on its port and folder; resolves once every node reports `cluster_state:ok`. */
  restartMaster(index: number): Promise<void>;
  /** DBSIZE and command count of each master, by index. */
  masterStats(): Promise<MasterStats[]>;
  /** Every key one master holds (SCAN): for telling which keys went where. */
  masterKeys(index: number): Promise<string[]>;
  /** The index of the master that serves a key's slot. */
  masterOf(key: string): Promise<number>;
  stop(): Promise<void>;
}

export async function startPrivateRedisCluster(masters = 3, opts: ClusterOptions = {}): Promise<PrivateRedisCluster> {
  // redis-cli joins the nodes; Debian's redis-server package brings it (redis-tools).
  if (spawnSync('redis-cli', ['--version'], { stdio: 'ignore' }).status !== 0) throw new Error('the Redis Cluster tests need redis-cli on PATH (apt install redis-tools)');
  const dir = mkdtempSync(join(tmpdir(), 'warren-redis-cluster-'));
  const ports: number[] = [];
  for (let i = 0; i < masters; i++) ports.push(await freePort({ withBus: true }));
  // A folder per node: the append-only files of several nodes in one folder would overwrite each other.
  const dirs = ports.map((port) => {
    const d = join(dir, String(port));
    mkdirSync(d);
    return d;
  });
  const persistence = opts.persistence ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  const startNode = (i: number): ChildProcess =>
    spawn(
      'redis-server',
      ['--port', String(ports[i]), '--bind', '127.0.0.1', '--dir', dirs[i]!, '--cluster-enabled', 'yes', '--cluster-config-file', join(dirs[i]!, 'nodes.conf'), '--save', '', ...persistence, '--maxmemory-policy', 'noeviction'],
      { stdio: 'ignore' },
    );
  const children: ChildProcess[] = ports.map((_, i) => startNode(i));
  // Commands counted by masters before they were last killed (their counters start again at 0).
  const countedBefore = ports.map(() => 0);

  const killChild = (c: ChildProcess): Promise<void> =>
    new Promise<void>((resolve) => {
      if (c.exitCode !== null || c.signalCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  const stop = async (): Promise<void> => {
    await Promise.all(children.map(killChild));
    rmSync(dir, { recursive: true, force: true });
  };
  const clusterOk = async (): Promise<void> => {
    for (const port of ports) await until(`cluster state ok on ${port}`, async () => (await cli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'));
  };
  const commandsOf = async (port: number): Promise<number> => sumCalls(await cliOrThrow(port, 'INFO', 'commandstats'));
  const at = (index: number): number => {
    const port = ports[index];
    if (port === undefined) throw new Error(`no master ${index} (the cluster has ${ports.length})`);
    return port;
  };

  try {
    for (const port of ports) await until(`redis-server on ${port}`, async () => (await cli(port, 'PING')) === 'PONG');
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    // Every node must know every slot's owner before clients come: `cluster_state:ok` on each.
    await clusterOk();
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    urls: ports.map((p) => `redis://127.0.0.1:${p}`),
    ports,
    async killMaster(index) {
      const port = at(index);
      countedBefore[index]! += await commandsOf(port).catch(() => 0);
      await killChild(children[index]!);
    },
    async restartMaster(index) {
      const port = at(index);
      const c = children[index]!;
      if (c.exitCode === null && c.signalCode === null) throw new Error(`master ${index} (port ${port}) is still running: killMaster first`);
      children[index] = startNode(index);
      await until(`redis-server on ${port} again`, async () => (await cli(port, 'PING')) === 'PONG');
      await clusterOk();
    },
    async masterStats() {
      return Promise.all(
        ports.map(async (port, i) => ({
          url: `redis://127.0.0.1:${port}`,
          keys: Number(await cliOrThrow(port, 'DBSIZE')),
          commands: countedBefore[i]! + (await commandsOf(port)),
        })),
      );
    },
    async masterKeys(index) {
      const { stdout } = await run('redis-cli', ['-p', String(at(index)), '--scan'], { maxBuffer: 64 * 1024 * 1024 });
      return stdout.split('\n').filter((k) => k !== '');
    },
    async masterOf(key) {
      const slot = Number(await cliOrThrow(ports[0]!, 'CLUSTER', 'KEYSLOT', key));
      for (const [i, port] of ports.entries()) {
        const owned = parseOwnSlots(await cliOrThrow(port, 'CLUSTER', 'NODES'));
        if (owned.some(([lo, hi]) => slot >= lo && slot <= hi)) return i;
      }
      throw new Error(`no master owns slot ${slot} of ${key}`);
    },
    stop,
  };
}

/** The sum of `calls=` over the `cmdstat_*` lines of `INFO commandstats`. */
export function sumCalls(info: string): number {
  let total = 0;
  for (const m of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) total += Number(m[1]);
  return total;
}

/** The slot ranges of the node that answered `CLUSTER NODES` (its line carries the `myself` flag). */
function parseOwnSlots(nodes: string): Array<[number, number]> {
  const mine = nodes.split('\n').find((l) => l.split(' ')[2]?.split(',').includes('myself'));
  if (!mine) return [];
  return mine
    .split(' ')
    .slice(8)
    .filter((s) => /^\d+(-\d+)?$/.test(s))
    .map((s) => {
      const [lo, hi] = s.split('-').map(Number);
      return [lo!, hi ?? lo!];
    });
}

async function cli(port: number, ...args: string[]): Promise<string> {
  try {
    return await cliOrThrow(port, ...args);
  } catch {
    return '';
  }
}

async function cliOrThrow(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-p', String(port), ...args]);
  const out = stdout.trim();
  // redis-cli exits 0 on an error reply when its output is not a terminal; the reply then starts with ERR (or a code).
  if (/^(ERR|CLUSTERDOWN|LOADING|MOVED|ASK) /.test(out)) throw new Error(`redis-cli -p ${port} ${args.join(' ')}: ${out}`);
  return out;
}

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
