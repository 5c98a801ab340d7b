// `warren run <agent> --prompt "…"`: one activation in the foreground, no queue, for trying an agent by hand,
// on the executors and with the context pieces the daemon uses (services/composition.ts).
// Hub writes happen only with --post; without it the hub tools read the configured hub (when an admin key is
// set) and writes are a dry run the model is told about; a CLI agent gets no hub MCP server at all. Exit code:
// 0 answered (final, stop_tool, no_action), 2 stopped by a limit or a guard, 1 an error.
// An agent with memory recalls as in the daemon; a run by hand writes to memory only through memory_save, and
// only with --post (README "Memory").
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import type { RedisClient } from '../../redis/scripts.ts';
import type { RedisTarget } from '../../redis/connect.ts';
import { definitionForTrigger } from '../../activation/activation-model.ts';
import type { ActivationEvent } from '../../agent-loop/events.ts';
import type { TerminationReason } from '../../agent-loop/termination.ts';
import { assertNever, type OutcomeKind, type RunOutcome } from '../../executors/run-outcome.ts';
import type { HubAdapter } from '../../hub-client/adapter.ts';
import type { ActivationTask } from '../../prompts/activation-context.ts';
import type { DailyCounters } from '../../scheduler/agent-state.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { loadWarrenConfig, type WarrenConfig } from '../../services/config.ts';
import type { Logger } from 'pino';
import type { AgentMemory } from '../../memory/agent-memory.ts';
import type { Redactor } from '../../services/redact.ts';
import type { SecretSource } from '../../services/secrets.ts';
import type { WriteAllowance } from '../../scheduler/write-allowance.ts';

export interface RunOptions {
  /** Exactly one of these three says what the agent works on. */
  prompt?: string;
  /** Build the real exploration context from the hub's discover feed. */
  explore?: boolean;
  /** Build the real context of this notification (its thread) from the hub. */
  notification?: string;
  json?: boolean;
  /** Ask the model for a streamed answer, shown as it arrives (default on; `--no-stream` turns it off). */
  stream?: boolean;
  /** Record the model's HTTP traffic to this cassette file. */
  record?: string;
  /** Answer model calls from this cassette, offline, checking each request is the recorded one. */
  replay?: string;
  post?: boolean;
  agents?: string;
  config: string;
}

/** The activation record printed by --json. */
export interface RunRecord {
  activation_id: string;
  agent: string;
  termination: TerminationReason;
  /** How the run ended (executors/run-outcome.ts). */
  outcome: OutcomeKind;
  partial: boolean;
  text: string;
  usage: { input_tokens: number; output_tokens: number; cost_usd: number };
  steps: number;
  events: ActivationEvent[];
}

/** 0 answered (or decided not to), 2 stopped by a limit or a guard (a partial answer included), 1 failed. */
export function exitCodeFor(o: RunOutcome): 0 | 1 | 2 {
  switch (o.kind) {
    case 'answered':
      return o.partial ? 2 : 0;
    case 'posted_by_tool':
    case 'no_action':
      return 0;
    case 'guard_stop':
    case 'limit_stop':
      return 2;
    case 'retryable_failure':
    case 'terminal_failure':
    case 'aborted':
      return 1;
    default:
      return assertNever(o);
  }
}

/**
 * What the terminal shows of a run as it goes: one line per step and per tool call, and the model's
 * streamed text as it arrives (indented under a `…`), ended before the next line.
 */
export class ProgressPrinter {
  #open = false;

  /** The text to write for one event ('' for none). */
  write(e: ActivationEvent): string {
    if (e.type === 'model_delta') {
      const text = e.text.replace(/\n/g, '\n    ');
      if (this.#open) return text;
      this.#open = true;
      return `  … ${text.trimStart()}`;
    }
    const line = progressLine(e);
    const close = this.close();
    return line === undefined ? close : `${close}${line}\n`;
  }

  /** Ends a streamed line still open. */
  close(): string {
    if (!this.#open) return '';
    this.#open = false;
    return '\n';
  }
}

/** One progress line per step and per tool call; undefined for events not worth a line. */
export function progressLine(e: ActivationEvent): string | undefined {
  switch (e.type) {
    case 'step_start':
      return `step ${e.step}/${e.max_steps}`;
    case 'tool_call':
      return `  → ${e.name} ${truncate(JSON.stringify(e.arguments), 120)}`;
    case 'tool_result':
      return `  ← ${e.name}: ${e.status} ${truncate(e.excerpt.replace(/\s+/g, ' '), 120)}`;
    case 'model_fallback':
      return `  ! falling back from ${e.from} to ${e.to}`;
    case 'loop_warning':
      return e.kind === 'repair' ? undefined : `  ! ${e.message}`;
    case 'error':
      return `  ! ${e.message}`;
    default:
      return undefined;
  }
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('run one activation of an agent in the foreground (exit 0 answered, 2 stopped by a limit or guard, 1 error)')
    .argument('<agent>', 'agent name')
    .option('-p, --prompt <text>', 'the task given to the agent')
    .option('--explore', 'the real exploration context: the discover feed for the agent’s interests (needs the hub)')
    .option('--notification <id>', 'the real context of one of the agent’s notifications: its thread (needs the hub)')
    .option('--json', 'print the activation record as JSON instead of progress lines')
    .option('--no-stream', 'ask the model for whole answers instead of streamed ones')
    .option('--record <file>', 'record the model calls (HTTP requests and answers) to a cassette file')
    .option('--replay <file>', 'answer the model calls from a cassette, offline; a request that differs from the recorded one fails the run')
    .option('--post', 'let the agent write to the configured hub (default: writes are a dry run)')
    .option('--agents <dir>', 'agents folder or store root (default: store.path of warren.yaml)')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .action(async (agent: string, opts: RunOptions) => {
      process.exitCode = await runAgent(agent, opts);
    });
}

export async function runAgent(agentName: string, opts: RunOptions, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const sources = [opts.prompt !== undefined, opts.explore === true, opts.notification !== undefined].filter(Boolean).length;
  if (sources !== 1) {
    console.error('warren: give exactly one of --prompt "…", --explore or --notification <id>');
    return 1;
  }
  if (opts.record && opts.replay) {
    console.error('warren: give --record or --replay, not both');
    return 1;
  }
  const config = loadWarrenConfig(opts.config, env);
  const { LocalFolderStore } = await import('../../store/local-store.ts');
  const { formatProblem } = await import('../../store/problems.ts');
  const store = new LocalFolderStore(opts.agents ?? config.store.path);
  const { agents, problems } = await store.load();
  const def = agents.find((a) => a.name === agentName);
  if (!def) {
    for (const p of problems.filter((x) => x.severity === 'error')) console.error(formatProblem(p));
    console.error(`warren: no valid agent named ${agentName} in ${store.agentsDir}`);
    return 1;
  }
  const { EventLog } = await import('../../agent-loop/events.ts');
  const { Redactor } = await import('../../services/redact.ts');
  const { knownSecrets, secretNamesOf } = await import('../../services/known-secrets.ts');
  const { SecretSource } = await import('../../services/secrets.ts');
  const { startCliIsolation } = await import('../../services/cli-isolation.ts');
  const { redactingWrites } = await import('../../services/redacting-hub.ts');
  const { buildExecutors, contextSources, startHubMcp } = await import('../../services/composition.ts');
  const { runTurn } = await import('../../activation/run-turn.ts');
  const { pino } = await import('pino');
  const logger = pino({ level: 'warn' }, process.stderr);
  // The daemon's secrets, redaction, write limits and CLI isolation: a run by hand is held to the same lines.
  const secrets = new SecretSource({ env, dir: config.secrets.dir });
  const adminKey = secrets.get(config.hub.admin_key_env);
  const redactor = new Redactor([...knownSecrets(env, config, agents), ...secretNamesOf(config, agents).flatMap((n) => secrets.get(n) ?? []), ...(adminKey ? [adminKey] : []), ...secrets.fileValues()]);
  const cassettes = await import('../../executors/llm/cassette.ts');
  const recording = opts.record ? cassettes.emptyCassette() : undefined;
  const replayer = opts.replay ? cassettes.replayingFetch(await cassettes.readCassette(opts.replay)) : undefined;
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    // A CLI agent gets warren's hub MCP server only with --post: then it writes through the gateway as the
    // daemon's agents do. Without --post it gets none (reads included), so nothing it does reaches the hub.
    // Writes for real count against the agent's limits in the daemon's Redis, as the daemon's do.
    const writes = opts.post ? await writeAllowance(config.redis, config.redis.prefix) : undefined;
    if (writes) cleanups.push(writes.close);
    // Memory as the daemon's: recalled into the context, searched with memory_search. Written (memory_save) only
    // with --post; nothing is remembered of the run itself, whose answer is printed here, not posted.
    const memory = await agentMemory(config, secrets, redactor, logger, opts.post !== true);
    cleanups.push(() => memory.store.close());
    const hubMcp = opts.post && adminKey ? await startHubMcp({ hubUrl: config.hub.url, adminKey, logger, writes: writes?.allowance, memory, redact: (text) => redactor.redact(text) }) : undefined;
    if (hubMcp) cleanups.push(hubMcp.close);
    const connected = await connectHub(config.hub.url, adminKey, opts.post === true);
    const hub = connected ? redactingWrites(connected, (text) => redactor.redact(text)) : undefined;
    // Today's counters live in the daemon's Redis; read only when this run works against the configured hub.
    const counters = hub ? redisCounters(config.redis, config.redis.prefix) : undefined;
    if (counters) cleanups.push(counters.close);
    const context = contextSources(config, env, counters?.usedToday);
    const warn = (what: string, err: unknown): void => console.error(`warren: ${what}: ${err instanceof Error ? err.message : String(err)}`);
    const executors = buildExecutors({
      config,
      env,
      redactor,
      hubMcp: hubMcp?.launcher,
      agents: { get: (name) => agents.find((a) => a.name === name) },
      writes: writes?.allowance,
      secret: (name) => secrets.get(name),
      runAs: await startCliIsolation(config, secrets, logger),
      memory,
      llm: {
        // In the foreground the answer is watched as it is written; the daemon follows executors.llm.stream.
        stream: opts.stream ?? true,
        fetch: recording ? cassettes.recordingFetch(recording) : replayer?.fetch,
        // Secrets by name only: the executor never sees the environment as a whole. A replay needs no key.
        secret: (name) => secrets.get(name) || (replayer && name === def.config.brain.api_key_env ? 'replayed' : undefined),
      },
    });
    const resolved = executors.resolve(def);
    if ('unavailable' in resolved) {
      console.error(`warren: agent ${agentName} cannot run: ${resolved.unavailable}`);
      return 1;
    }
    const activationId = `run_${randomBytes(6).toString('hex')}`;
    const printer = new ProgressPrinter();
    const events = new EventLog(activationId, { limit: 10_000, listener: opts.json ? undefined : (e) => process.stdout.write(printer.write(e)) });
    const ac = new AbortController();
    const onSigint = (): void => ac.abort();
    process.once('SIGINT', onSigint);
    cleanups.push(() => void process.off('SIGINT', onSigint));
    const { startTracing } = await import('../tracing-setup.ts');
    const tracing = startTracing(config.tracing, logger);
    if (tracing) cleanups.push(() => tracing.shutdown());
    events.emit({ type: 'activation_start', agent: def.name, executor: def.config.type });
    const task = await runTask(def, opts, hub);
    // --explore runs on the model the daemon would use for an exploration (brain.exploration_model when set).
    const { result, outcome } = await runTurn({ ...context, hub, memory, onWarning: warn }, definitionForTrigger(def, opts.explore ? 'exploration' : 'notification'), task, ac.signal, { id: activationId, events, executor: resolved.executor });
    if (opts.json) {
      const record: RunRecord = {
        activation_id: activationId,
        agent: def.name,
        termination: result.termination,
        outcome: outcome.kind,
        partial: result.partial,
        text: result.text,
        usage: { input_tokens: result.usage.inputTokens, output_tokens: result.usage.outputTokens, cost_usd: result.usage.costUsd ?? 0 },
        steps: result.steps,
        events: events.events,
      };
      console.log(JSON.stringify(record));
    } else {
      process.stdout.write(printer.close());
      console.log(`${result.termination}${result.partial ? ' (partial)' : ''} after ${result.steps} step${result.steps === 1 ? '' : 's'}, ${result.usage.inputTokens + result.usage.outputTokens} tokens`);
      if (result.text) console.log(`\n${result.text}`);
      if (result.error) console.error(`warren: ${result.error.message}`);
    }
    if (recording && opts.record) await cassettes.writeCassette(opts.record, recording);
    if (replayer && replayer.remaining() > 0) replayer.mismatches.push(`the run made fewer model calls than recorded: ${replayer.remaining()} left unused`);
    if (replayer?.mismatches.length) {
      for (const m of replayer.mismatches) console.error(`warren: ${m}`);
      return 1;
    }
    return exitCodeFor(outcome);
  } finally {
    for (const c of cleanups.reverse()) await c();
  }
}

/** The agents' memory on the daemon's store (opened on first use: an agent without memory opens nothing). */
async function agentMemory(config: WarrenConfig, secrets: SecretSource, redactor: Redactor, logger: Logger, readOnly: boolean): Promise<AgentMemory> {
  const { AgentMemory } = await import('../../memory/agent-memory.ts');
  const { LazyMemoryStore } = await import('../../memory/lazy-memory-store.ts');
  const { openMemoryStore } = await import('../../memory/open-memory-store.ts');
  const { embedderOf } = await import('../../memory/embeddings-client.ts');
  return new AgentMemory({
    store: new LazyMemoryStore(() => openMemoryStore(config.memory.store)),
    redact: (text) => redactor.redact(text),
    logger,
    embedder: embedderOf(config.memory.embeddings, (name) => secrets.get(name)),
    readOnly,
  });
}

/** What the agent works on: the prompt as given, or the real feed or notification thread read from the hub. */
async function runTask(def: AgentDefinition, opts: RunOptions, hub: HubAdapter | undefined): Promise<ActivationTask> {
  if (opts.prompt !== undefined) return { kind: 'prompt', text: opts.prompt };
  if (!hub) throw new Error(`--${opts.explore ? 'explore' : 'notification'} reads the hub: set its admin key (hub.admin_key_env, WARREN_HUB_ADMIN_KEY by default)`);
  if (opts.explore) {
    const { filterFeed } = await import('../../prompts/exploration.ts');
    const interests = def.config.interests;
    const feed = filterFeed(def, await hub.discover(def.name, { communities: interests.communities, keywords: [...interests.keywords, ...interests.topics], excludeResponded: true, limit: 10 }));
    if (feed.length === 0) console.error('warren: the discover feed is empty for this agent; the model sees an empty feed');
    return { kind: 'exploration', feed };
  }
  const { notifications } = await hub.listNotifications(def.name, { limit: 100 });
  const n = notifications.find((x) => x.id === opts.notification);
  if (!n) throw new Error(`no notification ${opts.notification} among ${def.name}'s latest ${notifications.length}`);
  if (!n.post_id) throw new Error(`notification ${n.id} (${n.type}) has no thread to answer`);
  return { kind: 'notification', post: await hub.getPost(n.post_id, { includeComments: true }), notification: n };
}

/**
 * Today's posts and comments from the daemon's Redis, for the "left today" lines. One try, no reconnects: a run
 * by hand must not wait on a Redis that is not there (the line is then left out, with a warning).
 */
function redisCounters(target: RedisTarget, prefix: string): { usedToday: (agent: string) => Promise<DailyCounters | undefined>; close: () => void } {
  let conn: RedisClient | undefined;
  return {
    usedToday: async (agent) => {
      const { AgentStateStore } = await import('../../scheduler/agent-state.ts');
      const { connectOnce, describeRedis } = await import('../../redis/connect.ts');
      if (!conn) {
        conn = await connectOnce(target, 1_000).catch((err: unknown) => {
          throw new Error(`cannot reach Redis at ${describeRedis(target)}`, { cause: err });
        });
      }
      return (await new AgentStateStore(conn, prefix).dailyMany([agent])).get(agent);
    },
    close: () => conn?.disconnect(),
  };
}

/** The agents' write limits in the daemon's Redis; --post refuses to run without them. */
async function writeAllowance(target: RedisTarget, prefix: string): Promise<{ allowance: WriteAllowance; close: () => void }> {
  const { WriteAllowance } = await import('../../scheduler/write-allowance.ts');
  const { connectOnce, describeRedis } = await import('../../redis/connect.ts');
  const conn = await connectOnce(target, 2_000).catch((err: unknown) => {
    throw new Error(`--post counts the agent's writes against its limits in Redis at ${describeRedis(target)}, which does not answer (${err instanceof Error ? err.message : String(err)}); start Redis or set REDIS_URL`);
  });
  return { allowance: new WriteAllowance(conn, prefix), close: () => conn.disconnect() };
}

/** The configured hub when an admin key is set; without --post its writes become a dry run. */
async function connectHub(url: string, adminKey: string | undefined, post: boolean): Promise<HubAdapter | undefined> {
  if (!adminKey) {
    if (post) throw new Error('--post needs the hub admin key (hub.admin_key_env, WARREN_HUB_ADMIN_KEY by default)');
    return undefined;
  }
  const { HubClient } = await import('../../hub-client/client.ts');
  const hub = new HubClient({ baseUrl: url, apiKey: adminKey });
  return post ? hub : dryRunWrites(hub);
}

/** Reads go to the hub; posts and comments are answered locally and never sent. */
export function dryRunWrites(hub: HubAdapter): HubAdapter {
  const now = (): string => new Date().toISOString();
  const fakeAuthor = { id: 'dry-run', name: 'dry-run' };
  return new Proxy(hub, {
    get(target, prop, receiver) {
      if (prop === 'createPost') return (p: { content: string; title?: string; community?: string }) => Promise.resolve({ id: 'dry-run-post', title: p.title ?? null, author: fakeAuthor, content: `[dry run, not posted] ${p.content}`, community: p.community ?? null, created_at: now() });
      if (prop === 'createComment') return (c: { postId: string; content: string; parentId?: string | null }) => Promise.resolve({ id: 'dry-run-comment', post_id: c.postId, parent_id: c.parentId ?? null, author: fakeAuthor, content: `[dry run, not posted] ${c.content}`, created_at: now() });
      const v: unknown = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
