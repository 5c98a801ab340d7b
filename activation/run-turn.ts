// One agent turn: recall what fits the task, build the context, run the executor, read how the run ended. The
// daemon's activations (a notification's thread, an exploration's feed), `warren run` and delegates all take their
// turn here, with the services of their process (services/composition.ts), so an agent sees the same context
// pieces and runs on the same executor whoever starts it.
import type { EventLog } from '../agent-loop/events.ts';
import type { ActivationInput, ExecutorResult } from '../executors/executor.ts';
import { outcomeOfRun, type RunOutcome } from '../executors/run-outcome.ts';
import type { MemoryAudience } from '../memory/audience.ts';
import type { BudgetHealth } from '../hub-client/types.ts';
import type { ActivationTask } from '../prompts/activation-context.ts';
import { remainingToday, type RemainingToday } from '../prompts/budget.ts';
import type { ContextOptions } from '../prompts/context.ts';
import { buildRedactedContext } from '../prompts/redacted-context.ts';
import { memoryAudienceOf, recallTextOf } from '../prompts/recall-text.ts';
import type { TurnServices } from '../services/composition.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { PhaseTimer } from './phase-timer.ts';

/** The budget answer and what is left today, as the context shows them. */
export interface ContextPieces {
  budget: BudgetHealth | undefined;
  remaining: RemainingToday | undefined;
}

export interface TurnOptions<R extends ExecutorResult> {
  /** The activation's id: its events' and idempotency keys' root. */
  id: string;
  events: EventLog;
  /** What runs the agent: the executor its type resolves to, or for a delegate its parent's loop with carved limits. */
  executor: { run(input: ActivationInput): Promise<R> };
  /** The pieces as the caller already read them (the pipeline gates on the budget first); absent: read here. */
  pieces?: ContextPieces;
  /** Whether memory is recalled into the context (default yes). */
  recall?: boolean;
  /** Whom the turn answers, for its memory (default: from the task, prompts/recall-text.ts). */
  audience?: MemoryAudience;
  /** Where the turn's phases (memory, context, executor) are timed, for the activation's record. */
  timer?: PhaseTimer;
  /** The activation span's traceparent: the executor's spans continue its trace. */
  traceparent?: string;
}

export interface Turn<R extends ExecutorResult> {
  result: R;
  /** How the run ended (executors/run-outcome.ts). */
  outcome: RunOutcome;
}

/**
 * One turn of `definition` on `task`. An executor's failure is an outcome, not a throw; what throws (an executor
 * that could not start, the unexpected) is left to the caller, which knows whether it fails an activation.
 *
 * Not itself async: an async function keeps its arguments for as long as it waits, and the task (a thread with
 * every comment, a feed) has done its work once the context is built from it. The executor's run, which lasts the
 * model's latency, is waited on where the task is no longer held.
 */
export function runTurn<R extends ExecutorResult>(services: TurnServices, definition: AgentDefinition, task: ActivationTask, signal: AbortSignal, opts: TurnOptions<R>): Promise<Turn<R>> {
  const timer = opts.timer ?? new PhaseTimer();
  return prepareTurn(services, definition, task, signal, opts, timer).then((prepared) => executeTurn(services, definition, prepared, signal, opts, timer));
}

/** What a turn gives its executor, read from the task: the context and whom it answers. */
interface PreparedTurn {
  context: ActivationInput['context'];
  audience: MemoryAudience;
}

async function prepareTurn(services: TurnServices, definition: AgentDefinition, task: ActivationTask, signal: AbortSignal, opts: TurnOptions<ExecutorResult>, timer: PhaseTimer): Promise<PreparedTurn> {
  const memory = opts.recall === false ? undefined : services.memory;
  const audience = opts.audience ?? memoryAudienceOf(definition.name, task);
  const memories = memory ? await timer.time('memory', () => memory.recall(definition, recallTextOf(task), audience, signal)) : [];
  const pieces = opts.pieces ?? (await readPieces(services, definition, signal));
  // Read once and gone: a delegate's turn (no recall) leaves them for its agent's own next run. Only agents that may
  // propose have any (capabilities.spawning): the others make no Redis call for them.
  const notes = opts.recall === false || !definition.config.capabilities.spawning ? [] : await (services.takeNotes?.(definition.name) ?? Promise.resolve([])).catch((err: unknown) => (services.onWarning?.('notes unavailable', err), []));
  // Everything a model or a CLI is given passes the redaction, here, for every executor (prompts/redacted-context.ts).
  const context = timer.timeSync('context', () => buildRedactedContext(definition, task, { ...contextOptions(services, pieces), memories, notes }, services.redact));
  return { context, audience };
}

async function executeTurn<R extends ExecutorResult>(services: TurnServices, definition: AgentDefinition, prepared: PreparedTurn, signal: AbortSignal, opts: TurnOptions<R>, timer: PhaseTimer): Promise<Turn<R>> {
  const { audience } = prepared;
  const result = await timer.time('executor', () =>
    opts.executor.run({
      id: opts.id,
      definition,
      context: prepared.context,
      events: opts.events,
      signal,
      hub: services.hub,
      traceparent: opts.traceparent,
      memoryAudience: audience,
      // A delegate is an activation of its own agent: a turn of its own, with the same services. It recalls nothing
      // (only the daemon's activations and `warren run` recall, README "Memory"); its task is its parent's words.
      delegate: (def, text, child, childSignal) => runTurn(services, def, { kind: 'prompt', text }, childSignal, { id: child.id, events: child.events, executor: child, recall: false, audience }).then((t) => t.result),
    }),
  );
  return { result, outcome: outcomeOfRun(result) };
}

/** The context options of one turn: the process's sources and what the hub and the counters said. */
function contextOptions(sources: TurnServices, pieces: ContextPieces): ContextOptions {
  return { budget: pieces.budget, remainingToday: pieces.remaining, taskTokens: sources.contextTaskTokens, cliAvailable: sources.cliAvailable };
}

/** The hub's budget answer and today's counters, asked together; each fails open (left out, with a warning). */
async function readPieces(services: TurnServices, def: AgentDefinition, signal: AbortSignal): Promise<ContextPieces> {
  const warn = (what: string) => (err: unknown): undefined => void services.onWarning?.(what, err);
  const [budget, used] = await Promise.all([services.hub?.budgetHealth(def.name, signal).catch(warn('budget health unavailable')), services.usedToday?.(def.name).catch(warn('daily counters unavailable'))]);
  return { budget, remaining: used ? remainingToday(def.config.behavior.limits, used) : undefined };
}
