// Stuck-loop guards (docs/agent-loop.md R2). Every call the model makes counts, calls to tools that do not exist
// included (their fingerprint keeps the name as written). A call's fingerprint is its name plus canonical JSON
// arguments. The rules, with their numbers:
//
// - Repeats. The 3rd identical call within a window of 5 steps gets a nudge saying that calling it again with
//   the same arguments ends the run, unless another call succeeds first; the next identical call is then
//   rejected and ends the run (`loop_detected`). A step where a *different* call succeeds breaks the streak
//   and lifts the warning, so two alternating calls that both succeed (polling two things) are progress.
// - Identical errors. The same call failing with the same error in 3 replies in a row opens the breaker.
//
// "In a row" counts replies for every guard: a reply is one decision of the model, written before any of its
// results was seen, so identical calls (or identical failures) within one reply count once. Three copies of one
// failing call in a reply are one failure, not three.
// - Failed steps. 3 steps in a row in which every call failed (error, timeout, unknown tool, invalid
//   arguments, denied, rejected; whatever the calls) open the breaker. After the 2nd the model is told
//   that one more such step ends the run.
//
// A breaker that trips on failures a tool returned (error, timeout) is `circuit_open`: the tools are not
// working. When every failure of the streak is one of a call that never reached a tool (unknown tool, invalid
// arguments, denied, rejected), the model is going round in circles instead: `loop_detected`.
//
// Every warning is built here from the same constants and state that decide the stop, so what the model is
// told is what happens. The guards are pure functions over plain data (GuardState), which travels in the loop's
// state from step to step, and across a pause and resume.
import type { ToolResultStatus } from './events.ts';
import type { ToolCall } from './messages.ts';

export const REPEAT_WINDOW_STEPS = 5;
export const REPEAT_NUDGE_AT = 3;
export const CIRCUIT_ERRORS = 3;
/** Consecutive failed steps, whatever the calls, that end the run. */
export const FAILED_STEPS_STOP_AT = 3;

/** The guards after a step's results, by the name their events carry (`loop_warning.kind`). */
export type BreakerName = 'identical_errors' | 'failed_steps';
export type GuardStop = { kind: 'stop'; guard: BreakerName; termination: 'loop_detected' | 'circuit_open'; message: string };
/** The repeat guard's verdict, before a step's calls run (its events are `repeat`). */
export type GuardVerdict = { kind: 'ok' } | { kind: 'nudge'; message: string } | { kind: 'loop_detected'; message: string };
export type AfterVerdict = { kind: 'ok' } | { kind: 'nudge'; guard: BreakerName; message: string } | GuardStop;

/** Failures of calls that never reached a tool: the model's doing, not the tool's. */
const NEVER_RAN: ReadonlySet<ToolResultStatus> = new Set<ToolResultStatus>(['unknown_tool', 'invalid_arguments', 'denied', 'rejected']);

/** Whether a call with this result reached its tool (anything but the model's own mistakes and refusals). */
export function reachedTool(status: ToolResultStatus): boolean {
  return !NEVER_RAN.has(status);
}

/** A cancelled call is the run's doing (abort, deadline), neither a success nor the call's failure. */
function isFailure(status: ToolResultStatus): boolean {
  return status !== 'ok' && status !== 'cancelled';
}

export function fingerprint(call: Pick<ToolCall, 'name' | 'arguments'>): string {
  return `${call.name}:${canonicalJson(call.arguments)}`;
}

export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export interface GuardResult {
  call: ToolCall;
  status: ToolResultStatus;
  content: string;
}

/**
 * What the guards remember between steps. Plain data, so it travels in the loop's state (loop-state.ts): the
 * maps are records keyed by fingerprint (a fingerprint always holds a `:`, so it is never a prototype name).
 */
export interface GuardState {
  /** fingerprint → steps it was seen in (within the window, since the streak began). */
  readonly seen: Readonly<Record<string, readonly number[]>>;
  /** fingerprint → the step its nudge was given in and the calls counted then: from the next step on, that call ends the run. */
  readonly warned: Readonly<Record<string, { readonly step: number; readonly count: number }>>;
  /** The last failure's call and error (`fingerprint→content`), null after a success. */
  readonly lastError: string | null;
  readonly errorStreak: number;
  readonly failedSteps: number;
  /** A failure in the current failed-step streak came from a tool that ran. */
  readonly failedStepsRan: boolean;
  /** The streak's failed calls as `name (status)`, each once, in the order first seen. */
  readonly failedNames: readonly string[];
}

export const FRESH_GUARD: GuardState = { seen: {}, warned: {}, lastError: null, errorStreak: 0, failedSteps: 0, failedStepsRan: false, failedNames: [] };

/** A step's calls, unknown ones included, before they run: the guard's next state and its verdict. */
export function guardBeforeCalls(g: GuardState, step: number, calls: readonly ToolCall[]): { guard: GuardState; verdict: GuardVerdict } {
  const seen = new Map(Object.entries(g.seen));
  const warnedMap = new Map(Object.entries(g.warned));
  const next = (): GuardState => ({ ...g, seen: Object.fromEntries(seen), warned: Object.fromEntries(warnedMap) });
  const nudges: string[] = [];
  for (const call of calls) {
    const fp = fingerprint(call);
    const warned = warnedMap.get(fp);
    if (warned && warned.step < step) {
      return { guard: next(), verdict: { kind: 'loop_detected', message: `the call ${call.name} was made ${warned.count + 1} times with identical arguments, the last after the warning that this ends the run` } };
    }
    const steps = (seen.get(fp) ?? []).filter((s) => s > step - REPEAT_WINDOW_STEPS);
    if (!steps.includes(step)) steps.push(step);
    seen.set(fp, steps);
    if (steps.length >= REPEAT_NUDGE_AT && !warned) {
      warnedMap.set(fp, { step, count: steps.length });
      nudges.push(
        `You are repeating the call ${call.name} with identical arguments (${steps.length} times in the last ${REPEAT_WINDOW_STEPS} steps). Its result will not change: use what you have, try something different, or give your answer. Calling it again with the same arguments ends the run, unless another call succeeds first.`,
      );
    }
  }
  return { guard: next(), verdict: nudges.length ? { kind: 'nudge', message: nudges.join('\n') } : { kind: 'ok' } };
}

/** A step's results in call order: the guard's next state and a breaker stop, a warning that the next failed step is the last, or ok. */
export function guardAfterResults(g: GuardState, results: readonly GuardResult[]): { guard: GuardState; verdict: AfterVerdict } {
  const stepPrints = new Set(results.map((r) => fingerprint(r.call)));
  // A success elsewhere breaks every other call's repeat streak and lifts its warning.
  const keep = <T>(m: Readonly<Record<string, T>>): Record<string, T> => Object.fromEntries(Object.entries(m).filter(([fp]) => stepPrints.has(fp)));
  const succeeded = results.some((r) => r.status === 'ok');
  let { lastError, errorStreak } = g;
  const base = { seen: succeeded ? keep(g.seen) : g.seen, warned: succeeded ? keep(g.warned) : g.warned };
  // Same call, same error: the same status too, so the last one says who failed.
  const signature = (r: GuardResult): string => `${fingerprint(r.call)}→${r.content}`;
  const counted = new Set<string>();
  for (const r of results) {
    if (!isFailure(r.status)) {
      lastError = null;
      errorStreak = 0;
      continue;
    }
    const sig = signature(r);
    // A copy of a failure already counted in this reply is the same decision (see "in a row" above).
    if (counted.has(sig)) continue;
    counted.add(sig);
    errorStreak = sig === lastError ? errorStreak + 1 : 1;
    lastError = sig;
    if (errorStreak >= CIRCUIT_ERRORS) return { guard: { ...g, ...base, lastError, errorStreak }, verdict: stop('identical_errors', !NEVER_RAN.has(r.status), `the call ${r.call.name} failed ${errorStreak} times in a row, one reply after another, with the same error`) };
  }

  const failed = results.length > 0 && results.every((r) => isFailure(r.status));
  if (!failed) return { guard: { ...base, lastError, errorStreak, failedSteps: 0, failedStepsRan: false, failedNames: [] }, verdict: { kind: 'ok' } };
  const failedSteps = g.failedSteps + 1;
  const failedStepsRan = g.failedStepsRan || results.some((r) => !NEVER_RAN.has(r.status));
  const failedNames = [...new Set([...g.failedNames, ...results.map((r) => `${r.call.name} (${r.status})`)])];
  const guard: GuardState = { ...base, lastError, errorStreak, failedSteps, failedStepsRan, failedNames };
  if (failedSteps >= FAILED_STEPS_STOP_AT) return { guard, verdict: stop('failed_steps', failedStepsRan, `${failedSteps} steps in a row had only failed calls: ${failedNames.join(', ')}`) };
  if (failedSteps === FAILED_STEPS_STOP_AT - 1) {
    return {
      guard,
      verdict: {
        kind: 'nudge',
        guard: 'failed_steps',
        message: `Every call of your last ${failedSteps} steps failed. One more step in which every call fails ends the run: check the tool names and arguments against your tool list, try something different, or give your answer.`,
      },
    };
  }
  return { guard, verdict: { kind: 'ok' } };
}

function stop(guard: BreakerName, toolFailed: boolean, message: string): GuardStop {
  return { kind: 'stop', guard, termination: toolFailed ? 'circuit_open' : 'loop_detected', message };
}
