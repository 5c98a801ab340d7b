// `warren start` as a real subprocess, for fault tests that kill, signal and restart daemons.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PROCESS_START_MS } from './ceilings.ts';

const WARREN = resolve('bin/warren.js');

export interface DaemonSettings {
  hubUrl: string;
  adminKey: string;
  redisUrl: string;
  /** Nodes of a Redis Cluster to use instead of `redisUrl`. */
  redisCluster?: string[];
  prefix: string;
  agentsDir: string;
  role?: 'all' | 'scheduler' | 'worker';
  /** Extra warren.yaml text merged under the generated sections (YAML flow maps, one per section). */
  workers?: string;
  scheduler?: string;
  /** Extra `store:` entries (YAML flow map text), e.g. `watch: false`. */
  store?: string;
  /** Extra `redis:` entries (YAML flow map text), e.g. `password_env: NAME`. */
  redis?: string;
  env?: Record<string, string>;
  /** More top-level warren.yaml sections, one per line (e.g. `executors: {cli: {…}}`). */
  sections?: string[];
  /** The whole `hub:` line, replacing the generated one (e.g. an embedded hub). */
  hub?: string;
}

export interface WarrenProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** The warren.yaml it was started with. */
  readonly config: string;
  /** Every stdout/stderr line so far (pino JSON lines, mostly). */
  readonly lines: string[];
  /** Resolves with the exit code (or the signal name) once the process is gone. */
  readonly exited: Promise<number | string>;
  /** Resolves when a line matching `pattern` appears (already seen lines count). */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal: NodeJS.Signals): void;
}

export function startWarren(s: DaemonSettings): WarrenProcess {
  const dir = mkdtempSync(join(tmpdir(), 'warren-proc-'));
  const config = join(dir, 'warren.yaml');
  writeFileSync(
    config,
    [
      s.hub ?? `hub: {url: "${s.hubUrl}", embedded: false}`,
      `redis: {url: "${s.redisUrl}"${s.redisCluster ? `, cluster: [${s.redisCluster.map((u) => `"${u}"`).join(', ')}]` : ''}, prefix: ${s.prefix}${s.redis ? `, ${s.redis}` : ''}}`,
      `store: {path: "${s.agentsDir}"${s.store ? `, ${s.store}` : ''}}`,
      // Exploration off unless the test's own scheduler entries turn it on (a key may appear once).
      `scheduler: {poll_interval: 50ms, ${/exploration_interval/.test(s.scheduler ?? '') ? '' : 'exploration_interval: 0, '}lease_ttl: 1s${s.scheduler ? `, ${s.scheduler}` : ''}}`,
      `workers: {concurrency: 25, lock_duration: 2s, stalled_interval: 1s${s.workers ? `, ${s.workers}` : ''}}`,
      `metrics: {port: 0}`,
      // Any free port for the ingress (webhooks, A2A), unless the test configures it itself.
      ...((s.sections ?? []).some((l) => l.startsWith('ingress:')) ? [] : ['ingress: {port: 0}']),
      ...(s.sections ?? []),
      '',
    ].join('\n'),
  );
  return spawnWarren(['start', '--config', config, '--role', s.role ?? 'all'], {
    // WARREN_ALLOW_OPEN_REDIS: the suite's private Redis takes no password (test/security/redis-auth.test.ts clears it).
    env: { ...process.env, REDIS_URL: '', WARREN_ALLOW_OPEN_REDIS: '1', WARREN_HUB_ADMIN_KEY: s.adminKey, WARREN_LOG_LEVEL: 'debug', ...s.env },
    config,
  });
}

/** `node bin/warren.js <args>` as a real subprocess, its output collected line by line. */
export function spawnWarren(args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string; config: string }): WarrenProcess {
  const { config } = opts;
  const child = spawn(process.execPath, [WARREN, ...args], { env: opts.env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (l: string) => void }> = [];
  const onData = (buf: Buffer): void => {
    for (const line of buf.toString('utf8').split('\n')) {
      if (!line) continue;
      lines.push(line);
      for (const w of waiters.splice(0)) {
        if (w.pattern.test(line)) w.resolve(line);
        else waiters.push(w);
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | string>((res) => child.once('exit', (code, signal) => res(code ?? signal ?? -1)));
  return {
    child,
    pid: child.pid!,
    config,
    lines,
    exited,
    waitForLine(pattern, timeoutMs = PROCESS_START_MS) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen) return Promise.resolve(seen);
      return new Promise((res, reject) => {
        const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; last lines:\n${lines.slice(-10).join('\n')}`)), timeoutMs);
        waiters.push({
          pattern,
          resolve: (l) => {
            clearTimeout(timer);
            res(l);
          },
        });
      });
    },
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}
