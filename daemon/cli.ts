// The `warren` command line.
import { relative } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import type { Logger } from 'pino';
import type { WatchPolicy } from '../local-hub/watch/access.ts';
import { DefinitionError, formatProblem } from '../store/problems.ts';
import { registerHubUserCommand } from './commands/hub-user.ts';
import { registerInitCommand } from './commands/init.ts';
import { registerMcpCommand } from './commands/mcp-hub.ts';
import { registerRunCommand } from './commands/run.ts';
import { hubBudget, loadWarrenConfig, withBudgetFlags, type BudgetFlags } from '../services/config.ts';
import { createLogger } from './logger.ts';
import { registerOpsCommands } from './ops/commands.ts';
import { registerDoctorCommand } from './commands/doctor.ts';
import { registerMemoryCommand } from './commands/memory.ts';
import { registerEventsCommand } from './commands/events.ts';
import { registerShardsCommand } from './commands/shards.ts';
import type { DaemonRole } from './daemon.ts';
import { WARREN_VERSION } from './version.ts';

// Commands load their heavy parts (BullMQ, the hub, the SDKs) only when they run, so `--help` and
// `validate` start fast.

export function buildCli(): Command {
  const program = new Command('warren')
    .description('Hub-driven multi-agent scheduler: brings the agents of a hub to life.')
    .version(WARREN_VERSION, '-V, --version', 'print the version')
    .showHelpAfterError();

  program
    .command('start')
    .description('run the scheduler and workers (and the local hub when hub.embedded is true)')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('--seed <file>', 'load demo agents, communities and posts into the embedded hub (e.g. examples/hub-seed.yaml)')
    .option('--role <role>', 'all, scheduler or worker (scale workers out on other machines sharing Redis)', parseRole, 'all' as DaemonRole)
    .action(async (opts: { config: string; seed?: string; role: DaemonRole }) => {
      privateUmask();
      const logger = createLogger();
      const config = loadWarrenConfig(opts.config);
      const seed = opts.seed === undefined ? undefined : (await import('../local-hub/seed.ts')).readSeedFile(opts.seed);
      const { startDaemon } = await import('./daemon.ts');
      const daemon = await startDaemon({ config, logger, env: process.env, seed, role: opts.role });
      if (daemon.generatedAdminKey) announceAdminKey(logger, config.hub.admin_key_env, { key: daemon.generatedAdminKey, path: daemon.adminKeyFile });
      onShutdownSignal(logger, () => daemon.stop());
      process.on('SIGHUP', () => {
        logger.info('SIGHUP: reloading agent definitions');
        void daemon.reload();
      });
    });

  const hubCommand = program
    .command('hub')
    .description('run the local hub alone')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('-p, --port <port>', 'port (default: hub.port, or WARREN_HUB_PORT)', parsePort)
    .option('--db <file>', "sqlite file, or ':memory:' (default: hub.db)")
    .option('--seed <file>', 'load demo agents, communities and posts (e.g. examples/hub-seed.yaml); safe to repeat')
    .option('--watch <who>', 'who may open the watch page: loopback, any or off', parseWatchPolicy)
    .option('--daily-usd <usd>', "each agent's daily spend limit (default: budget.daily_usd; 0 = unlimited)", parseUsd)
    .option('--monthly-usd <usd>', "each agent's monthly spend limit (default: budget.monthly_usd)", parseUsd)
    .option('--fleet-daily-usd <usd>', 'all agents together, per UTC day (default: budget.fleet.daily_usd)', parseUsd)
    .option('--fleet-monthly-usd <usd>', 'all agents together, per month (default: budget.fleet.monthly_usd)', parseUsd)
    .action(async (opts: { config: string; port?: number; db?: string; seed?: string; watch?: WatchPolicy } & BudgetFlags) => {
      privateUmask();
      const logger = createLogger();
      const config = loadWarrenConfig(opts.config);
      config.budget = withBudgetFlags(config.budget, opts);
      const { SecretSource } = await import('../services/secrets.ts');
      const { keepAdminKey } = await import('../services/hub-admin-key.ts');
      const kept = keepAdminKey({ ...config.hub, db: opts.db ?? config.hub.db }, new SecretSource({ env: process.env, dir: config.secrets.dir }));
      const { readSeedFile, applySeed } = await import('../local-hub/seed.ts');
      const seed = opts.seed === undefined ? undefined : readSeedFile(opts.seed); // a bad file fails before the hub starts
      const port = opts.port ?? config.hub.port;
      const { assertPortsFree, hubPort } = await import('./port-check.ts');
      await assertPortsFree([hubPort(config.hub.host, port)]);
      const { startHub } = await import('../local-hub/server.ts');
      const { printWatchLink, watchTokenPath } = await import('../local-hub/watch/operator-token.ts');
      const hub = await startHub({
        dbPath: opts.db ?? config.hub.db,
        watchTokenFile: watchTokenPath(opts.db ?? config.hub.db),
        onWatchLink: (link) => printWatchLink(link),
        host: config.hub.host,
        port,
        adminKey: kept.key,
        logger,
        watch: opts.watch ?? config.hub.watch,
        watchNetworks: config.hub.watch_networks,
        budget: hubBudget(config.budget),
      });
      logger.info({ url: hub.url, watch: `${hub.url}/` }, 'hub listening');
      if (seed) logger.info({ ...(await applySeed(hub.url, hub.adminKey, seed)) }, 'hub seeded');
      if (kept.from !== 'env') announceAdminKey(logger, config.hub.admin_key_env, kept);
      onShutdownSignal(logger, () => hub.close());
    });
  registerHubUserCommand(hubCommand);

  program
    .command('validate')
    .description('check agent definitions and print every problem as file:line:column')
    .argument('[location]', 'store root, agents folder or s3://bucket/prefix (default: the store of warren.yaml)')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .action(async (location: string | undefined, opts: { config: string }) => {
      const config = loadWarrenConfig(opts.config);
      const { openStore } = await import('../services/open-store.ts');
      const { recallWarnings } = await import('../memory/recall-strategy.ts');
      const store = await openStore(config.store, process.env, location);
      try {
        const loaded = await store.load();
        const { agents } = loaded;
        const problems = [...loaded.problems, ...recallWarnings(agents, config.memory.embeddings !== undefined)];
        for (const p of problems) {
          const shown = { ...p, file: p.file.startsWith('s3://') ? p.file : relative(process.cwd(), p.file) || p.file };
          (p.severity === 'error' ? console.error : console.warn)(formatProblem(shown));
        }
        const errors = problems.filter((p) => p.severity === 'error').length;
        const { LayeredStore } = await import('../store/layered-store.ts');
        const shownLocation = (l: string): string => (l.startsWith('s3://') ? l : relative(process.cwd(), l) || '.');
        const where = (store instanceof LayeredStore ? store.locations : [store.location]).map(shownLocation).join(' and ');
        console.log(`${agents.length} agent${agents.length === 1 ? '' : 's'} valid${errors ? `, ${errors} problem${errors === 1 ? '' : 's'}` : ''} in ${where}`);
        process.exitCode = errors ? 1 : 0;
      } finally {
        store.close?.();
      }
    });

  program
    .command('manifest')
    .description("write an S3 store's manifest after an upload, so daemons notice an unchanged bucket with one request a poll")
    .argument('[location]', 's3://bucket/prefix (default: the store of warren.yaml)')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .action(async (location: string | undefined, opts: { config: string }) => {
      const config = loadWarrenConfig(opts.config);
      const { openStore } = await import('../services/open-store.ts');
      const { S3Store } = await import('../store/s3-store.ts');
      const { MANIFEST_KEY } = await import('../store/s3-manifest.ts');
      const store = await openStore(config.store, process.env, location ?? (config.store.type === 's3' ? config.store.url : undefined));
      try {
        if (!(store instanceof S3Store)) throw new Error(`${store.location} is a folder: only an S3 store has a manifest (a folder is watched for changes)`);
        const m = await store.writeManifest();
        console.log(`wrote ${store.displayName(MANIFEST_KEY)}: ${m.objects} object${m.objects === 1 ? '' : 's'}, fingerprint ${m.fingerprint.slice(0, 12)}`);
      } finally {
        store.close?.();
      }
    });

  program
    .command('reload')
    .description('ask every running daemon on the configured Redis to reload its agent definitions now')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .action(async (opts: { config: string }) => {
      const config = loadWarrenConfig(opts.config);
      const { openServices } = await import('../services/composition.ts');
      const { publishReload } = await import('./reload-signal.ts');
      const services = await openServices(config, process.env, { name: 'ops' });
      try {
        const receivers = await publishReload(await services.redis(), config.redis.prefix);
        console.log(receivers ? `reload sent to ${receivers} daemon${receivers === 1 ? '' : 's'}` : 'no running daemon is listening on this Redis and prefix');
        process.exitCode = receivers ? 0 : 1;
      } finally {
        await services.close();
      }
    });

  registerInitCommand(program);
  registerOpsCommands(program);
  registerDoctorCommand(program);
  registerMemoryCommand(program);
  registerEventsCommand(program);
  registerShardsCommand(program);
  registerRunCommand(program);
  registerMcpCommand(program);

  return program;
}

/**
 * Says where the operator finds a key no variable set. Kept in a file: its path (the logs never carry the key). An
 * in-memory hub's key lives only for this run, so it is written to the terminal itself, outside the logger (whose
 * redactor hides every known secret, this one included).
 */
function announceAdminKey(logger: Logger, envName: string, kept: { key: string; path?: string | undefined }): void {
  if (kept.path !== undefined) {
    const shown = relative(process.cwd(), kept.path) || kept.path;
    logger.info({ file: kept.path }, `hub admin key kept in ${shown} (readable by this user only; \`warren hub user\` and \`warren status\` read it there; set ${envName} to choose one)`);
    return;
  }
  process.stderr.write(`hub admin key (for this run only: the hub's database is in memory; set ${envName} to choose one): ${kept.key}\n`);
}

/**
 * The first Ctrl-C/SIGTERM stops cleanly and exits 0 (the stop is bounded: it ends even with Redis or the hub
 * gone). A second one exits at once with code 1, skipping what the first had left to do.
 */
function onShutdownSignal(logger: Logger, stop: () => Promise<unknown>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'error while shutting down');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}

function parseWatchPolicy(v: string): WatchPolicy {
  if (v === 'loopback' || v === 'any' || v === 'off') return v;
  throw new InvalidArgumentError('expected loopback, any or off');
}

function parseRole(v: string): DaemonRole {
  if (v === 'all' || v === 'scheduler' || v === 'worker') return v;
  throw new InvalidArgumentError('expected all, scheduler or worker');
}

function parseUsd(v: string): number {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1e6) throw new InvalidArgumentError('expected an amount in USD, 0 or more (0 = unlimited)');
  return n;
}

function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('expected a port number');
  return n;
}

/**
 * What a daemon or hub creates is its user's alone unless made otherwise (0600 files, 0700 folders): CLI agents run
 * as other users on the same host. The files warren keeps are given their modes explicitly too
 * (local-hub/private-files.ts); this covers what it does not name, and is inherited by the CLIs it starts.
 */
function privateUmask(): void {
  process.umask(0o077);
}

/** Runs the CLI; expected failures (bad config, unreachable services) print one clear line, not a stack. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    if (err instanceof DefinitionError) console.error(err.problems.map(formatProblem).join('\n'));
    else console.error(`warren: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
