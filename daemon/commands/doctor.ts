// `warren doctor`: what this machine can run. Installed CLIs and their versions against the verified ones,
// the root-and-bypass caveat, agents that will be skipped (and why: missing key, missing CLI, a hub name that
// belongs to a human), remote (A2A) delegates' cards and auth, and whether Redis and the hub answer. Each check prints one line; the exit code is 1 when something required fails.
import { execFile } from 'node:child_process';
import type { Command } from 'commander';
import { pino } from 'pino';
import { buildChildEnv } from '../../executors/cli/child-env.ts';
import { judgeVersion, parseVersion } from '../../executors/cli/versions.ts';
import { describeCliIsolation } from '../../services/cli-isolation.ts';
import { loadWarrenConfig, type WarrenConfig } from '../../services/config.ts';
import type { SecretSource } from '../../services/secrets.ts';
import type { DoctorServices } from '../../services/composition.ts';
import { recallWarning } from '../../memory/recall-strategy.ts';
import { layoutOf } from '../../redis/key-layout.ts';

// The executors (and the openai SDK behind them) load only when the command runs, so `warren --help` stays fast.

export type CheckStatus = 'ok' | 'warn' | 'fail';
export interface Check {
  status: CheckStatus;
  area: string;
  message: string;
}

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description('check CLIs and their versions, agent keys, Redis and the hub')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .action(async (opts: { config: string }) => {
      const checks = await runDoctor(loadWarrenConfig(opts.config), process.env);
      for (const c of checks) console.log(formatCheck(c));
      const failed = checks.filter((c) => c.status === 'fail').length;
      console.log(failed ? `${failed} check${failed === 1 ? '' : 's'} failed` : 'all required checks passed');
      process.exitCode = failed ? 1 : 0;
    });
}

export function formatCheck(c: Check): string {
  return `${c.status.padEnd(4)} ${c.area}: ${c.message}`;
}

export async function runDoctor(config: WarrenConfig, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const { openServices } = await import('../../services/composition.ts');
  // The executors and secrets as the daemon opens them: what doctor calls runnable is what the daemon will run.
  const services = await openServices(config, env, { name: 'doctor' });
  try {
    return await doctorChecks(config, env, services);
  } finally {
    await services.close();
  }
}

async function doctorChecks(config: WarrenConfig, env: NodeJS.ProcessEnv, services: DoctorServices): Promise<Check[]> {
  const checks: Check[] = [];
  const { secrets, executors } = services;
  for (const executor of executors.cli) {
    const path = executor.binaryPath();
    if (!path) {
      checks.push({ status: 'warn', area: executor.type, message: 'not installed (agents of this type are skipped)' });
      continue;
    }
    const output = await versionOf(path, env);
    const verdict = judgeVersion(executor.type, parseVersion(output));
    checks.push({ status: verdict.status === 'differs' ? 'warn' : 'ok', area: executor.type, message: `${path}: ${verdict.detail}` });
  }
  if (process.getuid?.() === 0) {
    checks.push({
      status: 'warn',
      area: 'root',
      message: "running as root: claude refuses --dangerously-skip-permissions / bypassPermissions as root (exit 1, no output); warren runs it with --permission-mode dontAsk and an allow-list instead. A workspace is not a sandbox: the run_as user keeps CLI agents from the daemon's secrets, not from the rest of the machine (use a container for that)",
    });
  }

  // The store as the daemon opens it: the folder or bucket, with store.include.
  const { openStore } = await import('../../services/open-store.ts');
  const store = await openStore(config.store, env);
  const { agents, problems } = await store.load().finally(() => store.close?.());
  const broken = problems.filter((p) => p.severity === 'error').length;
  if (broken) checks.push({ status: 'warn', area: 'agents', message: `${broken} definition problem${broken === 1 ? '' : 's'} (run warren validate)` });
  const conflicts = await hubConflicts(config, env, agents.map((a) => a.name));
  for (const def of agents) {
    const r = executors.resolve(def);
    const conflict = conflicts.get(def.name);
    if (conflict) checks.push({ status: 'fail', area: `agent ${def.name}`, message: `not runnable: ${conflict}` });
    else checks.push('executor' in r ? { status: 'ok', area: `agent ${def.name}`, message: `${def.config.type} runnable` } : { status: 'warn', area: `agent ${def.name}`, message: `skipped: ${r.unavailable}` });
    const memoryWarning = recallWarning(def.config.memory, config.memory.embeddings !== undefined);
    if (memoryWarning) checks.push({ status: 'warn', area: `agent ${def.name}`, message: memoryWarning });
  }

  // Remote (A2A) delegates: each card fetched, and a call made with the token to see that it is let in.
  const { checkRemoteDelegates } = await import('../../agent-loop/a2a-check.ts');
  for (const c of await checkRemoteDelegates(agents, { cards: executors.remoteCards, secret: (n) => secrets.get(n), probeAuth: true })) checks.push({ status: c.status, area: `agent ${c.agent}`, message: c.message });

  // After the agents: their keys have been asked for, so the files holding them are checked too.
  const isolation = await describeCliIsolation(config, secrets);
  for (const message of isolation.ok) checks.push({ status: 'ok', area: 'cli isolation', message });
  for (const message of isolation.warnings) checks.push({ status: 'warn', area: 'cli isolation', message });

  checks.push(await portsCheck(config));
  checks.push(await redisCheck(config));
  const exposure = await redisExposureCheck(config, agents.some((a) => a.config.type !== 'llm' && a.config.type !== 'native' && a.config.type !== 'custom'));
  if (exposure) checks.push(exposure);
  if (config.hub.type === 'moltbook') checks.push(...(await moltbookChecks(config, secrets)));
  else if (config.hub.type === 'bluesky') checks.push(...(await blueskyChecks(config, secrets)));
  else checks.push(await hubCheck(config));
  return checks;
}

function versionOf(path: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve) => {
    execFile(path, ['--version'], { env: buildChildEnv(env), timeout: 15_000, maxBuffer: 64 * 1024 }, (err, stdout, stderr) => {
      resolve(`${stdout}\n${stderr}${err && !stdout ? `\n${err.message}` : ''}`);
    });
  });
}

/**
 * Agents whose hub name is another identity's: asked of the hub itself when its admin key is at hand, and
 * what a daemon recorded in Redis (the embedded hub's case). Unreachable sources add nothing: their own
 * checks say they are down.
 */
async function hubConflicts(config: WarrenConfig, env: NodeJS.ProcessEnv, names: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const { connectRedis } = await import('../../redis/connect.ts');
  const { AgentStateStore } = await import('../../scheduler/agent-state.ts');
  const redis = connectRedis(config.redis, 'producer', pino({ level: 'silent' }));
  try {
    const marks = await Promise.race([new AgentStateStore(redis, layoutOf(config.redis)).notRunnable(names), new Promise<Map<string, string>>((resolve) => setTimeout(() => resolve(new Map()), 3_000).unref())]);
    for (const [name, reason] of marks) out.set(name, reason);
  } catch {
    // reported by the redis check
  } finally {
    redis.disconnect();
  }
  const adminKey = env[config.hub.admin_key_env];
  if (!config.hub.embedded && adminKey) {
    const { HubClient } = await import('../../hub-client/client.ts');
    const { identityConflict } = await import('../hub-identity.ts');
    try {
      const hubAgents = new Map((await new HubClient({ baseUrl: config.hub.url, apiKey: adminKey, timeoutMs: 3_000, retry: { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 } }).listAgents()).map((a) => [a.name, a]));
      for (const name of names) {
        const conflict = identityConflict(name, hubAgents.get(name));
        if (conflict) out.set(name, conflict);
      }
    } catch {
      // reported by the hub check
    }
  }
  return out;
}

/** The ports `warren start` will listen on (hub, metrics): one taken makes the start fail, so doctor fails too. */
async function portsCheck(config: WarrenConfig): Promise<Check> {
  const { assertPortsFree, daemonPorts } = await import('../port-check.ts');
  const planned = daemonPorts(config).filter((p) => p.port !== 0);
  try {
    await assertPortsFree(planned);
    return { status: 'ok', area: 'ports', message: planned.length ? `free: ${planned.map((p) => `${p.host}:${p.port} (${p.what})`).join(', ')}` : 'none fixed (0 picks a free port)' };
  } catch (err) {
    return { status: 'fail', area: 'ports', message: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * What `warren start` decides about CLI agents beside this Redis (services/redis-exposure.ts), when they would run
 * as their own user: a failure when it would not start the CLI agents defined here, a warning otherwise.
 */
async function redisExposureCheck(config: WarrenConfig, hasCliAgents: boolean): Promise<Check | undefined> {
  const { cliIsolation, lookupUser } = await import('../../executors/cli/run-as.ts');
  const { runAs } = cliIsolation(config.executors.cli.run_as, process.getuid?.());
  if (!runAs) return undefined;
  const { readRedisExposure } = await import('../../services/redis-exposure.ts');
  const exposure = await readRedisExposure(config, (await lookupUser(runAs)) ?? { name: runAs });
  if (exposure.refuse) return { status: hasCliAgents ? 'fail' : 'warn', area: 'redis exposure', message: exposure.reason };
  return { status: exposure.warning ? 'warn' : 'ok', area: 'redis exposure', message: exposure.warning ?? `Redis refuses clients without credentials: CLI agents (as ${runAs}) cannot command it` };
}

async function redisCheck(config: WarrenConfig): Promise<Check> {
  const { connectRedis, assertRedisReachable, describeRedis } = await import('../../redis/connect.ts');
  const redis = connectRedis(config.redis, 'producer', pino({ level: 'silent' }));
  try {
    await assertRedisReachable(redis, config.redis, 3_000);
    return { status: 'ok', area: 'redis', message: `${describeRedis(config.redis)} answers` };
  } catch (err) {
    return { status: 'fail', area: 'redis', message: err instanceof Error ? err.message : String(err) };
  } finally {
    redis.disconnect();
  }
}

/** Each agent's Moltbook key with /agents/me and /agents/status; anything a key could appear in is redacted. */
async function moltbookChecks(config: WarrenConfig, secrets: SecretSource): Promise<Check[]> {
  const { checkMoltbookKey } = await import('../../hub-client/moltbook/key-check.ts');
  const { Redactor } = await import('../../services/redact.ts');
  const entries = Object.entries(config.hub.agents).flatMap(([agent, a]) => ('api_key_env' in a ? [{ agent, variable: a.api_key_env, key: secrets.get(a.api_key_env) }] : []));
  const redactor = new Redactor(entries.map((e) => e.key));
  const results = await Promise.all(entries.map((e) => checkMoltbookKey(config.hub.url, e.agent, e.variable, e.key)));
  if (results.length === 0) return [{ status: 'fail', area: 'moltbook', message: 'hub.type moltbook but no agents under hub.agents: no agent has a key' }];
  return results.map((r) => ({ status: r.status, area: `moltbook ${r.agent}`, message: redactor.redact(r.message) }));
}

/** Each agent's Bluesky account logged in once on the PDS; anything a password could appear in is redacted. */
async function blueskyChecks(config: WarrenConfig, secrets: SecretSource): Promise<Check[]> {
  const { checkBlueskySession } = await import('../../hub-client/bluesky/session-check.ts');
  const { blueskyAccounts } = await import('../../services/runtime.ts');
  const { Redactor } = await import('../../services/redact.ts');
  const pino = (await import('pino')).default;
  const accounts = blueskyAccounts(config, secrets, pino({ level: 'silent' }));
  const entries = Object.entries(config.hub.agents).flatMap(([agent, a]) => ('handle' in a ? [{ agent, handle: a.handle, password: accounts.get(agent)?.password }] : []));
  if (entries.length === 0) return [{ status: 'fail', area: 'bluesky', message: 'hub.type bluesky but no agents under hub.agents: no agent has an account' }];
  const redactor = new Redactor(entries.map((e) => e.password));
  const results = await Promise.all(entries.map((e) => checkBlueskySession(config.hub.url, e.agent, e.handle, e.password)));
  return results.map((r) => ({ status: r.status, area: `bluesky ${r.agent}`, message: redactor.redact(r.message) }));
}

async function hubCheck(config: WarrenConfig): Promise<Check> {
  if (config.hub.embedded) return { status: 'ok', area: 'hub', message: `embedded: warren start serves it on ${config.hub.host}:${config.hub.port}` };
  try {
    const res = await fetch(`${config.hub.url.replace(/\/+$/, '')}/health`, { signal: AbortSignal.timeout(3_000) });
    return res.ok ? { status: 'ok', area: 'hub', message: `${config.hub.url} is healthy` } : { status: 'fail', area: 'hub', message: `${config.hub.url}/health answered ${res.status}` };
  } catch (err) {
    return { status: 'fail', area: 'hub', message: `cannot reach ${config.hub.url}: ${err instanceof Error ? err.message : String(err)}` };
  }
}
