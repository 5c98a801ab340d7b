// The loop's driver (docs/agent-loop.md, "The loop as a step machine"): it sets a run up, drives takeStep
// (step.ts) from state to state until a Next says wrap up or end, and owns the run's I/O: the deadline, the
// spans, the model calls and the tool runner, handed to each step as its deps, and the one ending of every
// run, never an exception. A run starts fresh (runLoop) or goes on from a state captured earlier, maybe in
// another process (resumeLoop); the state is plain data (loop-state.ts).
import type { ApprovalGate, ApprovalPause } from './approval-gate.ts';
import type { EventLog } from './events.ts';
import { contextOf, endSpan, payloadAttributes, startSpan, type SpanHandle, type TraceOptions } from './tracing.ts';
import { estimatePromptTokens, wrapUpReplyTokens, wrapUpTimeReserveMs, wrapUpTokenReserve, WRAP_UP_PROMPT, type Limits } from './limits.ts';
import { initialState, withModelCall, type LoopState, type ToolResultEntry } from './loop-state.ts';
import type { ChatMessage, TokenUsage } from './messages.ts';
import { callWithRetries, DEFAULT_RETRY, type RetryPolicy } from './model-caller.ts';
import type { ChatModel, ModelResponse, ToolDefinition } from './model.ts';
import { OversizedOutputError, oversizedUsage, type ModelOutputBounds } from './oversized-output.ts';
import type { OversizedOutput } from '../policy/output-bounds.ts';
import { assertNever, crashed, errorMessage, type Ending, type WrapUpReason } from './next-step.ts';
import { takeStep, type StepDeps } from './step.ts';
import type { TerminationReason } from './termination.ts';
import { textModeSystemPrompt, renderHistory, type ToolMode } from './tool-modes.ts';
import { runToolCalls } from './tool-runner.ts';
import { ToolRegistry } from './tools.ts';
import { DEFAULT_PRICES, ledgerCostUsd, ledgerEntry, ledgerTokens, ledgerUsage, type LedgerEntry, type PriceTable } from './usage-ledger.ts';

export interface LoopInput {
  model: ChatModel;
  modelName: string;
  /** brain.fallback_models, tried in order after the main model keeps failing with retryable errors. */
  fallbackModels?: readonly string[];
  system: string;
  task: string;
  temperature?: number;
  /** brain.max_tokens: the most one reply may use. */
  maxTokens?: number;
  maxSteps: number;
  /** behavior.max_tokens: input + output over the run (default 100,000). */
  maxRunTokens?: number;
  /** behavior.max_duration in ms (default 5 min). */
  maxDurationMs?: number;
  signal: AbortSignal;
  /** Every event of the run, streamed model output included (live `model_delta` events). */
  events: EventLog;
  tools?: ToolRegistry;
  toolMode?: ToolMode;
  prices?: PriceTable;
  retry?: RetryPolicy;
  /** The most answer text and tool-call arguments one model call may return (behavior.limits.max_*_bytes). */
  outputBounds?: ModelOutputBounds;
  /** Tool output cap in characters (default 16,000). */
  outputCap?: number;
  toolTimeoutMs?: number;
  /** One step, its model call and tool calls together; tools still running at the limit time out, the loop goes on. */
  stepTimeoutMs?: number;
  /** The model's context window in tokens (default 128,000): older turns are compacted before it is reached. */
  contextWindowTokens?: number;
  noActionSentinels?: readonly string[];
  /**
   * Continue a stored conversation (everything after the system prompt, task included) instead of starting
   * from `task`. Its tool calls are paired again first (history-repair.ts).
   */
  resume?: readonly ChatMessage[];
  /** The agent's name, for span names. */
  agent?: string;
  /** OpenTelemetry: the trace the run continues and whether payloads are captured (tracing.ts). */
  trace?: TraceOptions;
  /** Applied to every tool result before the model (and the record) sees it: known secrets become [REDACTED]. */
  redact?: (text: string) => string;
  /**
   * Called with the run's state each time the run could go on from it (resumeLoop): after every step that does
   * not end the run, and between a step's reply and its tool calls. Plain data: keep it, serialise it, never change it.
   */
  onCheckpoint?: (state: LoopState) => void;
  /** Calls that wait for a person's yes (the run ends `awaiting_approval` before them), and decisions on pending ones. */
  approval?: ApprovalGate;
  /**
   * The activation whose idempotency keys the tool calls use (default: the events' activation). A run resumed
   * after an approval keeps the paused activation's, so the approved call has the key it would have had.
   */
  keyRoot?: string;
}

export interface LoopResult {
  /** The answer to post; empty when the run ended without one. */
  text: string;
  termination: TerminationReason;
  partial: boolean;
  usage: TokenUsage;
  costUsd: number;
  steps: number;
  /** Model calls made, the wrap-up included. */
  modelCalls: number;
  ledger: LedgerEntry[];
  /** Every tool result, in the order committed. */
  toolResults: ToolResultEntry[];
  /** A tool wrote to the hub as the agent. */
  posted: boolean;
  /** Set when termination is `error`; `retryable` tells the caller whether trying again may help, `retryAfterMs` when. */
  error?: { message: string; retryable: boolean; retryAfterMs?: number; name?: string; oversized?: OversizedOutput };
  /** Set when termination is `awaiting_approval`: the state to go on from and the calls that wait. */
  paused?: ApprovalPause;
}

/** A fresh run: from the task, or from a stored conversation (`resume`). */
export async function runLoop(input: LoopInput): Promise<LoopResult> {
  const { state, repairs } = initialState(input.task, input.resume);
  // The record keeps the task's head: a thread context can run to tens of kilobytes.
  return drive(state, input, { task: input.task, opening: input.resume ? '(resumed conversation)' : input.task.slice(0, 2_000), repairs });
}

/**
 * A run that goes on from a state an earlier run handed out (onCheckpoint), in this process or another: with the
 * same input it makes the requests the earlier run would have made next. The time it may still take is
 * max_duration minus the state's elapsedMs.
 */
export async function resumeLoop(state: LoopState, input: Omit<LoopInput, 'task' | 'resume'>): Promise<LoopResult> {
  const first = state.messages[0];
  const task = first?.role === 'user' ? first.content : '';
  return drive(state, input, { task, opening: `(resumed at step ${state.step})`, repairs: [] });
}

async function drive(start: LoopState, input: Omit<LoopInput, 'task' | 'resume'>, how: { task: string; opening: string; repairs: readonly string[] }): Promise<LoopResult> {
  const limits: Limits = {
    maxSteps: input.maxSteps,
    maxTokens: input.maxRunTokens ?? 100_000,
    maxDurationMs: input.maxDurationMs ?? 300_000,
    maxResponseTokens: input.maxTokens ?? 4096,
  };
  const { events } = input;
  const registry = input.tools ?? new ToolRegistry([], []);
  const mode = input.toolMode ?? 'native';
  const definitions = registry.definitions();
  const prices = input.prices ?? DEFAULT_PRICES;
  for (const name of registry.duplicates) events.emit({ type: 'loop_warning', kind: 'format', message: `tool ${name} is offered twice; only the first is used` });
  const system: ChatMessage = { role: 'system', content: mode === 'text' ? textModeSystemPrompt(input.system, definitions) : input.system };
  for (const r of how.repairs) events.emit({ type: 'loop_warning', kind: 'repair', message: `resumed history: ${r}` });
  events.emit({ type: 'user_message', text: how.opening, chars: how.task.length });

  // The deadline fires early by the wrap-up's time slice; the caller's signal (cancel, shutdown) is "aborted".
  // A resumed run has what the earlier ones left of max_duration.
  const deadline = new AbortController();
  const startedAt = Date.now();
  const deadlineAt = startedAt + Math.max(1, limits.maxDurationMs - wrapUpTimeReserveMs(limits) - start.elapsedMs);
  const remaining = (state: LoopState): { tokens: number; ms: number } => ({ tokens: Math.max(0, limits.maxTokens - wrapUpTokenReserve(limits) - ledgerTokens(state.ledger)), ms: Math.max(0, deadlineAt - Date.now()) });
  const deadlineTimer = setTimeout(() => deadline.abort(new Error('deadline')), Math.max(1, deadlineAt - Date.now()));
  const runSignal = AbortSignal.any([input.signal, deadline.signal]);

  // Spans: the run, then one per step; model attempts and tool calls hang from the current step.
  const runSpan = startSpan(`invoke_agent${input.agent ? ` ${input.agent}` : ''}`, contextOf(input.trace?.traceparent), {
    'gen_ai.operation.name': 'invoke_agent',
    ...(input.agent ? { 'gen_ai.agent.name': input.agent } : {}),
    'warren.activation_id': events.activationId,
    'warren.max_steps': limits.maxSteps,
    ...payloadAttributes(input.trace, { 'warren.task': () => how.task }),
  });
  let stepSpan: SpanHandle | undefined;
  const closeStep = (): void => {
    endSpan(stepSpan);
    stepSpan = undefined;
  };
  const openSpan = (name: string, attributes: Record<string, string | number>): SpanHandle => {
    closeStep();
    return (stepSpan = startSpan(name, runSpan.context, attributes));
  };

  const callModel = async (state: LoopState, messages: ChatMessage[], opts: { wrapUp: boolean; maxTokens: number; signal: AbortSignal; retry: RetryPolicy; span: SpanHandle }): Promise<{ state: LoopState; response: ModelResponse }> => {
    const started = Date.now();
    const res = await callWithRetries(
      input.model,
      [input.modelName, ...(input.fallbackModels ?? [])],
      {
        messages,
        tools: mode === 'native' && definitions.length ? definitions : undefined,
        toolChoice: opts.wrapUp && mode === 'native' && definitions.length ? 'none' : undefined,
        temperature: input.temperature,
        maxTokens: opts.maxTokens,
        signal: opts.signal,
        ...(input.outputBounds ? { bounds: input.outputBounds } : {}),
      },
      events,
      opts.retry,
      { parent: opts.span.context, options: input.trace },
    ).catch((err: unknown) => {
      // The provider was paid for what it wrote before the cut: an estimate of it goes on the run's ledger (step.ts).
      if (err instanceof OversizedOutputError) {
        const usage = oversizedUsage(err, estimatePromptTokens(messages, mode === 'native' ? definitions : []));
        err.charge = ledgerEntry({ ...usage, model: input.modelName, estimate: true, latencyMs: Date.now() - started, attempt: 1, wrapUp: opts.wrapUp }, prices);
      }
      throw err;
    });
    const u = res.response.usage;
    const next = withModelCall(state, ledgerEntry({ ...u, model: res.response.model || res.model, estimate: false, latencyMs: res.latencyMs, attempt: res.attempt, wrapUp: opts.wrapUp }, prices));
    events.emit({ type: 'model_result', usage: u, finish_reason: res.response.finishReason });
    events.emit({ type: 'budget_update', used_tokens: ledgerTokens(next.ledger), max_tokens: limits.maxTokens, cost_usd: ledgerCostUsd(next.ledger) });
    return { state: next, response: res.response };
  };

  const checkpoint = (state: LoopState): void => input.onCheckpoint?.({ ...state, elapsedMs: start.elapsedMs + (Date.now() - startedAt) });

  const deps: StepDeps = {
    config: { limits, mode, system, registry, definitions, contextWindowTokens: input.contextWindowTokens ?? 128_000, noActionSentinels: input.noActionSentinels, redact: input.redact, approval: input.approval },
    events,
    facts: () => ({ aborted: input.signal.aborted, pastDeadline: deadline.signal.aborted }),
    openStep: (step) => ({
      span: openSpan('warren.step', { 'warren.step': step, 'warren.max_steps': limits.maxSteps }),
      signal: input.stepTimeoutMs ? AbortSignal.any([runSignal, AbortSignal.timeout(input.stepTimeoutMs)]) : runSignal,
      ...(input.stepTimeoutMs ? { endsAt: Date.now() + input.stepTimeoutMs, timeoutMs: input.stepTimeoutMs } : {}),
    }),
    callModel: (state, messages, scope) => callModel(state, messages, { wrapUp: false, maxTokens: limits.maxResponseTokens, signal: scope.signal, retry: input.retry ?? DEFAULT_RETRY, span: scope.span }),
    runTools: (calls, state, scope, rejected) =>
      runToolCalls(calls, {
        registry,
        signal: runSignal,
        activationId: input.keyRoot ?? events.activationId,
        step: state.step,
        maxSteps: limits.maxSteps,
        events,
        ...(rejected !== undefined ? { rejected } : {}),
        outputCap: input.outputCap,
        defaultTimeoutMs: input.toolTimeoutMs,
        endsAt: scope.endsAt,
        remaining: () => remaining(state),
        tracing: { parent: scope.span.context, options: input.trace },
      }),
    checkpoint,
  };

  const finish = (state: LoopState, e: Ending, partial: boolean, paused?: ApprovalPause): LoopResult => {
    clearTimeout(deadlineTimer);
    const text = (e.text ?? '').trim();
    closeStep();
    const usage = ledgerUsage(state.ledger);
    const costUsd = ledgerCostUsd(state.ledger);
    const failed = e.termination === 'error' || e.termination === 'circuit_open';
    endSpan(
      runSpan,
      { 'warren.termination': e.termination, 'warren.partial': partial, 'warren.steps': state.step, 'gen_ai.usage.input_tokens': usage.inputTokens, 'gen_ai.usage.output_tokens': usage.outputTokens, 'warren.cost_usd': costUsd },
      failed ? (e.message ?? e.termination) : undefined,
    );
    // A breaker's stop was reported by its guard's loop_warning already: an error event would say it twice.
    if (e.message && e.termination === 'error') events.emit({ type: 'error', message: e.message });
    if (e.message && (e.termination === 'max_steps' || e.termination === 'budget' || e.termination === 'deadline')) events.emit({ type: 'loop_warning', kind: 'limit', message: e.message });
    if (text || e.termination === 'final' || e.termination === 'stop_tool') events.emit({ type: 'agent_response', text, partial });
    events.emit({ type: 'activation_end', termination: e.termination, partial, usage });
    return {
      text,
      termination: e.termination,
      partial,
      usage,
      costUsd,
      steps: state.step,
      modelCalls: state.modelCalls,
      ledger: [...state.ledger],
      toolResults: [...state.toolResults],
      posted: state.posted,
      ...(paused ? { paused } : {}),
      ...(e.termination === 'error' || e.termination === 'aborted' ? { error: { message: e.message ?? e.termination, retryable: e.retryable ?? true, ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}), ...(e.name ? { name: e.name } : {}), ...(e.oversized ? { oversized: e.oversized } : {}) } } : {}),
    };
  };

  /** One last call with tools disabled, asking for the best answer so far (R1); skipped when nothing is left. */
  const wrapUp = async (state: LoopState, reason: WrapUpReason, message: string): Promise<LoopResult> => {
    const messages = [...renderHistory([system, ...state.messages], mode), { role: 'user' as const, content: WRAP_UP_PROMPT }];
    const estimate = estimatePromptTokens(messages, mode === 'native' ? definitions : []);
    const replyTokens = wrapUpReplyTokens(limits, ledgerTokens(state.ledger), estimate);
    const fallbackText = lastAssistantText(state.messages);
    if (replyTokens === undefined || input.signal.aborted) return finish(state, { termination: reason, text: fallbackText, message }, true);
    try {
      const signal = AbortSignal.any([input.signal, AbortSignal.timeout(wrapUpTimeReserveMs(limits))]);
      const span = openSpan('warren.wrap_up', { 'warren.reason': reason });
      const res = await callModel(state, messages, { wrapUp: true, maxTokens: replyTokens, signal, retry: { ...(input.retry ?? DEFAULT_RETRY), attemptsPerModel: 1 }, span });
      return finish(res.state, { termination: reason, text: stripToolCallText(res.response.content ?? '') || fallbackText, message }, true);
    } catch (err) {
      return finish(state, { termination: reason, text: fallbackText, message: `${message}; the wrap-up call failed: ${errorMessage(err)}` }, true);
    }
  };

  let state = start;
  try {
    for (;;) {
      const next = await takeStep(state, deps);
      state = next.state;
      switch (next.kind) {
        case 'continue':
          checkpoint(state);
          break;
        case 'wrap_up':
          return await wrapUp(state, next.reason, next.message);
        case 'end':
          return finish(state, next.ending, false);
        case 'await_approval': {
          // The state as any process may go on from it: its run time so far included.
          const kept = { ...state, elapsedMs: start.elapsedMs + (Date.now() - startedAt) };
          events.emit({ type: 'loop_warning', kind: 'approval', message: `waiting for approval: ${next.calls.map((c) => c.name).join(', ')}` });
          return finish(kept, { termination: 'awaiting_approval' }, false, { state: kept, calls: next.calls });
        }
        default:
          return assertNever(next);
      }
    }
  } catch (err) {
    // The last line of defence: whatever went wrong is a typed ending, never an escaped exception (R1).
    return finish(state, crashed(err, { aborted: input.signal.aborted }), false);
  }
}

function lastAssistantText(history: readonly ChatMessage[]): string {
  for (let i = history.length - 1; i >= 0; i--) {
    const m = history[i]!;
    if (m.role === 'assistant' && m.content && stripToolCallText(m.content)) return stripToolCallText(m.content);
  }
  return '';
}

/** The prose of a reply without its text-mode tool_call blocks. */
function stripToolCallText(text: string): string {
  return text.replace(/```[ \t]*tool_calls?[\s\S]*?```/g, '').trim();
}

export type { ToolDefinition };
