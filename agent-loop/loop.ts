// The agent loop (docs/agent-loop.md): context → model → parse → repair → tools → results → model … until a reply
// without tool calls, a loop-breaking tool, a limit or a guard. Decisions live in small pure modules
// (limits, loop-guard, tool-repair, tool-runner's planner); this file is the shell that sequences them and
// guarantees the two invariants: every call has exactly one result before the next model call, and every
// run ends with exactly one termination reason, never an exception. A call to a tool that does not exist is a
// call like any other for the guards, the events and the results; only its name never goes back to the
// provider (its result is a note to the model instead of a tool message).
import { compactHistory } from './compaction.ts';
import type { EventLog } from './events.ts';
import { repairHistory } from './history-repair.ts';
import { contextOf, endSpan, payloadAttributes, startSpan, type SpanHandle, type TraceOptions } from './tracing.ts';
import { admitCall, estimatePromptTokens, stepNote, wrapUpReplyTokens, wrapUpTimeReserveMs, wrapUpTokenReserve, WRAP_UP_PROMPT, type Limits } from './limits.ts';
import { FRESH_GUARD, guardAfterResults, guardBeforeCalls, type GuardState } from './loop-guard.ts';
import type { ChatMessage, TokenUsage, ToolCall } from './messages.ts';
import { callWithRetries, DEFAULT_RETRY, type RetryPolicy } from './model-caller.ts';
import { ModelError, type ChatModel, type ModelResponse, type ToolDefinition } from './model.ts';
import { isNoActionSentinel, type TerminationReason } from './termination.ts';
import { isRetryableError } from './retryable-error.ts';
import { parseTextToolCalls, type RawToolCall } from './tool-call-parser.ts';
import { renderHistory, textModeSystemPrompt, type ToolMode } from './tool-modes.ts';
import { prepareCall, repairToolName } from './tool-repair.ts';
import { runToolCalls, type ToolResultRecord } from './tool-runner.ts';
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
  toolResults: ToolResultRecord[];
  /** A tool wrote to the hub as the agent. */
  posted: boolean;
  /** Set when termination is `error`; `retryable` tells the caller whether trying again may help, `retryAfterMs` when. */
  error?: { message: string; retryable: boolean; retryAfterMs?: number; name?: string };
}

type Ending = { termination: TerminationReason; text?: string; message?: string; retryable?: boolean; retryAfterMs?: number; name?: string };

export async function runLoop(input: LoopInput): Promise<LoopResult> {
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
  const toolNames = registry.names();
  for (const name of registry.duplicates) events.emit({ type: 'loop_warning', kind: 'format', message: `tool ${name} is offered twice; only the first is used` });
  const prices = input.prices ?? DEFAULT_PRICES;
  const ledger: LedgerEntry[] = [];
  let guard: GuardState = FRESH_GUARD;
  const models = [input.modelName, ...(input.fallbackModels ?? [])];
  const toolResults: ToolResultRecord[] = [];
  let posted = false;
  let step = 0;
  let modelCalls = 0;
  let textIds = 0;
  const usedIds = new Set<string>();

  const system: ChatMessage = { role: 'system', content: mode === 'text' ? textModeSystemPrompt(input.system, definitions) : input.system };
  const history: ChatMessage[] = [system, { role: 'user', content: input.task }];
  if (input.resume) {
    // The system prompt is today's, not the stored one: definitions and tools may have changed since.
    const repaired = repairHistory(input.resume.filter((m) => m.role !== 'system'));
    history.splice(1, history.length, ...repaired.messages);
    for (const r of repaired.repairs) events.emit({ type: 'loop_warning', kind: 'repair', message: `resumed history: ${r}` });
    for (const m of repaired.messages) if (m.role === 'assistant') for (const c of m.toolCalls ?? []) usedIds.add(c.id);
  }

  // The record keeps the task's head: a thread context can run to tens of kilobytes.
  events.emit({ type: 'user_message', text: input.resume ? '(resumed conversation)' : input.task.slice(0, 2_000), chars: input.task.length });

  // The deadline fires early by the wrap-up's time slice; the caller's signal (cancel, shutdown) is "aborted".
  const deadline = new AbortController();
  const deadlineAt = Date.now() + Math.max(1, limits.maxDurationMs - wrapUpTimeReserveMs(limits));
  const remaining = (): { tokens: number; ms: number } => ({ tokens: Math.max(0, limits.maxTokens - wrapUpTokenReserve(limits) - ledgerTokens(ledger)), ms: Math.max(0, deadlineAt - Date.now()) });
  const deadlineTimer = setTimeout(() => deadline.abort(new Error('deadline')), Math.max(1, deadlineAt - Date.now()));
  const runSignal = AbortSignal.any([input.signal, deadline.signal]);

  // Spans: the run, then one per step; model attempts and tool calls hang from the current step.
  const runSpan = startSpan(`invoke_agent${input.agent ? ` ${input.agent}` : ''}`, contextOf(input.trace?.traceparent), {
    'gen_ai.operation.name': 'invoke_agent',
    ...(input.agent ? { 'gen_ai.agent.name': input.agent } : {}),
    'warren.activation_id': events.activationId,
    'warren.max_steps': limits.maxSteps,
    ...payloadAttributes(input.trace, { 'warren.task': () => input.task }),
  });
  let stepSpan: SpanHandle | undefined;
  const closeStep = (): void => {
    endSpan(stepSpan);
    stepSpan = undefined;
  };

  const call = async (messages: ChatMessage[], opts: { wrapUp: boolean; maxTokens: number; signal: AbortSignal; retry: RetryPolicy; span: SpanHandle }): Promise<ModelResponse> => {
    const res = await callWithRetries(
      input.model,
      models,
      {
        messages,
        tools: mode === 'native' && definitions.length ? definitions : undefined,
        toolChoice: opts.wrapUp && mode === 'native' && definitions.length ? 'none' : undefined,
        temperature: input.temperature,
        maxTokens: opts.maxTokens,
        signal: opts.signal,
      },
      events,
      opts.retry,
      { parent: opts.span.context, options: input.trace },
    );
    modelCalls++;
    const u = res.response.usage;
    ledger.push(ledgerEntry({ ...u, model: res.response.model || res.model, estimate: false, latencyMs: res.latencyMs, attempt: res.attempt, wrapUp: opts.wrapUp }, prices));
    events.emit({ type: 'model_result', usage: u, finish_reason: res.response.finishReason });
    events.emit({ type: 'budget_update', used_tokens: ledgerTokens(ledger), max_tokens: limits.maxTokens, cost_usd: ledgerCostUsd(ledger) });
    return res.response;
  };

  const finish = (e: Ending, partial: boolean): LoopResult => {
    clearTimeout(deadlineTimer);
    const text = (e.text ?? '').trim();
    closeStep();
    const failed = e.termination === 'error' || e.termination === 'circuit_open';
    endSpan(
      runSpan,
      { 'warren.termination': e.termination, 'warren.partial': partial, 'warren.steps': step, 'gen_ai.usage.input_tokens': ledgerUsage(ledger).inputTokens, 'gen_ai.usage.output_tokens': ledgerUsage(ledger).outputTokens, 'warren.cost_usd': ledgerCostUsd(ledger) },
      failed ? (e.message ?? e.termination) : undefined,
    );
    if (e.message && (e.termination === 'error' || e.termination === 'circuit_open')) events.emit({ type: 'error', message: e.message });
    if (e.message && (e.termination === 'max_steps' || e.termination === 'budget' || e.termination === 'deadline')) events.emit({ type: 'loop_warning', kind: 'limit', message: e.message });
    if (text || e.termination === 'final' || e.termination === 'stop_tool') events.emit({ type: 'agent_response', text, partial });
    events.emit({ type: 'activation_end', termination: e.termination, partial, usage: ledgerUsage(ledger) });
    return {
      text,
      termination: e.termination,
      partial,
      usage: ledgerUsage(ledger),
      costUsd: ledgerCostUsd(ledger),
      steps: step,
      modelCalls,
      ledger,
      toolResults,
      posted,
      ...(e.termination === 'error' || e.termination === 'aborted' ? { error: { message: e.message ?? e.termination, retryable: e.retryable ?? true, ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {}), ...(e.name ? { name: e.name } : {}) } } : {}),
    };
  };

  /** One last call with tools disabled, asking for the best answer so far (R1); skipped when nothing is left. */
  const wrapUp = async (reason: 'max_steps' | 'budget' | 'deadline', message: string): Promise<LoopResult> => {
    const messages = [...renderHistory(history, mode), { role: 'user' as const, content: WRAP_UP_PROMPT }];
    const estimate = estimatePromptTokens(messages, mode === 'native' ? definitions : []);
    const replyTokens = wrapUpReplyTokens(limits, ledgerTokens(ledger), estimate);
    const fallbackText = lastAssistantText(history);
    if (replyTokens === undefined || input.signal.aborted) return finish({ termination: reason, text: fallbackText, message }, true);
    try {
      const signal = AbortSignal.any([input.signal, AbortSignal.timeout(wrapUpTimeReserveMs(limits))]);
      closeStep();
      stepSpan = startSpan('warren.wrap_up', runSpan.context, { 'warren.reason': reason });
      const res = await call(messages, { wrapUp: true, maxTokens: replyTokens, signal, retry: { ...(input.retry ?? DEFAULT_RETRY), attemptsPerModel: 1 }, span: stepSpan });
      return finish({ termination: reason, text: stripToolCallText(res.content ?? '') || fallbackText, message }, true);
    } catch (err) {
      return finish({ termination: reason, text: fallbackText, message: `${message}; the wrap-up call failed: ${errorMessage(err)}` }, true);
    }
  };

  try {
    for (;;) {
      if (input.signal.aborted) return finish({ termination: 'aborted', message: 'aborted' }, false);
      if (deadline.signal.aborted) return await wrapUp('deadline', `the run reached its time limit of ${limits.maxDurationMs} ms`);
      if (step >= limits.maxSteps) return await wrapUp('max_steps', `the run reached its step limit of ${limits.maxSteps}`);

      const compacted = compactHistory(history, mode === 'native' ? definitions : [], { windowTokens: input.contextWindowTokens ?? 128_000, replyTokens: limits.maxResponseTokens });
      if (compacted) {
        history.splice(0, history.length, ...compacted.messages);
        events.emit({ type: 'compaction', dropped_turns: compacted.droppedTurns, before_tokens: compacted.beforeTokens, after_tokens: compacted.afterTokens });
      }
      const messages = [...renderHistory(history, mode), { role: 'system' as const, content: stepNote(step + 1, limits.maxSteps) }];
      const admitted = admitCall(limits, ledgerTokens(ledger), estimatePromptTokens(messages, mode === 'native' ? definitions : []));
      if (!admitted.ok) return await wrapUp('budget', admitted.message);

      step++;
      events.emit({ type: 'step_start', step, max_steps: limits.maxSteps });
      closeStep();
      stepSpan = startSpan('warren.step', runSpan.context, { 'warren.step': step, 'warren.max_steps': limits.maxSteps });
      const thisStep = stepSpan;
      const stepEndsAt = input.stepTimeoutMs ? Date.now() + input.stepTimeoutMs : undefined;
      const stepSignal = input.stepTimeoutMs ? AbortSignal.any([runSignal, AbortSignal.timeout(input.stepTimeoutMs)]) : runSignal;
      let res: ModelResponse;
      try {
        res = await call(messages, { wrapUp: false, maxTokens: limits.maxResponseTokens, signal: stepSignal, retry: input.retry ?? DEFAULT_RETRY, span: thisStep });
      } catch (err) {
        if (input.signal.aborted) return finish({ termination: 'aborted', message: 'aborted' }, false);
        if (deadline.signal.aborted) return await wrapUp('deadline', `the run reached its time limit of ${limits.maxDurationMs} ms`);
        if (stepSignal.aborted) return finish({ termination: 'error', message: `step ${step}: the model did not answer within the step limit of ${input.stepTimeoutMs} ms`, retryable: true }, false);
        // A provider that said when to come back (retry-after beyond what the loop waits) is heard by the queue's retry.
        return finish({ termination: 'error', message: errorMessage(err), retryable: isRetryableError(err), retryAfterMs: err instanceof ModelError ? err.retryAfterMs : undefined, name: errorName(err) }, false);
      }

      // Unused ids, also by a resumed history's calls.
      const fresh = (kind: string): string => {
        let id: string;
        do id = `call_${kind}_${++textIds}`;
        while (usedIds.has(id));
        return id;
      };
      const raws = rawCallsOf(res, mode, () => fresh('text'), toolNames).map((r) => {
        // Providers sometimes send empty or repeated ids; each call needs its own for pairing (R5).
        const id = r.id && !usedIds.has(r.id) ? r.id : fresh('synth');
        usedIds.add(id);
        return { ...r, id };
      });
      if (raws.length === 0) {
        // A "tool_calls" finish without calls is final (R2), as is an empty reply, flagged as a format problem.
        const text = (res.content ?? '').trim();
        if (isNoActionSentinel(text, input.noActionSentinels)) return finish({ termination: 'no_action' }, false);
        if (text === '') events.emit({ type: 'loop_warning', kind: 'format', message: 'the model returned an empty reply' });
        return finish({ termination: 'final', text }, false);
      }

      const prepared = raws.map((r) => prepareCall(r, registry));
      for (const p of prepared) if (p.kind === 'ready' && p.repairs.length) events.emit({ type: 'loop_warning', kind: 'repair', message: `call ${p.call.id} to ${p.call.name} repaired: ${p.repairs.join(', ')}` });
      // Only calls to registered tools go back in the assistant message: an invented name is never echoed (R6).
      // Its result goes to the model as a note instead, after the paired results.
      const echoed = prepared.filter((p) => p.kind !== 'unknown').map((p) => p.call);
      const echoedIds = new Set(echoed.map((c) => c.id));
      history.push({ role: 'assistant', content: res.content ?? (echoed.length ? null : ''), ...(echoed.length ? { toolCalls: echoed } : {}) });

      // Unknown calls are calls too, for the guards and the events.
      const before = guardBeforeCalls(guard, step, prepared.map((p) => p.call));
      guard = before.guard;
      const { verdict } = before;
      const ran = await runToolCalls(prepared, {
        registry,
        signal: runSignal,
        activationId: events.activationId,
        step,
        maxSteps: limits.maxSteps,
        events,
        ...(verdict.kind === 'loop_detected' ? { rejected: `Rejected: ${verdict.message}.` } : {}),
        outputCap: input.outputCap,
        defaultTimeoutMs: input.toolTimeoutMs,
        endsAt: stepEndsAt,
        remaining,
        tracing: { parent: thisStep.context, options: input.trace },
      });
      // A tool may return a secret it could reach (an MCP server's own env, a file): the model never sees it.
      const results = input.redact ? ran.map((r) => ({ ...r, content: input.redact!(r.content) })) : ran;
      for (const r of results) {
        if (echoedIds.has(r.call.id)) history.push({ role: 'tool', toolCallId: r.call.id, name: r.call.name, content: r.content });
        toolResults.push(r);
        if (r.ledger) ledger.push(...r.ledger);
        if (r.status === 'ok' && r.tool?.postsToHub) posted = true;
      }
      if (results.some((r) => r.ledger?.length)) events.emit({ type: 'budget_update', used_tokens: ledgerTokens(ledger), max_tokens: limits.maxTokens, cost_usd: ledgerCostUsd(ledger) });
      for (const r of results) if (!echoedIds.has(r.call.id)) history.push({ role: 'user', content: r.content });
      if (verdict.kind === 'loop_detected') {
        events.emit({ type: 'loop_warning', kind: 'repeat', message: verdict.message });
        // A guard ends the run without an answer: text written while looping is not one worth posting.
        return finish({ termination: 'loop_detected', message: verdict.message }, false);
      }

      const breaking = results.find((r) => r.status === 'ok' && r.tool?.loopBreaking);
      if (breaking) {
        if (breaking.tool?.loopBreaking === 'no_action') return finish({ termination: 'no_action' }, false);
        return finish({ termination: 'stop_tool', text: stringArg(breaking.call, 'result') }, false);
      }
      if (input.signal.aborted) return finish({ termination: 'aborted', message: 'aborted' }, false);
      const checked = guardAfterResults(guard, results);
      guard = checked.guard;
      const after = checked.verdict;
      if (after.kind === 'stop') {
        if (after.termination === 'loop_detected') events.emit({ type: 'loop_warning', kind: 'repeat', message: after.message });
        return finish({ termination: after.termination, message: after.message }, false);
      }
      // Warnings reach the model only when the run goes on; each says what the guard will really do.
      for (const nudge of [verdict, after]) {
        if (nudge.kind !== 'nudge') continue;
        events.emit({ type: 'loop_warning', kind: 'repeat', message: nudge.message });
        history.push({ role: 'user', content: nudge.message });
      }
    }
  } catch (err) {
    // The last line of defence: whatever went wrong is a typed ending, never an escaped exception (R1).
    return finish({ termination: input.signal.aborted ? 'aborted' : 'error', message: errorMessage(err), retryable: isRetryableError(err), name: errorName(err) }, false);
  }
}

function rawCallsOf(res: ModelResponse, mode: ToolMode, nextId: () => string, toolNames: readonly string[]): RawToolCall[] {
  // Native calls win; text is parsed only in text mode, so a final answer quoting JSON is not run as a call.
  if (res.toolCalls.length) return res.toolCalls.map((c) => ({ id: c.id, name: c.name, rawArguments: c.rawArguments ?? c.arguments }));
  return mode === 'text' && res.content ? parseTextToolCalls(res.content, nextId, (name) => repairToolName(name, toolNames) !== undefined) : [];
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

function stringArg(call: ToolCall, key: string): string {
  const v = call.arguments[key];
  return typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v);
}

function errorName(err: unknown): string | undefined {
  return err instanceof Error ? err.name : undefined;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export type { ToolDefinition };
