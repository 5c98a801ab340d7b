// Stuck-loop guards (agent-loop.md R2). A call's fingerprint is its name plus canonical JSON arguments.
// Repeats: the 3rd identical call within a window of 5 steps gets a nudge, the 4th ends the run. A step with a
// successful *different* call breaks the streak, so two alternating calls that both succeed (polling two
// things) are progress, not a loop. Errors: 3 identical consecutive tool errors open the circuit.
import type { ToolCall } from './messages.ts';

export const REPEAT_WINDOW_STEPS = 5;
export const REPEAT_NUDGE_AT = 3;
export const REPEAT_STOP_AT = 4;
export const CIRCUIT_ERRORS = 3;

export type GuardVerdict = { kind: 'ok' } | { kind: 'nudge'; message: string } | { kind: 'loop_detected'; message: string };

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

export class LoopGuard {
  /** fingerprint → steps it was seen in (within the window, since the streak began). */
  readonly #seen = new Map<string, number[]>();
  #lastError: string | undefined;
  #errorStreak = 0;

  /** Called with a step's calls before they run. */
  beforeCalls(step: number, calls: readonly ToolCall[]): GuardVerdict {
    let verdict: GuardVerdict = { kind: 'ok' };
    for (const call of calls) {
      const fp = fingerprint(call);
      const steps = (this.#seen.get(fp) ?? []).filter((s) => s > step - REPEAT_WINDOW_STEPS);
      if (!steps.includes(step)) steps.push(step);
      this.#seen.set(fp, steps);
      if (steps.length >= REPEAT_STOP_AT) return { kind: 'loop_detected', message: `the call ${call.name} was repeated ${steps.length} times with identical arguments` };
      if (steps.length >= REPEAT_NUDGE_AT) {
        verdict = { kind: 'nudge', message: `You are repeating the call ${call.name} with identical arguments (${steps.length} times in ${REPEAT_WINDOW_STEPS} steps). Its result will not change: use what you have, try something different, or give your answer. Once more ends the run.` };
      }
    }
    return verdict;
  }

  /** Called with a step's results in call order; returns a message when the error breaker trips. */
  afterResults(results: ReadonlyArray<{ call: ToolCall; ok: boolean; content: string }>): string | undefined {
    const stepPrints = new Set(results.map((r) => fingerprint(r.call)));
    if (results.some((r) => r.ok)) {
      for (const fp of this.#seen.keys()) if (!stepPrints.has(fp)) this.#seen.delete(fp);
    }
    for (const r of results) {
      if (r.ok) {
        this.#lastError = undefined;
        this.#errorStreak = 0;
        continue;
      }
      const sig = `${fingerprint(r.call)}→${r.content}`;
      this.#errorStreak = sig === this.#lastError ? this.#errorStreak + 1 : 1;
      this.#lastError = sig;
      if (this.#errorStreak >= CIRCUIT_ERRORS) return `the call ${r.call.name} failed ${this.#errorStreak} times in a row with the same error`;
    }
    return undefined;
  }
}
