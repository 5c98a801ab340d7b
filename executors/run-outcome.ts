// How a run ends, as one typed union. An executor reports its TerminationReason (the loop's own vocabulary);
// this file is the one place that turns it, or an exception, into an outcome kind and decides whether trying
// again may help. Every consumer switches over `kind` exhaustively (`assertNever`).
import { HubError } from '../hub-client/errors.ts';
import { ModelError } from '../agent-loop/model.ts';
import type { ExecutorResult } from './executor.ts';
import { isRetryableError } from '../agent-loop/retryable-error.ts';
import type { OversizedOutput } from '../policy/output-bounds.ts';

/** Who failed: the agent's own run (model, executor, tools, guards) or the hub around it. */
export type FailureSource = 'agent' | 'hub';

export type Outcome =
  /** Text for the pipeline to post; `partial` when a limit cut the run and this is its best answer so far. */
  | { kind: 'answered'; text: string; partial: boolean }
  /** The agent wrote to the hub itself (a hub tool, a CLI's hub MCP server): nothing left to post. */
  | { kind: 'posted_by_tool' }
  /** The agent decided there is nothing to say (no_action tool, a sentinel, an empty answer, nothing to do). */
  | { kind: 'no_action'; reason: string }
  /** A loop guard ended the run without an answer. */
  | { kind: 'guard_stop'; guard: 'loop_detected' | 'circuit_open'; message: string }
  /** A hard limit ended the run and not even the wrap-up produced an answer. */
  | { kind: 'limit_stop'; limit: 'max_steps' | 'budget' | 'deadline'; message: string }
  | { kind: 'retryable_failure'; message: string; source: FailureSource; retryAfterMs?: number }
  | { kind: 'terminal_failure'; message: string; source: FailureSource }
  /**
   * The agent's output passed one of behavior.limits.max_*_bytes and was not read further (policy/output-bounds.ts):
   * never posted, and never tried again on the same notification (the model would write the same wall again).
   */
  | { kind: 'oversized'; message: string; output: OversizedOutput }
  /**
   * The run stopped before calls that wait for a person's yes (agent-loop/approval-gate.ts): its state is kept
   * and it goes on once someone decides. Not a failure: nothing was left undone that a retry would do.
   */
  | { kind: 'awaiting_approval'; tools: readonly string[] }
  /** Cancelled from outside (shutdown): not the agent's failure. */
  | { kind: 'aborted'; message: string }
  /** Nothing ran: paused, budget, undefined agent. */
  | { kind: 'skipped'; reason: string };

export type OutcomeKind = Outcome['kind'];
/** What one executor run can end with (a run is never "skipped"). */
export type RunOutcome = Exclude<Outcome, { kind: 'skipped' }>;
/** The endings that leave work undone. */
export type FailureOutcome = Extract<Outcome, { kind: 'guard_stop' | 'limit_stop' | 'retryable_failure' | 'terminal_failure' | 'oversized' | 'aborted' }>;

export function assertNever(x: never): never {
  throw new Error(`unhandled outcome: ${JSON.stringify(x)}`);
}

/** The outcome of one executor run, from its termination reason. */
export function outcomeOfRun(r: ExecutorResult): RunOutcome {
  const text = r.text.trim();
  switch (r.termination) {
    case 'final':
    case 'stop_tool':
      if (r.posted) return { kind: 'posted_by_tool' };
      return text ? { kind: 'answered', text, partial: r.partial } : { kind: 'no_action', reason: 'empty_answer' };
    case 'no_action':
      return r.posted ? { kind: 'posted_by_tool' } : { kind: 'no_action', reason: 'no_action' };
    case 'max_steps':
    case 'budget':
    case 'deadline':
      // What the agent already wrote to the hub is there: a retry would write it again.
      if (r.posted) return { kind: 'posted_by_tool' };
      if (text) return { kind: 'answered', text, partial: true };
      return { kind: 'limit_stop', limit: r.termination, message: r.error?.message ?? `the run reached its ${r.termination} limit without an answer` };
    case 'loop_detected':
    case 'circuit_open':
      if (r.posted) return { kind: 'posted_by_tool' };
      return { kind: 'guard_stop', guard: r.termination, message: r.error?.message ?? r.termination };
    case 'error':
      if (r.posted) return { kind: 'posted_by_tool' };
      if (r.error?.oversized) return { kind: 'oversized', message: r.error.message, output: r.error.oversized };
      return r.error?.retryable === false
        ? { kind: 'terminal_failure', message: r.error.message, source: 'agent' }
        : { kind: 'retryable_failure', message: r.error?.message ?? 'the executor failed', source: 'agent', ...(r.error?.retryAfterMs !== undefined ? { retryAfterMs: r.error.retryAfterMs } : {}) };
    case 'aborted':
      return { kind: 'aborted', message: r.error?.message ?? 'aborted' };
    case 'awaiting_approval':
      // Only a run that handed out its state can go on; one that did not is a fault of its executor.
      return r.paused ? { kind: 'awaiting_approval', tools: r.paused.calls.map((c) => c.name) } : { kind: 'terminal_failure', message: 'the run stopped for approval without its state', source: 'agent' };
    default:
      return assertNever(r.termination);
  }
}

/** An error thrown on the way (hub calls, setup, the unexpected), as an outcome. */
export function outcomeOfError(err: unknown, aborted: boolean): FailureOutcome {
  const message = err instanceof Error ? err.message : String(err);
  if (aborted) return { kind: 'aborted', message };
  const source: FailureSource = err instanceof HubError ? 'hub' : 'agent';
  if (!isRetryableError(err)) return { kind: 'terminal_failure', message, source };
  const retryAfterMs = err instanceof ModelError || err instanceof HubError ? err.retryAfterMs : undefined;
  return { kind: 'retryable_failure', message, source, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
}

export function isFailure(o: Outcome): o is FailureOutcome {
  return isFailureKind(o.kind);
}

/** Whether an outcome of this kind left work undone (a FailureOutcome): the one table of it. */
export function isFailureKind(kind: OutcomeKind): boolean {
  switch (kind) {
    case 'guard_stop':
    case 'limit_stop':
    case 'retryable_failure':
    case 'terminal_failure':
    case 'oversized':
    case 'aborted':
      return true;
    case 'answered':
    case 'posted_by_tool':
    case 'no_action':
    case 'awaiting_approval':
    case 'skipped':
      return false;
    default:
      return assertNever(kind);
  }
}

/** A word or two for records, logs and spans: the guard, the limit, the skip reason… */
export function outcomeReason(o: Outcome): string {
  switch (o.kind) {
    case 'answered':
      return o.partial ? 'partial' : 'final';
    case 'posted_by_tool':
      return 'posted';
    case 'no_action':
    case 'skipped':
      return o.reason;
    case 'guard_stop':
      return o.guard;
    case 'limit_stop':
      return o.limit;
    case 'retryable_failure':
    case 'terminal_failure':
      return o.source === 'hub' ? 'hub' : 'error';
    case 'oversized':
      return `oversized_${o.output.what}`;
    case 'aborted':
      return 'aborted';
    case 'awaiting_approval':
      return 'awaiting_approval';
    default:
      return assertNever(o);
  }
}
