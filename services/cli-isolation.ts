// At start-up: which user CLI agents run as (created when missing), said plainly when they cannot be kept
// from the daemon's secrets, and a warning for every secret file that user could still read.
import type { Logger } from 'pino';
import { accessProblem, cliIsolation, CliUsers, ensureCliUser, lookupUser, userCan, type CliUser } from '../executors/cli/run-as.ts';
import { sweepUser } from '../executors/cli/user-sweep.ts';
import type { WarrenConfig } from './config.ts';
import type { SecretSource } from './secrets.ts';

export interface CliIsolationStart {
  /**
   * The daemon, before it runs anything: kill what runs of a daemon that did not stop cleanly (kill -9, a crash)
   * left under agents' users. Not `warren run`: a one-off run sweeps its agent's user when it ends.
   */
  sweepLeftovers?: boolean;
}

/** The users to start CLI agents as (undefined: the daemon's own), after logging what isolation there is. */
export async function startCliIsolation(config: WarrenConfig, secrets: SecretSource, logger: Logger, opts: CliIsolationStart = {}): Promise<CliUsers | undefined> {
  const { runAs, warning } = cliIsolation(config.executors.cli.run_as, process.getuid?.());
  if (warning) {
    logger.warn({ run_as: config.executors.cli.run_as }, warning);
    return undefined;
  }
  // The base user is created even when each agent has its own: it stands for them in access checks.
  const user = await ensureCliUser(runAs!);
  const users = new CliUsers(user, config.executors.cli.run_as_per_agent);
  logger.info({ run_as: users.describe() }, "CLI agents run as their own user; they cannot read the daemon's environment");
  for (const problem of secretFilesReadableBy(user, secrets)) logger.warn(problem);
  for (const problem of warrenUnreachableBy(user)) logger.warn(problem);
  if (opts.sweepLeftovers) await sweepLeftovers(users, config.executors.cli.kill_grace, logger);
  return users;
}

async function sweepLeftovers(users: CliUsers, graceMs: number, logger: Logger): Promise<void> {
  for (const user of await users.all()) {
    const { killed, survivors } = await sweepUser(user, { graceMs }).catch((err: unknown) => {
      logger.error({ err, user: user.name }, `could not look for processes of ${user.name} left by an earlier run`);
      return { killed: [], survivors: [] };
    });
    if (killed.length) logger.warn({ user: user.name, killed: killed.length }, `killed processes left by an earlier run of ${user.name} (a daemon that did not stop cleanly)`);
    if (survivors.length) logger.error({ user: user.name, pids: survivors }, `processes of ${user.name} left by an earlier run are still there after ${graceMs} ms`);
  }
}

/** Secret files (and the secrets folder) the CLI user can read: each defeats the isolation. */
export function secretFilesReadableBy(user: CliUser, secrets: SecretSource): string[] {
  return secrets.paths().filter((p) => userCan(user, p, ['-r'])).map((p) => `secret file ${p} is readable by ${user.name}, the user CLI agents run as: make it readable by the daemon's user only (chmod 600, folder 700)`);
}

/**
 * CLI agents start warren's hub MCP server (`node bin/warren.js mcp hub`) as their own user, so the Node
 * binary and warren's files must be readable by it; a checkout under /root (mode 700) is not.
 */
export function warrenUnreachableBy(user: CliUser): string[] {
  const warren = new URL('../bin/warren.js', import.meta.url).pathname;
  return [accessProblem(user, process.execPath, ['-r', '-x']), accessProblem(user, warren, ['-r'])]
    .filter((p): p is string => p !== undefined)
    .map((p) => `CLI agents' hub MCP server cannot start as executors.cli.run_as: ${p}; install warren and Node where that user can read them`);
}

/** For `warren doctor`: the same judgement, without creating the user. */
export async function describeCliIsolation(config: WarrenConfig, secrets: SecretSource): Promise<{ ok: string[]; warnings: string[] }> {
  const { runAs, warning } = cliIsolation(config.executors.cli.run_as, process.getuid?.());
  if (warning) return { ok: [], warnings: [warning] };
  const user = await lookupUser(runAs!);
  if (!user) return { ok: [`CLI agents will run as ${runAs}, created by warren start (useradd --system)`], warnings: [] };
  if (user.uid === 0 || user.gid === 0) return { ok: [], warnings: [`executors.cli.run_as ${user.name} has root's ids: warren start refuses it`] };
  const who = config.executors.cli.run_as_per_agent ? `${user.name}-<agent> (one user per agent, created on first use)` : `${user.name} (uid ${user.uid})`;
  return { ok: [`CLI agents run as ${who}; they cannot read the daemon's environment, and what they leave running is killed when their run ends`], warnings: [...secretFilesReadableBy(user, secrets), ...warrenUnreachableBy(user)] };
}
