// What the loop does after a step (docs/agent-loop.md, "The loop as a step machine"): go on, wrap up at a limit,
// or end, as one typed union the driver switches over exhaustively. Every decision is a pure function of the
// state and a few facts from outside it (the caller's signal, the deadline), in the order the loop asks.
import { admitCall, type Limits } from './limits.ts';
import { guardAfterResults, reachedTool, type BreakerName, type GuardVerdict } from './loop-guard.ts';
import type { LoopState } from './loop-state.ts';
import { ModelError } from './model.ts';
import { OversizedOutputError } from './oversized-output.ts';
import type { OversizedOutput } from '../policy/output-bounds.ts';
import { isRetryableError } from './retryable-error.ts';
import { isNoActionSentinel, type TerminationReason } from './termination.ts';
import type { ToolResultRecord } from './tool-runner.ts';
import { ledgerTokens } from './usage-ledger.ts';
import type { ToolCall } from './messages.ts';

/** The limits that end a run with a wrap-up call (R1). */
export type WrapUpReason = 'max_steps' | 'budget' | 'deadline';

/** How a run ends; `retryable`, `retryAfterMs` and `name` describe an error for the caller's retry. */
export interface Ending {
  termination: TerminationReason;
  text?: string;
  message?: string;
  retryable?: boolean;
  retryAfterMs?: number;
  name?: string;
  /** The model's output passed a bound (agent-loop/oversized-output.ts): what, how much, its head. */
  oversized?: OversizedOutput;
}

export type Next =
  | { kind: 'continue'; state: LoopState }
  | { kind: 'wrap_up'; state: LoopState; reason: WrapUpReason; message: string }
  | { kind: 'end'; state: LoopState; ending: Ending }
  /** The step's calls wait for approval: none ran; the state still holds them as pending. */
  | { kind: 'await_approval'; state: LoopState; calls: readonly ToolCall[] };

/** What a decision knows from outside the state. */
export interface RunFacts {
  /** The caller's signal (cancel, shutdown). */
  aborted: boolean;
  /** The deadline, which fires early by the wrap-up's time slice. */
  pastDeadline: boolean;
}

export function assertNever(x: never): never {
  throw new Error(`unexpected: ${JSON.stringify(x)}`);
}

const end = (state: LoopState, ending: Ending): Next => ({ kind: 'end', state, ending });
const ABORTED: Ending = { termination: 'aborted', message: 'aborted' };

type StopCondition = (state: LoopState, limits: Limits, facts: RunFacts) => Next | undefined;

const aborted: StopCondition = (state, _limits, facts) => (facts.aborted ? end(state, ABORTED) : undefined);
const pastDeadline: StopCondition = (state, limits, facts) => (facts.pastDeadline ? { kind: 'wrap_up', state, reason: 'deadline', message: `the run reached its time limit of ${limits.maxDurationMs} ms` } : undefined);
const outOfSteps: StopCondition = (state, limits) => (state.step >= limits.maxSteps ? { kind: 'wrap_up', state, reason: 'max_steps', message: `the run reached its step limit of ${limits.maxSteps}` } : undefined);

/** Checked before each step, in this order; the first that holds decides (the budget is checked once the prompt is known). */
const BEFORE_STEP: readonly StopCondition[] = [aborted, pastDeadline, outOfSteps];

export function beforeStep(state: LoopState, limits: Limits, facts: RunFacts): Next | undefined {
  for (const condition of BEFORE_STEP) {
    const next = condition(state, limits, facts);
    if (next) return next;
  }
  return undefined;
}

/** Reserve before sending (R9): a call whose prompt and full reply would not fit is not sent. */
export function overBudget(state: LoopState, limits: Limits, promptEstimate: number): Next | undefined {
  const admitted = admitCall(limits, ledgerTokens(state.ledger), promptEstimate);
  return admitted.ok ? undefined : { kind: 'wrap_up', state, reason: 'budget', message: admitted.message };
}

/** A step's model call failed for good; `stepTimeoutMs` is set when the step's own time limit cut it. */
export function afterModelFailure(state: LoopState, err: unknown, limits: Limits, facts: RunFacts & { stepTimeoutMs?: number }): Next {
  if (facts.aborted) return end(state, ABORTED);
  const deadline = pastDeadline(state, limits, facts);
  if (deadline) return deadline;
  if (facts.stepTimeoutMs !== undefined) return end(state, { termination: 'error', message: `step ${state.step}: the model did not answer within the step limit of ${facts.stepTimeoutMs} ms`, retryable: true });
  // A tool call that began streaming is never replayed in this run; but when no tool ran yet, nothing was done that
  // a new attempt would repeat, so the activation may retry (a tool that ran makes the failure final).
  if (err instanceof ModelError && err.toolCallBegan) {
    const ran = state.toolResults.some((r) => reachedTool(r.status));
    return end(state, { termination: 'error', message: `${errorMessage(err)}${ran ? ' (a tool had already run: not retried)' : ' (no tool ran: the activation may retry)'}`, retryable: !ran, name: errorName(err) });
  }
  // A provider that said when to come back (retry-after beyond what the loop waits) is heard by the queue's retry.
  return end(state, { termination: 'error', message: errorMessage(err), retryable: isRetryableError(err), retryAfterMs: err instanceof ModelError ? err.retryAfterMs : undefined, name: errorName(err), ...(err instanceof OversizedOutputError ? { oversized: err.output } : {}) });
}

/** A reply without tool calls is the answer (R2), a "tool_calls" finish without calls and an empty reply too. */
export function afterReply(state: LoopState, text: string, noActionSentinels: readonly string[] | undefined): Next {
  return isNoActionSentinel(text, noActionSentinels) ? end(state, { termination: 'no_action' }) : end(state, { termination: 'final', text });
}

/** A guard's warning or stop, to report as a `loop_warning` of the guard's name. */
export interface GuardWarning {
  guard: 'repeat' | BreakerName;
  message: string;
}

/**
 * After a step's results are in the state: the guard's rejection, a loop-breaking tool, an abort or a breaker
 * ends the run; otherwise it goes on with the guard's warnings added to the history. `warnings` are the guards'
 * nudges and stops to report, in order, each under its guard's name.
 */
export function afterResults(state: LoopState, verdict: GuardVerdict, results: readonly ToolResultRecord[], facts: Pick<RunFacts, 'aborted'>): { next: Next; warnings: GuardWarning[] } {
  // A guard ends the run without an answer: text written while looping is not one worth posting.
  if (verdict.kind === 'loop_detected') return { next: end(state, { termination: 'loop_detected', message: verdict.message }), warnings: [{ guard: 'repeat', message: verdict.message }] };
  const breaking = results.find((r) => r.status === 'ok' && r.tool?.loopBreaking);
  if (breaking) {
    const ending: Ending = breaking.tool?.loopBreaking === 'no_action' ? { termination: 'no_action' } : { termination: 'stop_tool', text: stringArg(breaking.call, 'result') };
    return { next: end(state, ending), warnings: [] };
  }
  if (facts.aborted) return { next: end(state, ABORTED), warnings: [] };
  const after = guardAfterResults(state.guard, results);
  if (after.verdict.kind === 'stop') {
    const { termination, message, guard } = after.verdict;
    return { next: end(state, { termination, message }), warnings: [{ guard, message }] };
  }
  // Warnings reach the model only when the run goes on; each says what the guard will really do.
  const nudges: GuardWarning[] = [...(verdict.kind === 'nudge' ? [{ guard: 'repeat' as const, message: verdict.message }] : []), ...(after.verdict.kind === 'nudge' ? [{ guard: after.verdict.guard, message: after.verdict.message }] : [])];
  const messages = [...state.messages, ...nudges.map(({ message }) => ({ role: 'user' as const, content: message }))];
  return { next: { kind: 'continue', state: { ...state, guard: after.guard, messages } }, warnings: nudges };
}

/** Whatever went wrong where nothing else caught it: a typed ending, never an escaped exception (R1). */
export function crashed(err: unknown, facts: Pick<RunFacts, 'aborted'>): Ending {
  return { termination: facts.aborted ? 'aborted' : 'error', message: errorMessage(err), retryable: isRetryableError(err), name: errorName(err) };
}

function stringArg(call: ToolCall, key: string): string {
  const v = call.arguments[key];
  return typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v);
}

function errorName(err: unknown): string | undefined {
  return err instanceof Error ? err.name : undefined;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
