// Runs one reply's tool calls (docs/agent-loop.md R4, R5, R10, R11). Planner: contiguous read-only calls form one
// concurrent stage (capped), every mutating call runs alone; stages run in call order and results are
// committed in call order whatever order they finish in. Every call gets exactly one result and its
// tool_call/tool_result events, whatever happens: tool unknown, call rejected by a guard, grant missing,
// arguments invalid, tool throws, times out or the run is aborted.
import { deadline } from '../hub-client/deadline.ts';
import { toolCallKey } from '../policy/idempotency-keys.ts';
import type { EventLog, ToolResultStatus } from './events.ts';
import type { ToolCall } from './messages.ts';
import type { PlannedCall } from './duplicate-calls.ts';
import type { Tool, ToolRegistry } from './tools.ts';
import type { LedgerEntry } from './usage-ledger.ts';
import { endSpan, payloadAttributes, startSpan, traceparentOf, withTraceparent, type TraceOptions } from './tracing.ts';
import type { Context } from '@opentelemetry/api';

export interface ToolResultRecord {
  call: ToolCall;
  status: ToolResultStatus;
  /** What the model sees (capped). */
  content: string;
  /** Set when the content was capped: the full output, for the activation record. */
  fullLength?: number;
  tool?: Tool;
  /** Model calls made by the tool (a delegate's), to be charged to the run. */
  ledger?: readonly LedgerEntry[];
}

export interface RunnerOptions {
  registry: ToolRegistry;
  signal: AbortSignal;
  activationId: string;
  step: number;
  maxSteps: number;
  events: EventLog;
  /** Set when a guard refused the step: every call gets this as a `rejected` result and none runs. */
  rejected?: string;
  outputCap?: number;
  concurrency?: number;
  defaultTimeoutMs?: number;
  /** Epoch ms the step ends (step_timeout): calls still running then time out. */
  endsAt?: number;
  remaining?: () => { tokens: number; ms: number };
  /** Each call is an `execute_tool <name>` span under `parent` (the step's). */
  tracing?: { parent: Context; options?: TraceOptions };
}

export const DEFAULT_OUTPUT_CAP = 16_000;
/** How long an interrupted tool that reports usage is given to hand in its ledger. */
const LATE_USAGE_WAIT_MS = 1_000;

/** Stages of indexes: a run of read-only calls together (at most `cap` at once), each mutating call alone. */
export function planStages(readOnly: readonly boolean[], cap = 10): number[][] {
  const stages: number[][] = [];
  let current: number[] = [];
  readOnly.forEach((ro, i) => {
    if (ro && current.length < cap) {
      current.push(i);
      return;
    }
    if (current.length) stages.push(current);
    current = [];
    if (ro) current.push(i);
    else stages.push([i]);
  });
  if (current.length) stages.push(current);
  return stages;
}

/** Head and tail of an oversized output with a notice in between; never longer than `cap`. */
export function capOutput(text: string, cap = DEFAULT_OUTPUT_CAP): string {
  if (text.length <= cap) return text;
  const notice = `\n[… ${text.length} characters in all; output capped at ${cap} characters, the middle was left out …]\n`;
  const room = Math.max(0, cap - notice.length);
  const head = Math.ceil(room * 0.75);
  return text.slice(0, head) + notice + text.slice(text.length - (room - head));
}

export async function runToolCalls(calls: readonly PlannedCall[], opts: RunnerOptions): Promise<ToolResultRecord[]> {
  const results: Array<ToolResultRecord | undefined> = new Array<ToolResultRecord | undefined>(calls.length);
  // A call that will not run (unknown, invalid, duplicate) has no effects: it does not split a read-only stage.
  const stages = planStages(calls.map((c) => c.kind !== 'ready' || c.tool.readOnly), opts.concurrency ?? 10);
  for (const c of calls) {
    // Seed 001's progress block: a delegation names the agent, not the tool that reaches it.
    const delegate = c.kind === 'unknown' ? undefined : c.tool.delegatesTo;
    opts.events.emit({ type: 'progress', step: opts.step, max_steps: opts.maxSteps, ...(delegate ? { action: 'delegate', target: delegate } : { action: 'tool_call', target: c.call.name }) });
    opts.events.emit({ type: 'tool_call', id: c.call.id, name: c.call.name, arguments: c.call.arguments });
  }
  // One timer ends the step for all its calls: a call it cut means the step is over for every call after it. With a
  // timer per call, one could fire a millisecond before the clock reached the step's end, and the next write was
  // started with a millisecond left, then reported as timed out (and tried again next step).
  const stepEnd = opts.endsAt === undefined ? undefined : deadline(Math.max(0, opts.endsAt - Date.now()));
  try {
    for (const stage of stages) {
      await Promise.all(stage.map(async (i) => (results[i] = await runOne(calls[i]!, i, opts, stepEnd?.signal))));
    }
  } finally {
    stepEnd?.dispose();
  }
  const committed = results.map((r, i) => r ?? { call: calls[i]!.call, status: 'error' as const, content: 'internal error: no result' });
  for (const r of committed) {
    opts.events.emit({ type: 'tool_result', id: r.call.id, name: r.call.name, status: r.status, excerpt: r.content.slice(0, 200), ...(r.fullLength ? { full_length: r.fullLength } : {}) });
  }
  return committed;
}

async function runOne(c: PlannedCall, index: number, opts: RunnerOptions, stepOver: AbortSignal | undefined): Promise<ToolResultRecord> {
  const { call } = c;
  if (c.kind === 'unknown') return { call, status: 'unknown_tool', content: capOutput(`Error: ${c.message}`, opts.outputCap ?? DEFAULT_OUTPUT_CAP) };
  const { tool } = c;
  if (opts.rejected !== undefined) return { call, status: 'rejected', content: opts.rejected, tool };
  if (c.kind === 'duplicate') return { call, status: 'rejected', content: c.message, tool };
  if (c.kind === 'denied') return { call, status: 'denied', content: c.message, tool };
  const span = opts.tracing
    ? startSpan(`execute_tool ${call.name}`, opts.tracing.parent, {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': call.name,
        'gen_ai.tool.call.id': call.id,
        'warren.step': opts.step,
        ...payloadAttributes(opts.tracing.options, { 'gen_ai.tool.call.arguments': () => call.arguments }),
      })
    : undefined;
  let ended = false;
  const done = (status: ToolResultStatus, content: string): ToolResultRecord => {
    const capped = capOutput(content, opts.outputCap ?? DEFAULT_OUTPUT_CAP);
    if (!ended) {
      ended = true; // the first settlement is the result; a straggler after a timeout changes nothing
      endSpan(span, { 'warren.tool.status': status, ...payloadAttributes(opts.tracing?.options, { 'gen_ai.tool.call.result': () => capped }) }, status === 'ok' ? undefined : status);
    }
    return { call, status, content: capped, tool, ...(capped.length !== content.length ? { fullLength: content.length } : {}) };
  };
  if (c.kind === 'invalid') return done('invalid_arguments', `Error: ${c.message}. Fix the arguments and call again.`);
  if (!opts.registry.allowed(tool)) return done('denied', `Error: permission denied: ${call.name} needs the grant ${tool.grant ?? '?'}, which this agent does not have.`);
  if (opts.signal.aborted) return done('cancelled', 'Cancelled: the run was aborted before this call started.');

  const ownTimeoutMs = tool.timeoutMs ?? opts.defaultTimeoutMs ?? 60_000;
  const stepLeftMs = opts.endsAt === undefined ? Infinity : opts.endsAt - Date.now();
  // Never start a call the step has no time left for: a write sent and then reported as timed out would be
  // tried again next step under another idempotency key.
  if (stepOver?.aborted || stepLeftMs <= 0) return done('timed_out', `Error: ${call.name} was not started: the step's time limit was reached.`);
  const local = new AbortController();
  const signal = AbortSignal.any([opts.signal, local.signal]);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  let onStepOver: (() => void) | undefined;
  // Races the tool against the run's abort, its own timeout and the step's end, so a tool that ignores its signal
  // cannot hold the run: the result is settled now, the stray promise is left to finish on its own (its rejection is caught).
  const interrupted = new Promise<ToolResultRecord>((resolve) => {
    const cut = (message: string): void => {
      local.abort(new Error('tool timeout'));
      resolve(done('timed_out', message));
    };
    timer = setTimeout(() => cut(`Error: ${call.name} timed out after ${ownTimeoutMs} ms.`), ownTimeoutMs);
    onStepOver = () => cut(`Error: ${call.name} was stopped at the step's time limit, after ${Math.max(0, stepLeftMs)} ms.`);
    stepOver?.addEventListener('abort', onStepOver, { once: true });
    onAbort = () => resolve(done('cancelled', `Cancelled: the run was aborted while ${call.name} was running.`));
    opts.signal.addEventListener('abort', onAbort, { once: true });
  });
  // Whatever the tool calls out to on this call's behalf (a delegate, an HTTP MCP server) continues its span.
  const traceparent = span ? traceparentOf(span.context) : undefined;
  // Started inside a promise chain, so a tool that throws synchronously is an error result like any other.
  const executed = Promise.resolve()
    .then(() => withTraceparent(traceparent, () => tool.execute(call.arguments, { signal, callId: call.id, idempotencyKey: toolCallKey(opts.activationId, opts.step, index + 1), step: opts.step, remaining: within(opts.remaining?.(), stepLeftMs), traceparent })))
    .then(
      (o) => ({ ...done(o.status, o.content), ...(o.ledger ? { ledger: o.ledger } : {}) }),
      (err: unknown) => done('error', `Error: ${call.name} failed: ${err instanceof Error ? err.message : String(err)}`),
    );
  try {
    const first = await Promise.race([executed.then((r) => ({ r, interrupted: false })), interrupted.then((r) => ({ r, interrupted: true }))]);
    if (!first.interrupted || !tool.reportsUsage) return first.r;
    // A cancelled delegate stops at its next await and returns its ledger; its tokens were spent all the same.
    const late = await Promise.race([executed, new Promise<undefined>((resolve) => void setTimeout(resolve, LATE_USAGE_WAIT_MS))]);
    return late?.ledger ? { ...first.r, ledger: late.ledger } : first.r;
  } finally {
    clearTimeout(timer);
    if (onAbort) opts.signal.removeEventListener('abort', onAbort);
    if (onStepOver) stepOver?.removeEventListener('abort', onStepOver);
  }
}

/** What the run has left, bounded by what the step has left (a delegate wraps up in time instead of being cut). */
function within(remaining: { tokens: number; ms: number } | undefined, stepLeftMs: number): { tokens: number; ms: number } | undefined {
  return remaining && { tokens: remaining.tokens, ms: Math.min(remaining.ms, stepLeftMs) };
}
