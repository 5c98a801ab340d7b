// Wires one warren process: its services (services/composition.ts, the embedded hub among them), the agent registry,
// the scheduler and the worker; and stops them in order.
import type { Logger } from 'pino';
import type { HubMcpLauncher } from '../executors/cli/mcp.ts';
import { runningSubprocessCount } from '../executors/cli/supervisor.ts';
import { openUserRuns } from '../executors/cli/user-sweep.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { BudgetCache } from '../scheduler/budget-cache.ts';
import { LeaderLease } from '../scheduler/lease.ts';
import { InboxClaims } from '../scheduler/inbox-claims.ts';
import { Scheduler } from '../scheduler/scheduler.ts';
import { ScheduleStateStore } from '../scheduler/schedule-state.ts';
import { ScheduleTicker } from '../scheduler/schedule-ticker.ts';
import { Reloader } from '../store/reloader.ts';
import type { ActivationOutcome } from '../activation/activation.ts';
import { ActivationRecords, heldRecord } from '../activation/activation-records.ts';
import { HeldMentionStore } from '../scheduler/held-mentions.ts';
import { TaskInbox, type TaskSource } from '../scheduler/task-inbox.ts';
import { ApprovalRefused } from '../local-hub/watch/fleet.ts';
import { ApprovalStore, ApproverNotAllowed, UnknownApproval, type ApprovalRequest } from '../scheduler/approval-store.ts';
import { ApprovalDesk } from '../scheduler/approval-desk.ts';
import { approvalView } from './ops/approval-views.ts';
import type { TaskEndingHandler } from '../activation/activation.ts';
import { AgentRegistry } from './agent-registry.ts';
import { openServices } from '../services/composition.ts';
import type { WarrenConfig } from '../services/config.ts';
import type { SeedFile } from '../local-hub/seed.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { ErrorReporter } from '../activation/error-reporter.ts';
import { RedisErrorPostLedger } from '../activation/error-post-ledger.ts';
import { StatusPoster } from '../activation/status-poster.ts';
import { ActivitySummaryLedger } from '../activation/activity-summary-ledger.ts';
import { ActivitySummaryTicker } from '../activation/activity-summary-ticker.ts';
import { StatusPostLedger } from '../activation/status-post-ledger.ts';
import { redactLogs } from './logger.ts';
import { RedisNotificationFailures } from '../activation/notification-failures.ts';
import { startHealthServer } from './health-server.ts';
import { assertPortsFree, daemonPorts, ingressPort, portErrorOf } from './port-check.ts';
import { Ingress, type IngressRoute } from './ingress/ingress-server.ts';
import { A2A_TASKS_COUNTED, a2aCardUrls, startA2A } from './a2a/a2a-server.ts';
import { WATCH_A2A_TASKS, watchA2ATasks } from './a2a/a2a-task-view.ts';
import { HookRateLimit } from './webhooks/hook-rate-limit.ts';
import { webhookRoute } from './webhooks/webhook-route.ts';
import { OutboundEvents, type EventTarget } from '../activation/outbound-events.ts';
import { WarrenMetrics } from './metrics.ts';
import { readAgentStatuses, type StatusSources } from './ops/agent-statuses.ts';
import { fleetSource } from './ops/fleet-source.ts';
import { PauseFile } from './ops/pause-file.ts';
import { applyPauses } from './ops/pause.ts';
import type { FleetSource } from '../local-hub/watch/fleet.ts';
import type { AgentStatus } from './ops/status.ts';
import { startTracing } from './tracing-setup.ts';
import { RedisReplyOutbox } from '../activation/reply-outbox.ts';
import { closeRedis, connectRedis } from '../redis/connect.ts';
import { subscribeReload } from './reload-signal.ts';
import { startSpawning, type Spawning } from './spawning-setup.ts';
import { LoadedDefinitionsPublisher } from './ops/loaded-definitions.ts';
import { checkRemoteDelegates } from '../agent-loop/a2a-check.ts';
import { runShutdown, type ShutdownReport, type ShutdownStep } from './shutdown.ts';
import { ActivationWorker, shardConcurrency, type ActivationStart } from '../activation/worker.ts';
import { layoutOf, type KeyLayout } from '../redis/key-layout.ts';
import { checkShardLayout } from './shards/shard-check.ts';
import { leaseToken } from '../scheduler/lease.ts';
import { ShardLeadership } from '../scheduler/shard-leadership.ts';

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
  /** The clock schedules and activity summaries tick by (epoch ms); Date.now by default. Tests advance their own instead of waiting. */
  scheduleClock?: () => number;
  /** Told of each new approval request (README "Approvals"): what outbound events subscribe to. */
  onApprovalRequested?: (request: ApprovalRequest) => void;
  /** How often every daemon denies timed-out approvals and hands decided ones on again (default 15 s). */
  approvalSweepMs?: number;
}

export interface RunningDaemon {
  hubUrl: string;
  /** The embedded hub's admin key when no variable set it (generated, or kept from an earlier start). */
  generatedAdminKey: string | undefined;
  /** The file that key is kept in (printed at start); undefined for an in-memory hub. */
  adminKeyFile: string | undefined;
  /** The embedded hub's watch page operator link (`/?token=…`), when the hub runs here. */
  watchUrl: string | undefined;
  registry: AgentRegistry;
  /** The health and metrics endpoint, when enabled. */
  metricsUrl: string | undefined;
  /** The ingress listener (webhooks, A2A) once it is open. */
  readonly ingressUrl: string | undefined;
  /** Reloads the agent definitions now (SIGHUP, `warren reload`); resolves when applied or deferred to a retry. */
  reload(): Promise<void>;
  /** Stops everything within workers.shutdown_grace + SHUTDOWN_SLACK_MS, whatever Redis and the hub do; never rejects. */
  stop(): Promise<ShutdownReport>;
}

/**
 * What a stop may take beyond workers.shutdown_grace: aborted activations winding down (WORKER_SETTLE_MS),
 * then the connections and services, each bounded. Past it the process goes anyway.
 */
export const SHUTDOWN_SLACK_MS = 4_000;
/** How long aborted activations get to end before the worker's connections are cut. */
const WORKER_SETTLE_MS = 2_000;
/** The bound of a step that normally takes milliseconds (closing a socket, a QUIT). */
const QUICK_STEP_MS = 1_000;

export async function startDaemon(opts: DaemonOptions): Promise<RunningDaemon> {
  const { config, logger, env } = opts;
  // What to undo, registered as each part starts; the stages of shutdown.ts say in which order.
  const cleanups: ShutdownStep[] = [];
  const cleanup = (name: string, stage: ShutdownStep['stage'], run: () => unknown, boundMs = QUICK_STEP_MS): void => {
    cleanups.push({ name, stage, boundMs, run: async () => void (await run()) });
  };
  let stopping: Promise<ShutdownReport> | undefined;
  const stop = (): Promise<ShutdownReport> =>
    (stopping ??= runShutdown(cleanups.splice(0), config.workers.shutdown_grace + SHUTDOWN_SLACK_MS, logger).then((report) => {
      if (report.unfinished.length) logger.warn({ unfinished: report.unfinished, durationMs: report.durationMs }, 'shutdown steps did not finish in time; going anyway');
      return report;
    }));

  try {
    // What start-up needs from outside, checked before anything starts: the ports to listen on, then Redis.
    // A clash or a missing Redis is then one clear line, with no hub started and no leadership taken first.
    await assertPortsFree(daemonPorts(config));
    const live: { fleet?: FleetSource; approvals?: ApprovalDesk; a2aTasks?: FleetSource['a2aTasks']; spawning?: Spawning } = {}; // set once the registry exists
    // The watch page reads the agents' live state once the registry below exists (late-bound).
    const fleet: FleetSource = {
      agents: async () => (live.fleet ? live.fleet.agents() : []),
      setPaused: async (agent, paused) => {
        if (!live.fleet) throw new Error('the daemon is still starting');
        await live.fleet.setPaused(agent, paused);
      },
      health: async () => (await live.fleet?.health?.()) ?? { redis: null, definitions_with_errors: 0 },
      a2aTasks: async () => (live.a2aTasks ? live.a2aTasks() : []),
      approvals: {
        list: async () => (live.approvals ? (await live.approvals.store.open()).map(approvalView) : []),
        decide: async (id, decision, note) => {
          if (!live.approvals) throw new Error('the daemon is still starting');
          try {
            const r = await live.approvals.decide(id, decision === 'approve' ? 'approved' : 'denied', { by: 'operator', note });
            return { ...approvalView(r.entry), ...(r.kind === 'already' ? { already: true } : {}) };
          } catch (err) {
            if (err instanceof UnknownApproval) throw new ApprovalRefused(404, err.message);
            if (err instanceof ApproverNotAllowed) throw new ApprovalRefused(403, err.message);
            throw err;
          }
        },
      },
    };
    // Redis first (checked), then the embedded hub, redaction, the hub, memory, the executors and the store: every
    // part an activation needs, opened the way `warren run` opens them (services/composition.ts).
    const services = await openServices(config, env, {
      name: 'daemon',
      logger,
      runsActivations: opts.role !== 'scheduler',
      // Late-bound: the registry is built from these services; delegation and challenges look agents up at run time.
      agents: { get: (name): AgentDefinition | undefined => registry.get(name) },
      hubMcp: opts.hubMcp,
      seed: opts.seed,
      fleet,
      redactLogs,
      // Late-bound: the metrics are built further down; entries are evicted only as activations run.
      onMemoryEvicted: (agent, count) => metrics?.observeMemoryEvictions(agent, count),
      // Late-bound: CLI agents' held hub writes are told as paused runs are (built further down, before any run).
      onApprovalRequested: (request) => onApprovalRequested(request),
      // Late-bound: proposals are filed with the approvals, opened further down (before any activation runs).
      proposals: { propose: async (req) => (live.spawning ? live.spawning.desk.propose(req) : { status: 'error', content: 'propose_agent: the daemon is still starting; try again' }) },
    });
    for (const c of services.closers) cleanup(c.name, c.stage, c.close, c.boundMs);
    const { redis: producerConn, hub, hubUrl, redactor, writes, agentState, memory, executors, store } = services;
    // The keys must be laid out for the configured shard count before anything is read or written with it
    // (ShardCountMismatch names the migration to run); a fresh fleet's count is recorded now.
    const layout = layoutOf(config.redis);
    const shardCheck = await checkShardLayout(producerConn, layout);
    if (shardCheck.verdict === 'fresh') logger.info({ shards: shardCheck.count }, 'a fresh fleet: its keys are laid out for the configured shards');
    // An operator's pauses outlive Redis (the pause file): applied now, and again whenever Redis is back (it may
    // have restarted empty), before anything is scheduled on it.
    const pauses = config.pauses.file === undefined ? undefined : new PauseFile(config.pauses.file);
    if (pauses) {
      await applyPauses(pauses, agentState, logger);
      producerConn.on('ready', () => void applyPauses(pauses, agentState, logger).catch((err: unknown) => logger.error({ err }, 'could not apply the operator pauses to Redis')));
    }
    const tracing = await startTracing(config.tracing, logger);
    if (tracing) cleanup('tracing', 'last', () => tracing.shutdown(), 2_000); // after the workers' final spans
    // Agents the hub cannot act as (no Moltbook key) are loaded but not run; said once per agent.
    const unkeyed = new Set<string>();
    // Asked every intake round: a hub that can act as any agent (the local hub) gets the set as it is, not a copy.
    const actable = (names: ReadonlySet<string>): ReadonlySet<string> => (hub.actsAs ? new Set([...names].filter((n) => hub.actsAs!(n))) : names);
    const registry = new AgentRegistry({ store, executors, logger });
    // The outside world's way in (webhooks, A2A): features mount their routes below; it opens once a loaded agent
    // needs one (ingress.enabled auto), first at the end of the start, then as reloads bring such agents.
    const ingressRoutes: IngressRoute[] = [];
    const ingress = new Ingress({ ...config.ingress, routes: ingressRoutes, logger: logger.child({ component: 'ingress' }) });
    let ingressFromReloads = false;
    // First of all at a stop: nothing new comes in while work drains.
    cleanup('ingress', 'work', () => ingress.close());
    const loadedDefinitions = new LoadedDefinitionsPublisher(producerConn, config.redis.prefix);
    // Definitions reload on store changes, on `warren reload` and SIGHUP; an unreachable store keeps the
    // last good ones and is retried with backoff. New agents are registered on the hub as they appear.
    const reloader = new Reloader({
      reload: async () => {
        // Secret files first (a new agent's key in secrets.dir), known to the redactor before anything else runs.
        try {
          services.secrets.reread();
        } catch (err) {
          logger.error({ err: (err as Error).message }, 'secret files could not be read again; keeping the secrets read before');
        }
        services.learnSecretsOf(registry.all());
        const ok = await registry.reload();
        services.learnSecretsOf(registry.all()); // secrets named by the agents loaded now
        for (const name of registry.runnable()) {
          if (hub.actsAs?.(name) !== false || unkeyed.has(name)) continue;
          unkeyed.add(name);
          logger.warn({ agent: name }, config.hub.type === 'bluesky'
            ? `agent ${name} is skipped: it has no Bluesky account (set hub.agents.${name}.handle and its password_env or password_file in warren.yaml)`
            : `agent ${name} is skipped: it has no Moltbook key (set hub.agents.${name}.api_key_env in warren.yaml and that variable)`);
        }
        // Registered first: a new agent is mentionable as soon as possible (a mention of an unknown name notifies no one).
        if (ok && config.hub.register_agents && hub.capabilities?.registration !== false) {
          await registry.registerOnHub(hub);
          // Where `warren status` and `warren doctor` learn that an agent is not run, and why.
          await agentState.setNotRunnable(registry.checkedOnHub(), registry.hubConflicts()).catch((err: unknown) => logger.warn({ err }, 'could not record which agents are not runnable'));
        }
        // Where `warren status` and `warren agents` learn which agents this daemon skips, and why.
        if (ok) await agentState.setSkipped(registry.skipped()).catch((err: unknown) => logger.warn({ err }, 'could not record which agents are skipped'));
        // And which definitions it runs, to compare with the files on disk.
        if (ok) await loadedDefinitions.publish(registry.all(), new Date()).catch((err: unknown) => logger.warn({ err }, 'could not record which definitions are loaded'));
        if (ok && ingressFromReloads) await ingress.open(registry.all()).catch((err: unknown) => logger.error({ err: portErrorOf(ingressPort(config), err) }, 'the ingress could not open; webhooks and A2A are not served'));
        return ok;
      },
      watch: config.store.watch ? (onChange) => store.watch(onChange) : undefined,
      logger: logger.child({ component: 'definitions' }),
    });
    await reloader.trigger('start');
    reloader.start();
    // Remote (A2A) delegates' cards, read once now: one that cannot be read is a clear warning, never a stop.
    void checkRemoteDelegates(registry.all(), { cards: executors.remoteCards, secret: (n) => services.secrets.get(n) }).then((checks) => {
      for (const c of checks) logger[c.status === 'ok' ? 'info' : 'warn']({ agent: c.agent, delegate: c.delegate }, c.message);
    });
    cleanup('definitions reloader', 'work', () => reloader.stop());

    const workerConn = connectRedis(config.redis, 'worker', logger);
    cleanup('redis worker connection', 'connections', () => closeRedis(workerConn, QUICK_STEP_MS / 2));
    const reloadConn = connectRedis(config.redis, 'worker', logger);
    cleanup('redis reload connection', 'connections', () => closeRedis(reloadConn, QUICK_STEP_MS / 2));
    await subscribeReload(reloadConn, config.redis.prefix, () => {
      logger.info('reload requested through Redis');
      void reloader.trigger('warren reload');
    });

    const role = opts.role ?? 'all';
    // The fleet's shards (README "Shards"): an agent's queue, holds, state and records live in its shard.
    const workShards = config.redis.work_shards ?? layout.shards.map((_, i) => i);
    const queue = new ActivationQueue(producerConn, { prefix: layout, logger });
    cleanup('activation queue', 'clients', () => queue.close());
    const claims = new InboxClaims(producerConn, layout);
    const r = config.records;
    const records = new ActivationRecords(producerConn, layout, {
      retention: { perAgent: r.per_agent, perAgentBytes: r.per_agent_bytes, overall: r.overall, overallBytes: r.overall_bytes, maxAgeMs: r.max_age },
    });
    // Work from outside the hub (schedules, webhooks, A2A callers, approvals) waits here until answered; each
    // source that must hear how its task ended registers a handler below.
    const tasks = new TaskInbox(producerConn, layout);
    const taskEndings: Partial<Record<TaskSource, TaskEndingHandler>> = {};
    // Agents served over A2A (a2a.serve): their callers' tasks come in on the ingress and end through the inbox.
    const a2a = await startA2A({ config, secrets: services.secrets, redis: producerConn, agents: registry, inbox: tasks, queue, redact: (text) => redactor.redact(text), logger: logger.child({ component: 'a2a' }) });
    cleanup('a2a news connection', 'connections', () => a2a.close());
    ingressRoutes.push(a2a.route);
    taskEndings.a2a = a2a.turns.end;
    live.a2aTasks = () => watchA2ATasks(a2a.store, WATCH_A2A_TASKS);
    // Inbound webhooks: a signed delivery becomes a task (the scheduler's task round runs it).
    ingressRoutes.push(
      webhookRoute({
        definition: (name) => registry.get(name),
        secrets: services.secrets,
        tasks,
        rateLimit: new HookRateLimit(producerConn, config.redis.prefix),
        redact: (text) => redactor.redact(text),
        learnSecret: (value) => redactor.learn([value]),
        logger: logger.child({ component: 'webhooks' }),
      }),
    );
    // Outbound events (warren.yaml `events:` for the fleet, a definition's `events:` for its agent): queued, never
    // waited for by an activation; sent by every daemon that runs activations.
    const eventsConn = role === 'scheduler' ? undefined : connectRedis(config.redis, 'worker', logger);
    if (eventsConn) cleanup('redis events connection', 'connections', () => closeRedis(eventsConn, QUICK_STEP_MS / 2));
    const targetsOf = (urls: readonly string[], secret: { secret_env?: string; secret_file?: string }): EventTarget[] => urls.map((url) => ({ url, secret }));
    const events = new OutboundEvents({
      connection: producerConn,
      workerConnection: eventsConn,
      prefix: config.redis.prefix,
      fleetTargets: () => targetsOf(config.events.urls, config.events),
      agentTargets: (agent) => {
        const e = registry.get(agent)?.config.events;
        return e ? targetsOf(e.urls, e) : [];
      },
      secrets: services.secrets,
      learnSecret: (value) => redactor.learn([value]),
      attempts: config.events.attempts,
      retryBaseMs: config.events.retry_base,
      logger: logger.child({ component: 'events' }),
    });
    cleanup('outbound events', 'clients', () => events.close());
    // Approvals: paused runs and held writes kept in Redis; a decision becomes the agent's task `approval:<id>`.
    const approvalStore = new ApprovalStore(producerConn, config.redis.prefix);
    const approvals = (live.approvals = new ApprovalDesk(approvalStore, { add: (agent, task) => tasks.add(agent, task), enqueue: (agent) => queue.enqueue(agent, 'task') }, {
      onDecided: (e) => logger.info({ agent: e.request.agent, approval: e.request.id, decision: e.decision.kind, by: e.decision.by }, 'approval decided'),
    }));
    const onApprovalRequested = (request: ApprovalRequest): void => {
      logger.info({ agent: request.agent, approval: request.id, tools: request.calls.map((c) => c.name) }, 'approval requested');
      opts.onApprovalRequested?.(request);
      // At least once to the configured receivers, deduplicated there by the approval's id.
      void events.publish({ type: 'approval.requested', agent: request.agent, identity: request.id, data: { approval_id: request.id, tools: request.calls.map((c) => c.name), kind: request.work.kind, ...(request.work.kind === 'spawn' ? { spawn: { name: request.work.name, template: request.work.template } } : {}) } }).catch((err: unknown) => logger.warn({ err, approval: request.id }, 'could not queue the approval event'));
    };
    // Agents that propose agents: proposals become approvals of kind spawn; approved ones are written to the store.
    const spawning = (live.spawning = startSpawning({ config, redis: producerConn, approvals: approvalStore, loaded: (name) => registry.get(name) !== undefined, hub, redact: (text) => redactor.redact(text), onRequested: onApprovalRequested }));
    // Every daemon sweeps: timeouts are denied, and a decision whose task was lost (a process died between the two) is handed on again.
    const sweep = setInterval(() => void approvals.sweep().catch((err: unknown) => logger.warn({ err }, 'approval sweep failed')), opts.approvalSweepMs ?? 15_000);
    sweep.unref();
    cleanup('approval sweep', 'work', () => clearInterval(sweep));
    // Once at start too: what timed out or was decided while no daemon ran is handled now, not a sweep later.
    void approvals.sweep().catch((err: unknown) => logger.warn({ err }, 'approval sweep failed'));
    const schedulers: Scheduler[] = [];
    // `warren status`'s reading of every agent, for /metrics and the embedded hub's watch page.
    const statusSources: StatusSources = { redis: producerConn, prefix: layout, minStalenessMs: config.scheduler.min_staleness, memory: services.memoryStore };
    const agentStatuses = async (): Promise<AgentStatus[]> => (await readAgentStatuses(statusSources, registry.all())).agents;
    live.fleet = fleetSource({ sources: statusSources, definitions: () => registry.all(), state: agentState, brokenDefinitions: () => registry.brokenDefinitions(), pauses, onDisk: async () => new Map((await store.load()).agents.map((d) => [d.name, d.hash ?? ''])) });
    // Status posts to m/agent-status: budget crossings seen by the scheduler and by runs, MCP servers, pauses.
    const statusPosts = new StatusPoster(hub, redactor, logger.child({ component: 'status-posts' }), new StatusPostLedger(producerConn, config.redis.prefix), registry);
    // Only where /metrics serves them: prom-client's process metrics watch every GC and the event loop for as long as
    // the process lives (a daemon started again in the same process would add another set).
    const metrics = config.metrics.enabled ? new WarrenMetrics({ queueCounts: () => queue.counts(), isLeader: role === 'worker' ? undefined : () => schedulers.some((s) => s.isLeader), subprocesses: runningSubprocessCount, agentStatuses, a2aTasks: () => a2a.store.recent(A2A_TASKS_COUNTED) }) : undefined;

    if (role !== 'scheduler') {
      const worker = new ActivationWorker({
        connection: workerConn,
        prefix: layout,
        shards: workShards,
        concurrency: config.workers.concurrency,
        lockDurationMs: config.workers.lock_duration,
        stalledIntervalMs: config.workers.stalled_interval,
        claims,
        deps: {
          hub,
          agents: registry,
          executors,
          writes,
          redact: (text) => redactor.redact(text),
          outbox: new RedisReplyOutbox(producerConn, layout),
          logger,
          memory,
          contextTaskTokens: services.contextTaskTokens,
          cliAvailable: services.cliAvailable,
          usedToday: services.usedToday,
          onWarning: services.onWarning,
          tasks,
          taskEndings,
          taskStarts: { a2a: a2a.turns.start },
          taskWaits: { a2a: a2a.turns.waits },
          approvals: { store: approvalStore, onApprovalRequested },
          spawn: spawning.outcomes,
          takeNotes: spawning.takeNotes,
        },
        agentState,
        records,
        errors: new ErrorReporter(hub, redactor, logger.child({ component: 'error-reporter' }), new RedisErrorPostLedger(producerConn, layout)),
        status: statusPosts,
        notificationFailures: new RedisNotificationFailures(producerConn, layout),
        backoff: { baseMs: config.scheduler.failure_backoff, maxMs: config.scheduler.failure_backoff_max },
        giveUpAfter: config.workers.give_up_after,
        redactor,
        logger,
        onOutcome: opts.onOutcome,
        onRecord: (r) => {
          metrics?.observe(r);
          if (r.outcome === 'skipped') return;
          const failed = r.error !== undefined;
          void events.publish({
            type: failed ? 'activation.failed' : 'activation.finished',
            agent: r.agent,
            identity: r.activation_id,
            data: { activation_id: r.activation_id, trigger: r.trigger, outcome: r.outcome, reason: r.reason, started_at: r.started_at, duration_ms: r.duration_ms, attempt: r.attempt, replies: r.replies, posts: r.posts, usage: r.usage, ...(failed ? { error: r.error } : {}) },
          });
        },
        onHeldByFailure: (held) =>
          void events.publish({ type: 'agent.paused', agent: held.agent, identity: held.activationId, data: { activation_id: held.activationId, until: new Date(held.until).toISOString(), failures: held.failures, reason: held.reason } }),
        onStart: (s) => {
          metrics?.observeLag(s.trigger, s.startedAt - s.enqueuedAt);
          opts.onActivationStart?.(s);
        },
      });
      const grace = config.workers.shutdown_grace;
      cleanup('worker', 'work', () => worker.close(grace, WORKER_SETTLE_MS), grace + WORKER_SETTLE_MS + QUICK_STEP_MS);
      // Aborted CLI agents get SIGTERM, and SIGKILL after kill_grace, then what their users left is swept (up to
      // kill_grace again): wait for that rather than orphan them.
      cleanup('cli subprocesses', 'clients', () => subprocessesGone(), 2 * config.executors.cli.kill_grace + 500);
    }
    if (role !== 'worker') {
      const leaseTtlMs = config.scheduler.lease_ttl;
      // One lease per shard; with several shards the live daemons share them out (scheduler/shard-leadership.ts).
      const token = leaseToken();
      const leadership = layout.shards.length > 1 ? new ShardLeadership(producerConn, layout, { token, shards: config.redis.work_shards, ttlMs: leaseTtlMs, logger }) : undefined;
      if (leadership) {
        await leadership.start();
        cleanup('shard leadership', 'clients', () => leadership.stop());
      }
      const budget = new BudgetCache(hub, { ttlMs: config.scheduler.budget_ttl, logger, onHealth: (agent, health) => void statusPosts.budget(agent, health.status, health).catch((err: unknown) => logger.warn({ agent, err: redactor.redact(String(err)) }, 'could not post the budget status')) });
      for (const index of workShards) {
        const shard = layout.shards[index]!;
        const sharded = layout.shards.length > 1;
        const scheduler = new Scheduler({
          hub,
          queue,
          agentState,
          // The shard's own stores: every key a round reads or writes is in the shard's slot.
          claims: sharded ? new InboxClaims(producerConn, shard.prefix) : claims,
          lease: new LeaderLease(producerConn, { prefix: shard.prefix, ttlMs: leaseTtlMs, token }),
          leaseTtlMs,
          runnableAgents: sharded ? () => onShard(actable(registry.runnable()), layout, index) : () => actable(registry.runnable()),
          definition: (name) => registry.get(name),
          budget,
          explorationIntervalMs: config.scheduler.exploration_interval,
          minStalenessMs: config.scheduler.min_staleness,
          workerConcurrency: sharded ? shardConcurrency(config.workers.concurrency, workShards.length) : config.workers.concurrency,
          pollIntervalMs: config.scheduler.poll_interval,
          longPollSeconds: Math.floor(config.scheduler.long_poll_timeout / 1000),
          logger: sharded ? logger.child({ shard: index }) : logger,
          held: new HeldMentionStore(producerConn, shard.prefix),
          // Once per new hold, a line in `warren logs` (nothing ran, so it is no activation and nothing is counted).
          onHeld: (agent, h) => void records.addHeld(heldRecord(agent, h)).catch((err: unknown) => logger.warn({ err, agent }, 'could not record the held mentions')),
          tasks: sharded ? new TaskInbox(producerConn, shard.prefix) : tasks,
          onTasksHeld: (agent, hold) => a2a.waiting.note(agent, hold),
          ...(leadership ? { shard: { index, wantsLease: () => leadership.wants(index) } } : {}),
        });
        scheduler.start();
        schedulers.push(scheduler);
        cleanup(sharded ? `scheduler of shard ${index}` : 'scheduler', 'work', () => scheduler.stop(), 2_000);
      }
      // Schedules tick in every scheduling daemon, leader or not: the inbox adds a tick's task once.
      const ticker = new ScheduleTicker({
        definitions: () => registry.all(),
        runnable: () => actable(registry.runnable()),
        state: new ScheduleStateStore(producerConn, layout),
        agentState,
        inbox: tasks,
        queue,
        redact: (text) => redactor.redact(text),
        clock: opts.scheduleClock,
        logger: logger.child({ component: 'schedules' }),
      });
      ticker.start();
      cleanup('schedule ticker', 'work', () => ticker.stop(), 2_000);
      // Activity summaries (observability.post_summaries) on the schedule's clock, in every scheduling daemon: the
      // ledger makes each agent's summary of a tick one post.
      const summaries = new ActivitySummaryTicker({
        definitions: () => registry.all(),
        runnable: () => actable(registry.runnable()),
        ledger: new ActivitySummaryLedger(producerConn, layout),
        records,
        held: new HeldMentionStore(producerConn, layout),
        hub,
        writes,
        memory: services.memoryStore,
        redact: (text) => redactor.redact(text),
        clock: opts.scheduleClock,
        logger: logger.child({ component: 'activity-summaries' }),
      });
      summaries.start();
      cleanup('activity summaries', 'work', () => summaries.stop(), 2_000);
    }
    // A port that cannot be had fails the start, as the other ports do.
    await ingress.open(registry.all()).catch((err: unknown) => {
      throw portErrorOf(ingressPort(config), err);
    });
    ingressFromReloads = true;
    if (ingress.url) for (const served of a2aCardUrls(registry.all(), ingress.url)) logger.info(served, 'serving an agent over A2A');
    let metricsUrl: string | undefined;
    if (metrics) {
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
      // Closed last of all: probes keep answering while work drains.
      cleanup('health server', 'last', () => server.close());
      metricsUrl = server.url;
      logger.info({ url: server.url }, 'health and metrics listening (/healthz, /readyz, /metrics)');
    }
    const runnable = registry.runnable();
    if (runnable.size > 0) logger.info({ role, agents: runnable.size <= 50 ? [...runnable] : runnable.size, concurrency: config.workers.concurrency }, 'warren is running');
    else logger.warn({ role, not_run: Object.fromEntries(registry.notRun()), broken: registry.brokenDefinitions() }, `warren is running, but ${nothingRunnable(registry.notRun(), registry.brokenDefinitions())}`);

    return {
      hubUrl,
      generatedAdminKey: services.generatedAdminKey,
      adminKeyFile: services.adminKeyFile,
      watchUrl: services.watchUrl,
      registry,
      metricsUrl,
      get ingressUrl() {
        return ingress.url;
      },
      reload: () => reloader.trigger('reload'),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Why a daemon has nothing to run, in one line: each agent left out with its reason, and the broken files. */
export function nothingRunnable(notRun: ReadonlyMap<string, string>, broken: number): string {
  const agents = [...notRun].map(([name, why]) => `${name} (${why})`);
  const files = broken ? `${broken} definition${broken === 1 ? ' has' : 's have'} errors (see \`warren validate\`)` : '';
  if (!agents.length && !files) return 'no agent is runnable: no agent is defined in the store';
  return `no agent is runnable: ${[...agents, files].filter(Boolean).join('; ')}`;
}

/** The agents among `names` that belong to one shard. */
function onShard(names: ReadonlySet<string>, layout: KeyLayout, index: number): ReadonlySet<string> {
  const out = new Set<string>();
  for (const n of names) if (layout.indexOf(n) === index) out.add(n);
  return out;
}

/** Resolves once no CLI subprocess of this process is running, nor a run's sweep of its user (the caller bounds the wait). */
async function subprocessesGone(): Promise<void> {
  while (runningSubprocessCount() > 0 || openUserRuns() > 0) await new Promise((r) => setTimeout(r, 50));
}
