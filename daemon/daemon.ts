// Wires one warren process: optional embedded hub, agent registry, scheduler, worker; and stops them in order.
import type { Logger } from 'pino';
import { HubClient } from '../hub-client/client.ts';
import { createCliExecutors } from '../executors/cli/cli-executors.ts';
import { programLookup } from '../executors/cli/cli-executor.ts';
import { warrenHubMcpAvailable, warrenHubMcpLauncher } from '../executors/cli/hub-mcp-launcher.ts';
import type { HubMcpLauncher } from '../executors/cli/mcp.ts';
import { runningSubprocessCount } from '../executors/cli/supervisor.ts';
import { LlmExecutor, llmSettings } from '../executors/llm/llm-executor.ts';
import { parseMockResponses } from '../executors/llm/scripted-model.ts';
import { applySeed, type SeedFile } from '../local-hub/seed.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { BudgetCache } from '../scheduler/budget-cache.ts';
import { LeaderLease } from '../scheduler/lease.ts';
import { InboxClaims } from '../scheduler/inbox-claims.ts';
import { Scheduler } from '../scheduler/scheduler.ts';
import { Reloader } from '../store/reloader.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { ActivationOutcome } from './activation.ts';
import { ActivationRecords } from './activation-records.ts';
import { AgentRegistry } from './agent-registry.ts';
import type { WarrenConfig } from './config.ts';
import { startCliIsolation } from './cli-isolation.ts';
import { ErrorReporter } from './error-reporter.ts';
import { ExecutorRegistry } from './executor-registry.ts';
import { openStore } from './open-store.ts';
import { startHealthServer } from './health-server.ts';
import { WarrenMetrics } from './metrics.ts';
import { HubGateway } from './hub-gateway.ts';
import { Redactor, secretsFromEnv } from './redact.ts';
import { SecretSource } from './secrets.ts';
import { startTracing } from './tracing-setup.ts';
import { RedisReplyOutbox } from './reply-outbox.ts';
import { assertRedisReachable, connectRedis, redactUrl } from './redis.ts';
import { subscribeReload } from './reload-signal.ts';
import { ActivationWorker, type ActivationStart } from './worker.ts';

/** What one process does: `all` (default), or only scheduling, or only running activations (scale-out). */
export type DaemonRole = 'all' | 'scheduler' | 'worker';

export interface DaemonOptions {
  config: WarrenConfig;
  role?: DaemonRole;
  logger: Logger;
  /** Where secrets come from (process.env in production); read only by name, never copied whole. */
  env: NodeJS.ProcessEnv;
  onOutcome?: (outcome: ActivationOutcome) => void;
  /** Observes each activation as a worker starts it (benchmarks). */
  onActivationStart?: (start: ActivationStart) => void;
  /** Demo content for the embedded hub (`warren start --seed`). */
  seed?: SeedFile;
  /**
   * Starts the hub MCP server CLI agents post through. Default: `warren mcp hub` when this build has it;
   * null: none, the daemon posts CLI agents' answers.
   */
  hubMcp?: HubMcpLauncher | null;
}

export interface RunningDaemon {
  hubUrl: string;
  /** The embedded hub's admin key when this process generated it (printed at start). */
  generatedAdminKey: string | undefined;
  registry: AgentRegistry;
  /** The health and metrics endpoint, when enabled. */
  metricsUrl: string | undefined;
  /** Reloads the agent definitions now (SIGHUP, `warren reload`); resolves when applied or deferred to a retry. */
  reload(): Promise<void>;
  stop(): Promise<void>;
}

export async function startDaemon(opts: DaemonOptions): Promise<RunningDaemon> {
  const { config, logger, env } = opts;
  const cleanups: Array<() => Promise<void>> = [];
  const stop = async (): Promise<void> => {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => logger.warn({ err }, 'error during shutdown'));
    cleanups.length = 0;
  };

  try {
    let hubUrl = config.hub.url;
    const secrets = new SecretSource({ env, dir: config.secrets.dir });
    let adminKey = secrets.get(config.hub.admin_key_env);
    let embedded: RunningHub | undefined;
    if (config.hub.embedded) {
      embedded = await startHub({ dbPath: config.hub.db, adminKey, host: config.hub.host, port: config.hub.port, logger: logger.child({ component: 'hub' }) });
      cleanups.push(() => embedded!.close());
      hubUrl = embedded.url;
      adminKey = embedded.adminKey;
      logger.info({ url: hubUrl, db: config.hub.db }, 'embedded hub listening');
      if (opts.seed) logger.info({ ...(await applySeed(embedded.url, embedded.adminKey, opts.seed)) }, 'hub seeded');
    }
    if (opts.seed && !embedded) throw new Error('--seed needs the embedded hub (hub.embedded: true); seed a separate hub with `warren hub --seed`');
    if (!adminKey) throw new Error(secrets.whyMissing(config.hub.admin_key_env) ?? `the hub's admin key is not set: export ${config.hub.admin_key_env} (or run with hub.embedded: true)`);

    const hub = new HubClient({ baseUrl: hubUrl, apiKey: adminKey, logger: logger.child({ component: 'hub-client' }) });
    const tracing = startTracing(config.tracing, logger);
    if (tracing) cleanups.push(() => tracing.shutdown()); // pushed early: runs last, after the workers' final spans
    // Error posts, records, logs and span payloads share one redaction: no known secret leaves in any of them.
    const redactor = new Redactor(secretsFromEnv(env, [adminKey, ...secrets.fileValues()]));
    const llm = new LlmExecutor({
      secret: (name) => secrets.get(name),
      defaultApiBase: env.OPENAI_BASE_URL,
      mockResponses: env.WARREN_MOCK_RESPONSES ? parseMockResponses(env.WARREN_MOCK_RESPONSES) : undefined,
      ...llmSettings(config.executors.llm),
      tracePayloads: config.tracing.capture_payloads ? (text) => redactor.redact(text) : undefined,
      // Late-bound: the registry is built from this executor, and delegation looks agents up at run time.
      agents: { get: (name): AgentDefinition | undefined => registry.get(name) },
    });
    const cliConfig = config.executors.cli;
    // CLI agents' hub MCP servers act through a loopback gateway with per-activation tokens, not the admin key.
    let hubMcp = opts.hubMcp === null ? undefined : opts.hubMcp;
    // Only processes that run activations need it; a scheduler-only process opens no gateway port.
    if (hubMcp === undefined && opts.hubMcp !== null && opts.role !== 'scheduler' && warrenHubMcpAvailable()) {
      const gateway = await HubGateway.start({ hubUrl, adminKey, logger: logger.child({ component: 'hub-gateway' }) });
      cleanups.push(() => gateway.close());
      hubMcp = warrenHubMcpLauncher({
        credentials: (agent) => {
          const grants = agent.config.capabilities.grants.filter((g) => g.startsWith('hub:'));
          const t = gateway.issue(agent.name, grants, agent.config.behavior.max_duration + 60_000);
          return { hubUrl: gateway.url, key: t.token, release: t.revoke };
        },
      });
    }
    const cli = createCliExecutors({
      maxConcurrent: cliConfig.max_concurrent,
      workspacesRoot: cliConfig.workspaces,
      binaries: cliConfig.binaries,
      graceMs: cliConfig.kill_grace,
      idleMs: cliConfig.idle_timeout,
      claudeMaxRetries: cliConfig.claude_max_retries,
      secret: (name) => secrets.get(name),
      parentEnv: env,
      hubMcp,
      runAs: opts.role === 'scheduler' ? undefined : await startCliIsolation(config, secrets, logger),
    });
    const executors = new ExecutorRegistry(llm, cli);
    const store = openStore(config.store, env);
    cleanups.push(() => Promise.resolve(store.close?.()));
    const registry = new AgentRegistry({ store, executors, logger });
    // Definitions reload on store changes, on `warren reload` and SIGHUP; an unreachable store keeps the
    // last good ones and is retried with backoff. New agents are registered on the hub as they appear.
    const reloader = new Reloader({
      reload: async () => {
        const ok = await registry.reload();
        if (ok && config.hub.register_agents) await registry.registerOnHub(hub);
        return ok;
      },
      watch: config.store.watch ? (onChange) => store.watch(onChange) : undefined,
      logger: logger.child({ component: 'definitions' }),
    });
    await reloader.trigger('start');
    reloader.start();
    cleanups.push(() => Promise.resolve(reloader.stop()));

    const producerConn = connectRedis(config.redis.url, 'producer', logger);
    cleanups.push(async () => void (await producerConn.quit()));
    await assertRedisReachable(producerConn, config.redis.url);
    const workerConn = connectRedis(config.redis.url, 'worker', logger);
    cleanups.push(async () => void (await workerConn.quit()));
    logger.info({ redis: redactUrl(config.redis.url), prefix: config.redis.prefix }, 'redis connected');
    const reloadConn = connectRedis(config.redis.url, 'worker', logger);
    cleanups.push(async () => void (await reloadConn.quit()));
    const unsubscribe = await subscribeReload(reloadConn, config.redis.prefix, () => {
      logger.info('reload requested through Redis');
      void reloader.trigger('warren reload');
    });
    cleanups.push(unsubscribe);

    const role = opts.role ?? 'all';
    const queue = new ActivationQueue(producerConn, { prefix: config.redis.prefix, logger });
    const agentState = new AgentStateStore(producerConn, config.redis.prefix);
    cleanups.push(() => queue.close());
    const claims = new InboxClaims(producerConn, config.redis.prefix);
    let scheduler: Scheduler | undefined;
    const metrics = new WarrenMetrics({ queueCounts: () => queue.counts(), isLeader: role === 'worker' ? undefined : () => scheduler?.isLeader ?? false, subprocesses: runningSubprocessCount });

    if (role !== 'scheduler') {
      const worker = new ActivationWorker({
        connection: workerConn,
        prefix: config.redis.prefix,
        concurrency: config.workers.concurrency,
        lockDurationMs: config.workers.lock_duration,
        stalledIntervalMs: config.workers.stalled_interval,
        claims,
        deps: { hub, agents: registry, executors, outbox: new RedisReplyOutbox(producerConn, config.redis.prefix), logger, contextTaskTokens: config.workers.context_tokens, cliAvailable: programLookup(env.PATH), usedToday: async (agent) => (await agentState.dailyMany([agent])).get(agent) },
        agentState,
        records: new ActivationRecords(producerConn, config.redis.prefix),
        errors: new ErrorReporter(hub, redactor, logger.child({ component: 'error-reporter' })),
        redactor,
        logger,
        onOutcome: opts.onOutcome,
        onRecord: (r) => metrics.observe(r),
        onStart: (s) => {
          metrics.observeLag(s.trigger, s.startedAt - s.enqueuedAt);
          opts.onActivationStart?.(s);
        },
      });
      cleanups.push(() => worker.close(config.workers.shutdown_grace));
    }
    if (role !== 'worker') {
      const leaseTtlMs = config.scheduler.lease_ttl;
      const lease = new LeaderLease(producerConn, { prefix: config.redis.prefix, ttlMs: leaseTtlMs });
      scheduler = new Scheduler({
        hub,
        queue,
        agentState,
        claims,
        lease,
        leaseTtlMs,
        runnableAgents: () => registry.runnable(),
        definition: (name) => registry.get(name),
        budget: new BudgetCache(hub, { ttlMs: config.scheduler.budget_ttl, logger }),
        explorationIntervalMs: config.scheduler.exploration_interval,
        minStalenessMs: config.scheduler.min_staleness,
        workerConcurrency: config.workers.concurrency,
        pollIntervalMs: config.scheduler.poll_interval,
        longPollSeconds: Math.floor(config.scheduler.long_poll_timeout / 1000),
        logger,
      });
      scheduler.start();
      const running = scheduler;
      cleanups.push(() => running.stop());
    }
    let metricsUrl: string | undefined;
    if (config.metrics.enabled) {
      const server = await startHealthServer({
        host: config.metrics.host,
        port: config.metrics.port,
        metrics,
        checks: {
          redis: async () => void (await producerConn.ping()),
          hub: async () => {
            if (!(await hub.health())) throw new Error(`hub at ${hubUrl} is not healthy`);
          },
        },
      });
      // Closed last of all (pushed first after reverse): probes keep answering while work drains.
      cleanups.unshift(() => server.close());
      metricsUrl = server.url;
      logger.info({ url: server.url }, 'health and metrics listening (/healthz, /readyz, /metrics)');
    }
    logger.info({ role, agents: registry.runnable().size <= 50 ? [...registry.runnable()] : registry.runnable().size, concurrency: config.workers.concurrency }, 'warren is running');

    return { hubUrl, generatedAdminKey: embedded && !secrets.get(config.hub.admin_key_env) ? embedded.adminKey : undefined, registry, metricsUrl, reload: () => reloader.trigger('reload'), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
