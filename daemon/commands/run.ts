// `warren run <agent> --prompt "…"`: one activation in the foreground, no queue, for trying an agent by hand: the
// services opened as the daemon opens them (services/composition.ts, role `run`) and one turn as the daemon's
// activations take it (activation/run-turn.ts).
// Hub writes happen only with --post; without it the hub tools read the configured hub (when an admin key is
// set) and writes are a dry run the model is told about; a CLI agent gets no hub MCP server at all. Exit code:
// 0 answered (final, stop_tool, no_action), 2 stopped by a limit or a guard, 1 an error.
// An agent with memory recalls as in the daemon; a run by hand writes to memory only through memory_save, and
// only with --post (README "Memory").
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { definitionForTrigger } from '../../activation/activation-model.ts';
import type { ActivationEvent } from '../../agent-loop/events.ts';
import type { TerminationReason } from '../../agent-loop/termination.ts';
import { assertNever, type OutcomeKind, type RunOutcome } from '../../executors/run-outcome.ts';
import type { HubAdapter } from '../../hub-client/adapter.ts';
import type { ActivationTask } from '../../prompts/activation-context.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { loadWarrenConfig } from '../../services/config.ts';

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

/** 0 answered (or decided not to), 2 stopped by a limit, a guard or a call that waits for approval (a partial answer included), 1 failed. */
export function exitCodeFor(o: RunOutcome): 0 | 1 | 2 {
  switch (o.kind) {
    case 'answered':
      return o.partial ? 2 : 0;
    case 'posted_by_tool':
    case 'no_action':
      return 0;
    case 'guard_stop':
    case 'limit_stop':
    case 'awaiting_approval': // `warren run` keeps no paused run: a call that waits for approval stops it there
      return 2;
    case 'retryable_failure':
    case 'terminal_failure':
    case 'oversized':
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
  const { openStore } = await import('../../services/open-store.ts');
  const { formatProblem } = await import('../../store/problems.ts');
  // --agents is a folder; without it, the store of warren.yaml (store.path and store.include).
  const store = await openStore(config.store, env, opts.agents);
  const { agents, problems } = await store.load().finally(() => store.close?.());
  const def = agents.find((a) => a.name === agentName);
  if (!def) {
    for (const p of problems.filter((x) => x.severity === 'error')) console.error(formatProblem(p));
    console.error(`warren: no valid agent named ${agentName} in ${store.location}`);
    return 1;
  }
  const { EventLog } = await import('../../agent-loop/events.ts');
  const { openServices } = await import('../../services/composition.ts');
  const { runTurn } = await import('../../activation/run-turn.ts');
  const { pino } = await import('pino');
  const logger = pino({ level: 'warn' }, process.stderr);
  const cassettes = await import('../../executors/llm/cassette.ts');
  const recording = opts.record ? cassettes.emptyCassette() : undefined;
  const replayer = opts.replay ? cassettes.replayingFetch(await cassettes.readCassette(opts.replay)) : undefined;
  const warn = (what: string, err: unknown): void => console.error(`warren: ${what}: ${err instanceof Error ? err.message : String(err)}`);
  // The daemon's services, opened as the daemon opens them: secrets, redaction, write limits (with --post), memory
  // (written only with --post), CLI isolation. A run by hand is held to the same lines.
  const services = await openServices(config, env, {
    name: 'run',
    logger,
    agents,
    post: opts.post === true,
    llm: { stream: opts.stream ?? true, fetch: recording ? cassettes.recordingFetch(recording) : replayer?.fetch },
    replayedKey: replayer ? def.config.brain.api_key_env : undefined,
    onWarning: warn,
  });
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    const { executors, hub } = services;
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
    const tracing = await startTracing(config.tracing, logger);
    if (tracing) cleanups.push(() => tracing.shutdown());
    events.emit({ type: 'activation_start', agent: def.name, executor: def.config.type });
    const task = await runTask(def, opts, hub);
    // --explore runs on the model the daemon would use for an exploration (brain.exploration_model when set). A
    // prompt comes from the operator, who may see everything the agent remembers; a post's run recalls as the
    // daemon's run for that post's author would.
    const operator = task.kind === 'prompt' ? { audience: { kind: 'operator' as const } } : {};
    const { result, outcome } = await runTurn(services, definitionForTrigger(def, opts.explore ? 'exploration' : 'notification'), task, ac.signal, { id: activationId, events, executor: resolved.executor, ...operator });
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
    await services.close();
  }
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

