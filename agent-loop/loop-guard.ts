// Stuck-loop guards (docs/agent-loop.md R2). Every call the model makes counts, calls to tools that do not exist
// included (their fingerprint keeps the name as written). A call's fingerprint is its name plus canonical JSON
// arguments. The rules, with their numbers:
//
// - Repeats. The 3rd identical call within a window of 5 steps gets a nudge saying that calling it again with
//   the same arguments ends the run, unless another call succeeds first; the next identical call is then
//   rejected and ends the run (`loop_detected`). A step where a *different* call succeeds breaks the streak
//   and lifts the warning, so two alternating calls that both succeed (polling two things) are progress.
// - Identical errors. The same call failing with the same error 3 times in a row opens the breaker.
// - Failed steps. 3 steps in a row in which every call failed (error, timeout, unknown tool, invalid
//   arguments, denied, rejected; whatever the calls) open the breaker. After the 2nd the model is told
//   that one more such step ends the run.
//
// A breaker that trips on failures a tool returned (error, timeout) is `circuit_open`: the tools are not
// working. When every failure of the streak is one of a call that never reached a tool (unknown tool, invalid
// arguments, denied, rejected), the model is going round in circles instead: `loop_detected`.
//
// Every warning is built here from the same constants and state that decide the stop, so what the model is
// told is what happens.
import type { ToolResultStatus } from './events.ts';
import type { ToolCall } from './messages.ts';

export const REPEAT_WINDOW_STEPS = 5;
export const REPEAT_NUDGE_AT = 3;
export const CIRCUIT_ERRORS = 3;
/** Consecutive failed steps, whatever the calls, that end the run. */
export const FAILED_STEPS_STOP_AT = 3;

export type GuardStop = { kind: 'stop'; termination: 'loop_detected' | 'circuit_open'; message: string };
export type GuardVerdict = { kind: 'ok' } | { kind: 'nudge'; message: string } | { kind: 'loop_detected'; message: string };
export type AfterVerdict = { kind: 'ok' } | { kind: 'nudge'; message: string } | GuardStop;

/** Failures of calls that never reached a tool: the model's doing, not the tool's. */
const NEVER_RAN: ReadonlySet<ToolResultStatus> = new Set<ToolResultStatus>(['unknown_tool', 'invalid_arguments', 'denied', 'rejected']);

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

export class LoopGuard {
  /** fingerprint → steps it was seen in (within the window, since the streak began). */
  readonly #seen = new Map<string, number[]>();
  /** fingerprint → the step its nudge was given in and the calls counted then: from the next step on, that call ends the run. */
  readonly #warned = new Map<string, { step: number; count: number }>();
  #lastError: string | undefined;
  #errorStreak = 0;
  #failedSteps = 0;
  /** A failure in the current failed-step streak came from a tool that ran. */
  #failedStepsRan = false;
  readonly #failedNames = new Set<string>();

  /** Called with a step's calls, unknown ones included, before they run. */
  beforeCalls(step: number, calls: readonly ToolCall[]): GuardVerdict {
    const nudges: string[] = [];
    for (const call of calls) {
      const fp = fingerprint(call);
      const warned = this.#warned.get(fp);
      if (warned && warned.step < step) {
        return { kind: 'loop_detected', message: `the call ${call.name} was made ${warned.count + 1} times with identical arguments, the last after the warning that this ends the run` };
      }
      const steps = (this.#seen.get(fp) ?? []).filter((s) => s > step - REPEAT_WINDOW_STEPS);
      if (!steps.includes(step)) steps.push(step);
      this.#seen.set(fp, steps);
      if (steps.length >= REPEAT_NUDGE_AT && !warned) {
        this.#warned.set(fp, { step, count: steps.length });
        nudges.push(
          `You are repeating the call ${call.name} with identical arguments (${steps.length} times in the last ${REPEAT_WINDOW_STEPS} steps). Its result will not change: use what you have, try something different, or give your answer. Calling it again with the same arguments ends the run, unless another call succeeds first.`,
        );
      }
    }
    return nudges.length ? { kind: 'nudge', message: nudges.join('\n') } : { kind: 'ok' };
  }

  /** Called with a step's results in call order: a breaker stop, a warning that the next failed step is the last, or ok. */
  afterResults(results: readonly GuardResult[]): AfterVerdict {
    const stepPrints = new Set(results.map((r) => fingerprint(r.call)));
    if (results.some((r) => r.status === 'ok')) {
      for (const fp of this.#seen.keys()) if (!stepPrints.has(fp)) this.#seen.delete(fp);
      for (const fp of this.#warned.keys()) if (!stepPrints.has(fp)) this.#warned.delete(fp);
    }
    for (const r of results) {
      if (!isFailure(r.status)) {
        this.#lastError = undefined;
        this.#errorStreak = 0;
        continue;
      }
      // Same call, same error: the same status too, so the last one says who failed.
      const sig = `${fingerprint(r.call)}→${r.content}`;
      this.#errorStreak = sig === this.#lastError ? this.#errorStreak + 1 : 1;
      this.#lastError = sig;
      if (this.#errorStreak >= CIRCUIT_ERRORS) return stop(!NEVER_RAN.has(r.status), `the call ${r.call.name} failed ${this.#errorStreak} times in a row with the same error`);
    }

    const failed = results.length > 0 && results.every((r) => isFailure(r.status));
    if (!failed) {
      this.#failedSteps = 0;
      this.#failedStepsRan = false;
      this.#failedNames.clear();
      return { kind: 'ok' };
    }
    this.#failedSteps++;
    for (const r of results) {
      if (!NEVER_RAN.has(r.status)) this.#failedStepsRan = true;
      this.#failedNames.add(`${r.call.name} (${r.status})`);
    }
    if (this.#failedSteps >= FAILED_STEPS_STOP_AT) return stop(this.#failedStepsRan, `${this.#failedSteps} steps in a row had only failed calls: ${[...this.#failedNames].join(', ')}`);
    if (this.#failedSteps === FAILED_STEPS_STOP_AT - 1) {
      return {
        kind: 'nudge',
        message: `Every call of your last ${this.#failedSteps} steps failed. One more step in which every call fails ends the run: check the tool names and arguments against your tool list, try something different, or give your answer.`,
      };
    }
    return { kind: 'ok' };
  }
}

function stop(toolFailed: boolean, message: string): GuardStop {
  return { kind: 'stop', termination: toolFailed ? 'circuit_open' : 'loop_detected', message };
}
