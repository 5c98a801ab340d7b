// `warren <command>` as a real subprocess against a test's hub, Redis prefix and agents: the ops commands (status,
// logs, pause, resume…) as an operator runs them, from another process than the daemon's.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { PROCESS_START_MS } from './ceilings.ts';

const WARREN = resolve('bin/warren.js');
const run = promisify(execFile);

export interface CliTarget {
  /** The hub's URL. */
  hubUrl: string;
  redisUrl: string;
  prefix: string;
  /** The agents folder; warren.yaml is written beside it (so `./data/…` defaults land beside it too). */
  agentsDir: string;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `warren <args>` async (a daemon in this process keeps running meanwhile); `moreYaml`: extra warren.yaml lines. */
export async function warrenCli(t: CliTarget, args: string[], env: Record<string, string> = {}, moreYaml = ''): Promise<CliResult> {
  const file = join(t.agentsDir, '..', 'warren.yaml');
  writeFileSync(file, `hub: {url: "${t.hubUrl}"}\nredis: {url: "${t.redisUrl}", prefix: ${t.prefix}}\nstore: {path: agents}\nscheduler: {min_staleness: 1m}\n${moreYaml}`);
  try {
    const r = await run(process.execPath, [WARREN, ...args, '--config', file], { timeout: PROCESS_START_MS, env: { ...process.env, REDIS_URL: '', ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
