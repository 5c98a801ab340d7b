// The composition root: openServices(config, env, role) is the one place a warren process opens its services from
// warren.yaml, whatever the process is. The role decides what is opened: the daemon gets everything an activation
// needs (Redis, the hub, the write allowance, agent state, memory, the executors, CLI isolation, the store); `warren
// run` the same pieces for one run by hand, held to the same lines (redaction, write limits with --post, memory,
// CLI isolation); `warren doctor` the executors it checks; the ops commands Redis, agent state, the store and the
// readers `status` needs. What a role does not use is not opened, and what is heavy to load (the executors, the
// model SDKs, the embedded hub) is loaded only by the roles that use it. The bundle closes what it opened.
import { pino, type Logger } from 'pino';
import type { HubAdapter } from '../hub-client/adapter.ts';
import type { HubClient } from '../hub-client/client.ts';
import type { HubMcpLauncher } from '../executors/cli/mcp.ts';
import type { SpawnProposals } from '../agent-loop/propose-agent.ts';
import type { FetchFn } from '../executors/llm/cassette.ts';
import type { FleetSource } from '../local-hub/watch/fleet.ts';
import type { SeedFile } from '../local-hub/seed.ts';
import type { AgentMemory } from '../memory/agent-memory.ts';
import type { DistillModel } from '../memory/distiller.ts';
import type { MemoryStore } from '../memory/memory-store.ts';
import type { RedisClient } from '../redis/scripts.ts';
import type { AgentStateStore } from '../scheduler/agent-state.ts';
import type { ApprovalRequest } from '../scheduler/approval-store.ts';
import type { WriteAllowance } from '../scheduler/write-allowance.ts';
import type { AgentDefinition, DefinitionStore, LoadResult } from '../store/definition.ts';
import type { WarrenConfig } from './config.ts';
import type { ExecutorRegistry } from './executor-registry.ts';
import { knownSecrets, secretNamesOf } from './known-secrets.ts';
import { Redactor } from './redact.ts';
import type { ContextSources } from './runtime.ts';
import { SecretSource } from './secrets.ts';
import { layoutOf } from '../redis/key-layout.ts';

/** What one agent turn uses of its process's services (activation/run-turn.ts). */
export interface TurnServices extends ContextSources {
  /** The process's redaction: every piece of the context passes it before a model or a CLI sees it (run-turn.ts). */
  redact: (text: string) => string;
  /** The hub: its budget answer goes into the context, and the agent's hub tools act on it. Absent: neither. */
  hub?: HubAdapter;
  /** Agents with `memory.enabled` are reminded of what fits the task. */
  memory?: AgentMemory;
  /** A context piece that could not be read (budget, today's counters): the turn goes on without it. */
  onWarning?: (what: string, err: unknown) => void;
  /** Notes for the agent's next run (what became of its proposals of new agents), taken once read. */
  takeNotes?: (agent: string) => Promise<string[]>;
}

/** Agent definitions by name, looked up when needed (delegation, a Moltbook challenge); the daemon's registry. */
export interface AgentLookup {
  get(name: string): AgentDefinition | undefined;
}

export interface DaemonRole {
  name: 'daemon';
  logger: Logger;
  /** Whether this process runs activations (not a scheduler-only one): only then are CLI agents' hub MCP gateway and users started. */
  runsActivations: boolean;
  /** Late-bound: the registry is built from these services. */
  agents: AgentLookup;
  /** The hub MCP server CLI agents post through; default `warren mcp hub` when this build has it; null: none. */
  hubMcp?: HubMcpLauncher | null;
  /** Demo content for the embedded hub (`warren start --seed`). */
  seed?: SeedFile;
  /** The daemon's live state, for the embedded hub's watch page. */
  fleet: FleetSource;
  /** Every log line passes the redaction from the moment it exists (daemon/logger.ts). */
  redactLogs: (redact: (line: string) => string) => void;
  /** Entries evicted for an agent over max_size_mb (metrics). */
  onMemoryEvicted?: (agent: string, count: number) => void;
  /** Told of each CLI agent's hub write held for approval (README "Approvals"): logs and outbound events. */
  onApprovalRequested?: (request: ApprovalRequest) => void;
  /** Late-bound: where `propose_agent` calls are checked and filed (activation/spawn-proposals.ts); absent: not offered. */
  proposals?: SpawnProposals;
}

export interface RunRole {
  name: 'run';
  logger: Logger;
  /** The agents loaded for the run: their secrets are redacted, and a delegate is looked up among them. */
  agents: readonly AgentDefinition[];
  /** `--post`: writes reach the hub (counted against the agent's limits in Redis) and memory may be written. */
  post: boolean;
  /** What the run changes in the in-process loop: streaming, a cassette's fetch. */
  llm: { stream: boolean; fetch?: FetchFn };
  /** A key variable a replayed run answers for itself (a replay makes no model call, so it needs no key). */
  replayedKey?: string;
  /** Context pieces that could not be read, said on the terminal. */
  onWarning: (what: string, err: unknown) => void;
}

export interface DoctorRole {
  name: 'doctor';
}

export interface OpsRole {
  name: 'ops';
}

export type ServicesRole = DaemonRole | RunRole | DoctorRole | OpsRole;

/** Something a bundle opened; `stage` is when the daemon's bounded shutdown (daemon/shutdown.ts) closes it. */
export interface Closer {
  name: string;
  stage: 'connections' | 'services';
  boundMs: number;
  close: () => Promise<void>;
}

interface Bundle {
  secrets: SecretSource;
  /** What was opened, in order (the daemon hands them to its staged shutdown). */
  closers: readonly Closer[];
  /** Closes what was opened, the last first, each within its bound; throws ServicesCloseError naming what did not close. */
  close(): Promise<void>;
}

export interface DaemonServices extends Bundle, TurnServices {
  redis: RedisClient;
  hub: HubAdapter;
  /** The hub's URL and admin key: the embedded hub's when it runs here (its key generated when none was set). */
  hubUrl: string;
  adminKey: string | undefined;
  /** The embedded hub's key when no variable set it: generated now, or kept from an earlier start in `adminKeyFile`. */
  generatedAdminKey: string | undefined;
  /** Where that key is kept (services/hub-admin-key.ts); undefined for an in-memory hub or a key from the variable. */
  adminKeyFile: string | undefined;
  /** The embedded hub's watch page operator link (`/?token=…`; printed at start), when the hub runs here. */
  watchUrl: string | undefined;
  redactor: Redactor;
  /** Teaches the redactor the secrets the agents name and every secret file's value (at each reload, after `secrets.reread()`). */
  learnSecretsOf(defs: readonly AgentDefinition[]): void;
  writes: WriteAllowance;
  agentState: AgentStateStore;
  memory: AgentMemory;
  memoryStore: MemoryStore;
  executors: ExecutorRegistry;
  store: DefinitionStore & { close?: () => void };
}

export interface RunServices extends Bundle, TurnServices {
  redactor: Redactor;
  /** Writes admitted against the agents' limits in the daemon's Redis; only with --post. */
  writes: WriteAllowance | undefined;
  memory: AgentMemory;
  executors: ExecutorRegistry;
}

export interface DoctorServices extends Bundle {
  executors: ExecutorRegistry;
}

export interface OpsServices extends Bundle {
  /** Redis, opened on first use and checked at once (RedisUnreachableError when it does not answer within `timeoutMs`). */
  redis(timeoutMs?: number): Promise<RedisClient>;
  agentState(): Promise<AgentStateStore>;
  /** The agent definitions, read once from the store warren.yaml names. */
  definitions(): Promise<LoadResult>;
  /** The memory store, read-only; undefined when there is none to read or it does not open. */
  memoryReader(): Promise<MemoryStore | undefined>;
  /** The hub with the admin key, for the budget; undefined without one (and on Moltbook, which has none). */
  budgetHub: HubClient | undefined;
  /** Why there is no budgetHub, for `warren status` (e.g. no admin key, and where it was looked for). */
  noBudget: string | undefined;
}

/** Closing some services failed or outlived its bound. */
export class ServicesCloseError extends Error {
  override readonly name = 'ServicesCloseError';
  /** What did not close, by name. */
  readonly unclosed: string[];
  constructor(unclosed: Array<{ name: string; error: unknown }>) {
    super(`could not close ${unclosed.map((u) => `${u.name} (${u.error instanceof Error ? u.error.message : String(u.error)})`).join(', ')}`, { cause: unclosed[0]?.error });
    this.unclosed = unclosed.map((u) => u.name);
  }
}

export function openServices(config: WarrenConfig, env: NodeJS.ProcessEnv, role: DaemonRole): Promise<DaemonServices>;
export function openServices(config: WarrenConfig, env: NodeJS.ProcessEnv, role: RunRole): Promise<RunServices>;
export function openServices(config: WarrenConfig, env: NodeJS.ProcessEnv, role: DoctorRole): Promise<DoctorServices>;
export function openServices(config: WarrenConfig, env: NodeJS.ProcessEnv, role: OpsRole): Promise<OpsServices>;
export async function openServices(config: WarrenConfig, env: NodeJS.ProcessEnv, role: ServicesRole): Promise<DaemonServices | RunServices | DoctorServices | OpsServices> {
  const opened = new Opened();
  try {
    switch (role.name) {
      case 'daemon':
        return await openDaemon(config, env, role, opened);
      case 'run':
        return await openRun(config, env, role, opened);
      case 'doctor':
        return await openDoctor(config, env, opened);
      case 'ops':
        return await openOps(config, env, opened);
      default: {
        const never: never = role;
        throw new Error(`unknown services role ${JSON.stringify(never)}`);
      }
    }
  } catch (err) {
    // Nothing is left open by a start that failed half-way; the start's own error is the one that matters.
    await opened.close().catch(() => undefined);
    throw err;
  }
}

/** What a bundle opened, in order; closed the last first, each within its bound. */
class Opened {
  readonly closers: Closer[] = [];

  add(name: string, stage: Closer['stage'], boundMs: number, close: () => unknown): void {
    this.closers.push({ name, stage, boundMs, close: async () => void (await close()) });
  }

  async close(): Promise<void> {
    const unclosed: Array<{ name: string; error: unknown }> = [];
    for (const c of this.closers.splice(0).reverse()) {
      const error = await closedWithin(c);
      if (error !== undefined) unclosed.push({ name: c.name, error });
    }
    if (unclosed.length) throw new ServicesCloseError(unclosed);
  }

  bundle(secrets: SecretSource): Bundle {
    return { secrets, closers: this.closers, close: () => this.close() };
  }
}

/** Undefined when `c` closed within its bound; otherwise why not. */
async function closedWithin(c: Closer): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Error>((resolve) => {
    timer = setTimeout(() => resolve(new Error(`not closed within ${c.boundMs} ms`)), c.boundMs);
  });
  try {
    return await Promise.race([c.close().then(() => undefined, (err: unknown) => err ?? new Error('failed')), late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Error posts, records, logs, span payloads and what agents write share one redaction: every secret warren.yaml
 * or an agent names (whatever its name), from the environment or a secret file, the hub's admin key, and every
 * value of a secret file.
 */
function redactorFor(config: WarrenConfig, env: NodeJS.ProcessEnv, secrets: SecretSource, adminKey: string | undefined, agents: readonly AgentDefinition[]): Redactor {
  return new Redactor([...namedSecrets(config, env, secrets, agents), ...(adminKey ? [adminKey] : []), ...secrets.fileValues(), ...redisPasswords(config.redis)]);
}

/** The Redis password, from warren.yaml's password_env / password_file or inside a URL: never to be logged or posted. */
function redisPasswords(redis: WarrenConfig['redis']): string[] {
  const inUrls = [redis.url, ...(redis.cluster ?? [])].flatMap((u) => {
    try {
      const p = new URL(u).password;
      return p ? [decodeURIComponent(p)] : [];
    } catch {
      return [];
    }
  });
  return [...new Set([...(redis.password ? [redis.password] : []), ...inUrls])];
}

function namedSecrets(config: WarrenConfig, env: NodeJS.ProcessEnv, secrets: SecretSource, agents: readonly AgentDefinition[]): string[] {
  return [...knownSecrets(env, config, agents), ...secretNamesOf(config, agents).flatMap((n) => secrets.get(n) ?? [])];
}

/** The agents' memory on the process's store (opened on first use: an agent without memory opens nothing). */
async function agentMemory(config: WarrenConfig, secrets: SecretSource, redactor: Redactor, logger: Logger, opts: { storeLogger?: Logger; readOnly?: boolean; onEvicted?: (agent: string, count: number) => void; distillModel?: DistillModel }): Promise<AgentMemory> {
  const { AgentMemory } = await import('../memory/agent-memory.ts');
  const { LazyMemoryStore } = await import('../memory/lazy-memory-store.ts');
  const { openMemoryStore } = await import('../memory/open-memory-store.ts');
  const { embedderOf } = await import('../memory/embeddings-client.ts');
  return new AgentMemory({
    store: new LazyMemoryStore(() => openMemoryStore(config.memory.store, opts.storeLogger)),
    redact: (text) => redactor.redact(text),
    logger,
    embedder: embedderOf(config.memory.embeddings, (name) => secrets.get(name)),
    ...(opts.readOnly ? { readOnly: true } : {}),
    ...(opts.onEvicted ? { onEvicted: opts.onEvicted } : {}),
    ...(opts.distillModel ? { distillModel: opts.distillModel } : {}),
  });
}

const QUICK_CLOSE_MS = 1_000;
const SLOW_CLOSE_MS = 2_000;

async function openDaemon(config: WarrenConfig, env: NodeJS.ProcessEnv, role: DaemonRole, opened: Opened): Promise<DaemonServices> {
  const { logger } = role;
  const { assertRedisReachable, closeRedis, connectRedis, describeRedis } = await import('../redis/connect.ts');
  // Connected and checked first, before any hub starts: a missing Redis is then one clear line. Every hub write an
  // agent makes is admitted on this connection.
  const redis = connectRedis(config.redis, 'producer', logger);
  opened.add('redis producer connection', 'connections', QUICK_CLOSE_MS, () => closeRedis(redis, QUICK_CLOSE_MS / 2));
  await assertRedisReachable(redis, config.redis);
  logger.info({ redis: describeRedis(config.redis), prefix: config.redis.prefix }, 'redis connected');

  const { hubBudget } = await import('./config.ts');
  let hubUrl = config.hub.url;
  const secrets = new SecretSource({ env, dir: config.secrets.dir });
  let adminKey = secrets.get(config.hub.admin_key_env);
  let generatedAdminKey: string | undefined;
  let adminKeyFile: string | undefined;
  let watch: { url: string; token: string } | undefined;
  // Moltbook and Bluesky: no admin key, each agent acts with its own credentials (hub.agents).
  const moltbook = config.hub.type === 'moltbook' || config.hub.type === 'bluesky';
  // Checked here too: WARREN_HUB_EMBEDDED applies after warren.yaml is validated.
  if (moltbook && config.hub.embedded) throw new Error('hub.embedded serves warren\'s own hub; it cannot be combined with hub.type moltbook');
  if (config.hub.embedded) {
    const { startHub } = await import('../local-hub/server.ts');
    if (!adminKey) {
      // Kept next to the hub's database, so `warren hub user` and `warren status` find it and restarts keep it.
      const { keepAdminKey } = await import('./hub-admin-key.ts');
      const kept = keepAdminKey(config.hub, secrets);
      adminKey = kept.key;
      generatedAdminKey = kept.key;
      adminKeyFile = kept.path;
    }
    const { printWatchLink, watchTokenPath } = await import('../local-hub/watch/operator-token.ts');
    const embedded = await startHub({
      dbPath: config.hub.db,
      adminKey,
      host: config.hub.host,
      port: config.hub.port,
      watch: config.hub.watch,
      watchNetworks: config.hub.watch_networks,
      watchTokenFile: watchTokenPath(config.hub.db),
      onWatchLink: (link) => printWatchLink(link),
      budget: hubBudget(config.budget),
      fleet: role.fleet,
      logger: logger.child({ component: 'hub' }),
    });
    watch = { url: embedded.watchUrl, token: embedded.watchToken };
    opened.add('embedded hub', 'services', SLOW_CLOSE_MS, () => embedded.close());
    hubUrl = embedded.url;
    logger.info({ url: hubUrl, db: config.hub.db }, 'embedded hub listening');
    if (role.seed) {
      const { applySeed } = await import('../local-hub/seed.ts');
      logger.info({ ...(await applySeed(embedded.url, embedded.adminKey, role.seed)) }, 'hub seeded');
    }
  }
  if (role.seed && !config.hub.embedded) throw new Error('--seed needs the embedded hub (hub.embedded: true); seed a separate hub with `warren hub --seed`');
  // Moltbook has no admin key: each agent acts with its own (hub.agents).
  if (!adminKey && !moltbook) throw new Error(secrets.whyMissing(config.hub.admin_key_env) ?? `the hub's admin key is not set: export ${config.hub.admin_key_env} (or run with hub.embedded: true)`);
  if (adminKey) {
    // What `warren approvals` checks a key against when the hub does not answer (services/admin-key-check.ts).
    const { AdminKeyRecord } = await import('./admin-key-check.ts');
    await new AdminKeyRecord(redis, layoutOf(config.redis).home).record(adminKey).catch((err: unknown) => logger.warn({ err }, 'could not record the admin key\'s check; `warren approvals` needs the hub to check a key'));
  }
  const redactor = redactorFor(config, env, secrets, adminKey, []);
  const runtimeBluesky = config.hub.type === 'bluesky' ? await import('./runtime.ts') : undefined;
  const blueskyAccounts = runtimeBluesky?.blueskyAccounts(config, secrets, logger.child({ component: 'bluesky' }));
  // App passwords read from files are secrets the environment does not name: every log line masks them too.
  if (blueskyAccounts) redactor.learn([...blueskyAccounts.values()].map((a) => a.password));
  // The watch page's operator token is printed once (straight to stderr); every log line masks it.
  if (watch) redactor.learn([watch.token]);
  role.redactLogs((line) => redactor.redact(line));
  const runtime = await import('./runtime.ts');
  const { redactingWrites } = await import('./redacting-hub.ts');
  const { HubClient } = await import('../hub-client/client.ts');
  const { WriteAllowance } = await import('../scheduler/write-allowance.ts');
  const { AgentStateStore } = await import('../scheduler/agent-state.ts');
  const { ApprovalStore } = await import('../scheduler/approval-store.ts');
  // Whatever an agent writes through the daemon is redacted on its way to the hub (services/redacting-hub.ts).
  const hub: HubAdapter = redactingWrites(
    blueskyAccounts
      ? await runtime.openBlueskyHub(config, blueskyAccounts, redis, logger.child({ component: 'bluesky' }))
      : moltbook
      ? runtime.openMoltbookHub(config, secrets, redis, logger.child({ component: 'moltbook' }), (agent) => agentState.setPaused(agent, true),
        // Late-bound: a challenge the solver is unsure of goes to the agent's own model (built further down).
        async (agent, question, signal) => {
          const def = role.agents.get(agent);
          return def ? executors.ask(def, question, signal) : undefined;
        },
        (agent) => role.agents.get(agent)?.config.interests.communities ?? [])
      : new HubClient({ baseUrl: hubUrl, apiKey: adminKey!, logger: logger.child({ component: 'hub-client' }) }),
    (text) => redactor.redact(text),
  );
  const writes = new WriteAllowance(redis, layoutOf(config.redis));
  const agentState = new AgentStateStore(redis, layoutOf(config.redis));
  // Agents with memory.enabled remember through one store per process, opened when an agent first uses it.
  const memory = await agentMemory(config, secrets, redactor, logger.child({ component: 'memory' }), {
    storeLogger: logger.child({ component: 'memory' }),
    onEvicted: role.onMemoryEvicted,
    // Late-bound: memory.distill asks the agent's own model (the executors are built further down).
    distillModel: (def, req) => executors.complete(def, req),
  });
  opened.add('memory store', 'connections', SLOW_CLOSE_MS, () => memory.store.close());
  // CLI agents' hub MCP servers act through a loopback gateway with per-activation tokens, not the admin key.
  let hubMcp = role.hubMcp === null ? undefined : role.hubMcp;
  // Only processes that run activations need it; a scheduler-only process opens no gateway port.
  if (hubMcp === undefined && role.hubMcp !== null && role.runsActivations && adminKey && !moltbook) {
    // Writes that need approval are kept where the daemon's approval desk finds them (scheduler/approval-store.ts).
    const approvals = { store: new ApprovalStore(redis, config.redis.prefix), onRequested: role.onApprovalRequested };
    const served = await runtime.startHubMcp({ hubUrl, adminKey, writes, memory, approvals, proposals: role.proposals, redact: (text) => redactor.redact(text), logger: logger.child({ component: 'hub-gateway' }) });
    if (served) opened.add('hub gateway', 'services', QUICK_CLOSE_MS, served.close);
    hubMcp = served?.launcher;
  }
  // Late-bound like the agents: the counters are read only as activations run.
  const context = runtime.contextSources(config, env, (agent) => agentState.contributionsToday(agent));
  const { startCliIsolation } = await import('./cli-isolation.ts');
  // Before anything runs: leftovers of a daemon killed with -9 killed, and files an older warren left open closed.
  const runAs = role.runsActivations ? await startCliIsolation(config, secrets, logger, { sweepLeftovers: true }) : undefined;
  if (role.runsActivations) await (await import('./private-data.ts')).closePrivateData(config, runAs !== undefined, logger);
  // CLI agents as their own users are kept from the daemon's secrets; they must not reach an open Redis either.
  const { checkRedisExposure } = await import('./redis-exposure.ts');
  const cliRefused = runAs ? await checkRedisExposure(config, runAs.base, logger) : undefined;
  const executors = runtime.buildExecutors({
    config,
    env,
    redactor,
    hubMcp,
    agents: role.agents,
    writes,
    secret: (name) => secrets.get(name),
    runAs,
    memory,
    logger,
    cliRefused,
    proposals: role.proposals,
  });
  const { openStore } = await import('./open-store.ts');
  const store = await openStore(config.store, env, undefined, logger.child({ component: 'definitions' }));
  opened.add('store', 'services', QUICK_CLOSE_MS, () => store.close?.());
  return {
    ...opened.bundle(secrets),
    ...context,
    onWarning: (what, err) => logger.warn({ err }, what),
    redis,
    hub,
    hubUrl,
    adminKey,
    generatedAdminKey,
    adminKeyFile,
    watchUrl: watch?.url,
    redactor,
    redact: (text) => redactor.redact(text),
    learnSecretsOf: (defs) => redactor.learn([...namedSecrets(config, env, secrets, defs), ...secrets.fileValues()]),
    writes,
    agentState,
    memory,
    memoryStore: memory.store,
    executors,
    store,
  };
}

async function openRun(config: WarrenConfig, env: NodeJS.ProcessEnv, role: RunRole, opened: Opened): Promise<RunServices> {
  const { logger } = role;
  // The daemon's secrets, redaction, write limits and CLI isolation: a run by hand is held to the same lines.
  const secrets = new SecretSource({ env, dir: config.secrets.dir });
  const adminKey = secrets.get(config.hub.admin_key_env);
  const redactor = redactorFor(config, env, secrets, adminKey, role.agents);
  // A CLI agent gets warren's hub MCP server only with --post: then it writes through the gateway as the daemon's
  // agents do. Without --post it gets none (reads included), so nothing it does reaches the hub. Writes for real
  // count against the agent's limits in the daemon's Redis, as the daemon's do.
  const writes = role.post ? await writeAllowance(config) : undefined;
  if (writes) opened.add('write allowance', 'connections', QUICK_CLOSE_MS, writes.close);
  // Memory as the daemon's: recalled into the context, searched with memory_search. Written (memory_save) only with
  // --post; nothing is remembered of the run itself, whose answer is printed, not posted.
  const memory = await agentMemory(config, secrets, redactor, logger, { readOnly: !role.post });
  opened.add('memory store', 'connections', SLOW_CLOSE_MS, () => memory.store.close());
  const runtime = await import('./runtime.ts');
  const hubMcp = role.post && adminKey ? await runtime.startHubMcp({ hubUrl: config.hub.url, adminKey, logger, writes: writes?.allowance, memory, redact: (text) => redactor.redact(text) }) : undefined;
  if (hubMcp) opened.add('hub gateway', 'services', QUICK_CLOSE_MS, hubMcp.close);
  const connected = await connectHub(config.hub.url, adminKey, role.post);
  const { redactingWrites } = await import('./redacting-hub.ts');
  const hub = connected ? redactingWrites(connected, (text) => redactor.redact(text)) : undefined;
  // Today's counters live in the daemon's Redis; read only when this run works against the configured hub.
  const counters = hub ? redisCounters(config) : undefined;
  if (counters) opened.add('counters connection', 'connections', QUICK_CLOSE_MS, counters.close);
  const { startCliIsolation } = await import('./cli-isolation.ts');
  const runAs = await startCliIsolation(config, secrets, logger);
  // With --post the run's writes are held to limits kept in Redis: a CLI agent must not be able to rewrite them.
  const { checkRedisExposure } = await import('./redis-exposure.ts');
  const cliRefused = runAs && role.post ? await checkRedisExposure(config, runAs.base, logger) : undefined;
  const executors = runtime.buildExecutors({
    config,
    env,
    redactor,
    hubMcp: hubMcp?.launcher,
    agents: { get: (name) => role.agents.find((a) => a.name === name) },
    writes: writes?.allowance,
    secret: (name) => secrets.get(name),
    runAs,
    cliRefused,
    memory,
    logger,
    llm: {
      // In the foreground the answer is watched as it is written; the daemon follows executors.llm.stream.
      stream: role.llm.stream,
      fetch: role.llm.fetch,
      // Secrets by name only: the executor never sees the environment as a whole.
      secret: (name) => secrets.get(name) || (name === role.replayedKey ? 'replayed' : undefined),
    },
  });
  return { ...opened.bundle(secrets), ...runtime.contextSources(config, env, counters?.usedToday), hub, memory, onWarning: role.onWarning, redactor, redact: (text) => redactor.redact(text), writes: writes?.allowance, executors };
}

async function openDoctor(config: WarrenConfig, env: NodeJS.ProcessEnv, opened: Opened): Promise<DoctorServices> {
  const secrets = new SecretSource({ env, dir: config.secrets.dir });
  const { buildExecutors } = await import('./runtime.ts');
  // The executors as the daemon builds them, so doctor says what the daemon will find; it runs no agent, so it
  // needs no hub, memory, users or delegation.
  const executors = buildExecutors({ config, env, redactor: redactorFor(config, env, secrets, secrets.get(config.hub.admin_key_env), []), agents: { get: () => undefined }, secret: (name) => secrets.get(name) });
  return { ...opened.bundle(secrets), executors };
}

async function openOps(config: WarrenConfig, env: NodeJS.ProcessEnv, opened: Opened): Promise<OpsServices> {
  const secrets = new SecretSource({ env, dir: config.secrets.dir });
  let redis: Promise<RedisClient> | undefined;
  let memory: Promise<MemoryStore | undefined> | undefined;
  let definitions: Promise<LoadResult> | undefined;
  // The variable, else the key file an embedded hub keeps beside its database (services/hub-admin-key.ts).
  const { findAdminKey, missingAdminKeyHint } = await import('./hub-admin-key.ts');
  let adminKey: string | undefined;
  let noBudget: string | undefined;
  try {
    adminKey = findAdminKey(config.hub, secrets)?.key;
    if (!adminKey) noBudget = missingAdminKeyHint(config.hub);
  } catch (err) {
    noBudget = err instanceof Error ? err.message : String(err);
  }
  const open = {
    redis: (timeoutMs = 3_000): Promise<RedisClient> => {
      redis ??= (async () => {
        const { openCheckedRedis } = await import('../redis/connect.ts');
        const conn = await openCheckedRedis(config.redis, timeoutMs);
        opened.add('redis connection', 'connections', QUICK_CLOSE_MS, () => conn.disconnect());
        return conn;
      })();
      // A Redis that did not answer is asked again next time, not remembered as down.
      redis.catch(() => (redis = undefined));
      return redis;
    },
    agentState: async (): Promise<AgentStateStore> => {
      const { AgentStateStore } = await import('../scheduler/agent-state.ts');
      return new AgentStateStore(await open.redis(), layoutOf(config.redis));
    },
    definitions: (): Promise<LoadResult> =>
      (definitions ??= (async () => {
        const { openStore } = await import('./open-store.ts');
        const store = await openStore(config.store, env); // the folder or the bucket warren.yaml names
        try {
          return await store.load();
        } finally {
          store.close?.();
        }
      })()),
    memoryReader: (): Promise<MemoryStore | undefined> =>
      (memory ??= (async () => {
        const { openMemoryStore } = await import('../memory/open-memory-store.ts');
        const { isPostgresUrl } = await import('../memory/store-location.ts');
        const { existsSync } = await import('node:fs');
        // A SQLite file not created yet holds nothing: read as empty, without creating it (reading changes nothing).
        const location = isPostgresUrl(config.memory.store) || existsSync(config.memory.store) ? config.memory.store : ':memory:';
        const store = await openMemoryStore(location).catch(() => undefined);
        if (store) opened.add('memory store', 'connections', SLOW_CLOSE_MS, () => store.close());
        return store;
      })()),
  };
  // The hub's budget answers with the admin key; Moltbook has none. Read quietly: a report, not a log.
  const { HubClient } = await import('../hub-client/client.ts');
  const moltbook = config.hub.type === 'moltbook' || config.hub.type === 'bluesky';
  const budgetHub = adminKey && !moltbook ? new HubClient({ baseUrl: config.hub.url, apiKey: adminKey, logger: pino({ level: 'silent' }) }) : undefined;
  return { ...opened.bundle(secrets), ...open, budgetHub, noBudget: moltbook ? `${config.hub.type === 'bluesky' ? 'Bluesky' : 'Moltbook'} keeps no budget` : noBudget };
}

/** The agents' write limits in the daemon's Redis; --post refuses to run without them. */
async function writeAllowance(config: WarrenConfig): Promise<{ allowance: WriteAllowance; close: () => void }> {
  const { WriteAllowance } = await import('../scheduler/write-allowance.ts');
  const { connectOnce, describeRedis } = await import('../redis/connect.ts');
  const conn = await connectOnce(config.redis, 2_000).catch((err: unknown) => {
    throw new Error(`--post counts the agent's writes against its limits in Redis at ${describeRedis(config.redis)}, which does not answer (${err instanceof Error ? err.message : String(err)}); start Redis or set REDIS_URL`);
  });
  return { allowance: new WriteAllowance(conn, layoutOf(config.redis)), close: () => conn.disconnect() };
}

/**
 * Today's posts and comments from the daemon's Redis, for the "left today" lines. One try, no reconnects: a run
 * by hand must not wait on a Redis that is not there (the line is then left out, with a warning).
 */
function redisCounters(config: WarrenConfig): { usedToday: (agent: string) => Promise<{ posts: number; comments: number } | undefined>; close: () => void } {
  let conn: RedisClient | undefined;
  return {
    usedToday: async (agent) => {
      const { AgentStateStore } = await import('../scheduler/agent-state.ts');
      const { connectOnce, describeRedis } = await import('../redis/connect.ts');
      if (!conn) {
        conn = await connectOnce(config.redis, 1_000).catch((err: unknown) => {
          throw new Error(`cannot reach Redis at ${describeRedis(config.redis)}`, { cause: err });
        });
      }
      return (await new AgentStateStore(conn, layoutOf(config.redis)).dailyMany([agent])).get(agent);
    },
    close: () => conn?.disconnect(),
  };
}

/** The configured hub when an admin key is set; without --post its writes become a dry run. */
async function connectHub(url: string, adminKey: string | undefined, post: boolean): Promise<HubAdapter | undefined> {
  if (!adminKey) {
    if (post) throw new Error('--post needs the hub admin key (hub.admin_key_env, WARREN_HUB_ADMIN_KEY by default)');
    return undefined;
  }
  const { HubClient } = await import('../hub-client/client.ts');
  const hub = new HubClient({ baseUrl: url, apiKey: adminKey });
  if (post) return hub;
  const { dryRunWrites } = await import('./dry-run-hub.ts');
  return dryRunWrites(hub);
}
