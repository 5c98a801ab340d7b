// One step of the loop (docs/agent-loop.md, "The loop as a step machine"): context → model → parse → repair →
// guard → tools → results, from one state to the next and one Next. It keeps two invariants: every call has
// exactly one result before the next model call (R5), and a failure anywhere is a typed ending, never an
// exception. The step only sequences: decisions are pure (next-step.ts, loop-guard.ts, limits.ts), I/O goes
// through `deps` (the model, the tools, spans and the clock live in the driver, loop.ts). A step is two turns,
// the model's and the tools', with the calls pending in the state between them, so a run can stop there too.
//
// A call to a tool that does not exist is a call like any other for the guards, the events and the results;
// only its name never goes back to the provider (its result is a note to the model instead of a tool message).
import { callsAwaiting, deniedMessage, type ApprovalGate } from './approval-gate.ts';
import { compactHistory } from './compaction.ts';
import { markDuplicates, type PlannedCall } from './duplicate-calls.ts';
import type { EventLog } from './events.ts';
import { estimatePromptTokens, stepNote, type Limits } from './limits.ts';
import { guardBeforeCalls } from './loop-guard.ts';
import { withModelCall, type LoopState, type PendingCall, type PendingStep } from './loop-state.ts';
import { OversizedOutputError } from './oversized-output.ts';
import type { ChatMessage } from './messages.ts';
import type { ModelResponse, ToolDefinition } from './model.ts';
import { afterModelFailure, afterReply, afterResults, beforeStep, crashed, overBudget, type Next, type RunFacts } from './next-step.ts';
import type { SpanHandle } from './tracing.ts';
import { parseTextToolCalls, type RawToolCall } from './tool-call-parser.ts';
import { renderHistory, type ToolMode } from './tool-modes.ts';
import { prepareCall, repairToolName } from './tool-repair.ts';
import type { ToolResultRecord } from './tool-runner.ts';
import type { ToolRegistry } from './tools.ts';
import { ledgerCostUsd, ledgerTokens } from './usage-ledger.ts';

/** What a step reads and never changes: the run's configuration. */
export interface StepConfig {
  limits: Limits;
  mode: ToolMode;
  /** Today's system prompt: rebuilt from the input on every run, never kept in the state. */
  system: ChatMessage;
  registry: ToolRegistry;
  /** What the model is offered (one array for the run: its size is measured once). */
  definitions: readonly ToolDefinition[];
  contextWindowTokens: number;
  noActionSentinels?: readonly string[];
  /** Applied to every tool result before the model (and the record) sees it. */
  redact?: (text: string) => string;
  /** Calls that wait for a person's yes, and the decisions on the pending ones. */
  approval?: ApprovalGate;
}

/** One step's span, signal (the run's, cut by step_timeout when set) and end. */
export interface StepScope {
  span: SpanHandle;
  signal: AbortSignal;
  /** Epoch ms the step ends (step_timeout), for the tools. */
  endsAt?: number;
  timeoutMs?: number;
}

/** The step's I/O, provided by the driver. */
export interface StepDeps {
  config: StepConfig;
  events: EventLog;
  facts(): RunFacts;
  /** Starts the step's span and signal (again, when a run goes on from pending calls). */
  openStep(step: number): StepScope;
  /** One model call with retries and fallback; the state comes back with its ledger entry. Throws when it failed for good. */
  callModel(state: LoopState, messages: ChatMessage[], scope: StepScope): Promise<{ state: LoopState; response: ModelResponse }>;
  runTools(calls: readonly PlannedCall[], state: LoopState, scope: StepScope, rejected: string | undefined): Promise<ToolResultRecord[]>;
  /** The state between a step's reply and its results, for whoever keeps states. */
  checkpoint(state: LoopState): void;
}

/** A step from `state`: the model's turn unless calls are pending, then the tools' turn. */
export async function takeStep(state: LoopState, deps: StepDeps): Promise<Next> {
  if (state.pending) {
    const waiting = callsAwaiting(state.pending, deps.config.approval);
    if (waiting.length) return { kind: 'await_approval', state, calls: waiting };
    return toolTurn(state, state.pending, deps, deps.openStep(state.step));
  }
  const stop = beforeStep(state, deps.config.limits, deps.facts());
  if (stop) return stop;
  const turn = await modelTurn(state, deps);
  if (turn.kind === 'next') return turn.next;
  try {
    deps.checkpoint(turn.state);
  } catch (err) {
    return { kind: 'end', state: turn.state, ending: crashed(err, deps.facts()) };
  }
  // Checkpointed with its calls pending: a run that waits for approval goes on from exactly here.
  const waiting = callsAwaiting(turn.pending, deps.config.approval);
  if (waiting.length) return { kind: 'await_approval', state: turn.state, calls: waiting };
  return toolTurn(turn.state, turn.pending, deps, turn.scope);
}

type ModelTurn = { kind: 'next'; next: Next } | { kind: 'pending'; state: LoopState; pending: PendingStep; scope: StepScope };

/** Compaction, the budget, the model call and its calls, decided and written into the history. */
async function modelTurn(state: LoopState, deps: StepDeps): Promise<ModelTurn> {
  const { config, events } = deps;
  const { limits, mode } = config;
  const tools = mode === 'native' ? config.definitions : [];
  let s = state;
  try {
    const compacted = compactHistory([config.system, ...s.messages], tools, { windowTokens: config.contextWindowTokens, replyTokens: limits.maxResponseTokens });
    if (compacted) {
      s = { ...s, messages: compacted.messages.slice(1) };
      events.emit({ type: 'compaction', dropped_turns: compacted.droppedTurns, before_tokens: compacted.beforeTokens, after_tokens: compacted.afterTokens });
    }
    const messages = [...renderHistory([config.system, ...s.messages], mode), { role: 'system' as const, content: stepNote(s.step + 1, limits.maxSteps) }];
    const refused = overBudget(s, limits, estimatePromptTokens(messages, tools));
    if (refused) return { kind: 'next', next: refused };

    s = { ...s, step: s.step + 1 };
    events.emit({ type: 'step_start', step: s.step, max_steps: limits.maxSteps });
    const scope = deps.openStep(s.step);
    let response: ModelResponse;
    try {
      ({ state: s, response } = await deps.callModel(s, messages, scope));
    } catch (err) {
      // A call cut for its size was still paid for: its estimated cost counts (loop.ts sets it).
      const charged = err instanceof OversizedOutputError && err.charge ? withModelCall(s, err.charge) : s;
      return { kind: 'next', next: afterModelFailure(charged, err, limits, { ...deps.facts(), ...(scope.signal.aborted ? { stepTimeoutMs: scope.timeoutMs } : {}) }) };
    }

    const { raws, callIds } = callsOf(response, mode, s.callIds, config.registry.names());
    s = { ...s, callIds };
    if (raws.length === 0) {
      const text = (response.content ?? '').trim();
      const next = afterReply(s, text, config.noActionSentinels);
      if (next.kind === 'end' && next.ending.termination === 'final' && text === '') events.emit({ type: 'loop_warning', kind: 'format', message: 'the model returned an empty reply' });
      return { kind: 'next', next };
    }

    const prepared = raws.map((r) => prepareCall(r, config.registry));
    for (const p of prepared) if (p.kind === 'ready' && p.repairs.length) events.emit({ type: 'loop_warning', kind: 'repair', message: `call ${p.call.id} to ${p.call.name} repaired: ${p.repairs.join(', ')}` });
    // Only calls to registered tools go back in the assistant message: an invented name is never echoed (R6).
    // Its result goes to the model as a note instead, after the paired results.
    const echoed = prepared.filter((p) => p.kind !== 'unknown').map((p) => p.call);
    const assistant: ChatMessage = { role: 'assistant', content: response.content ?? (echoed.length ? null : ''), ...(echoed.length ? { toolCalls: echoed } : {}) };
    // Unknown calls are calls too, for the guards and the events.
    const { guard, verdict } = guardBeforeCalls(s.guard, s.step, prepared.map((p) => p.call));
    // Identical changes run once (R2): a repeat is answered, not run, and still counts for the guards.
    const planned = markDuplicates(prepared, s.toolResults, (name) => config.registry.get(name)?.postsToHub === true);
    for (const p of planned) if (p.kind === 'duplicate') events.emit({ type: 'loop_warning', kind: 'duplicate', message: `call ${p.call.id}: ${p.message}` });
    const pending: PendingStep = { calls: planned.map(pendingOf), verdict };
    s = { ...s, messages: [...s.messages, assistant], guard, pending };
    return { kind: 'pending', state: s, pending, scope };
  } catch (err) {
    return { kind: 'next', next: { kind: 'end', state: s, ending: crashed(err, deps.facts()) } };
  }
}

/** The pending calls run, their results committed in call order, and what the guards and tools say next. */
async function toolTurn(state: LoopState, pending: PendingStep, deps: StepDeps, scope: StepScope): Promise<Next> {
  const { config, events } = deps;
  let s = state;
  try {
    const { verdict } = pending;
    const ran = await deps.runTools(
      pending.calls.map((c) => preparedOf(c, config.registry, config.approval)),
      s,
      scope,
      verdict.kind === 'loop_detected' ? `Rejected: ${verdict.message}.` : undefined,
    );
    // A tool may return a secret it could reach (an MCP server's own env, a file): the model never sees it.
    const { redact } = config;
    const results = redact ? ran.map((r) => ({ ...r, content: redact(r.content) })) : ran;
    const echoedIds = new Set(pending.calls.filter((c) => c.kind !== 'unknown').map((c) => c.call.id));
    s = withResults(s, results, echoedIds);
    if (results.some((r) => r.ledger?.length)) events.emit({ type: 'budget_update', used_tokens: ledgerTokens(s.ledger), max_tokens: config.limits.maxTokens, cost_usd: ledgerCostUsd(s.ledger) });
    const { next, warnings } = afterResults(s, verdict, results, deps.facts());
    for (const { guard, message } of warnings) events.emit({ type: 'loop_warning', kind: guard, message });
    return next;
  } catch (err) {
    return { kind: 'end', state: s, ending: crashed(err, deps.facts()) };
  }
}

/** The state with a step's results: paired ones after their call, notes for unknown calls after those (R5, R6). */
function withResults(state: LoopState, results: readonly ToolResultRecord[], echoedIds: ReadonlySet<string>): LoopState {
  const paired: ChatMessage[] = results.filter((r) => echoedIds.has(r.call.id)).map((r) => ({ role: 'tool', toolCallId: r.call.id, name: r.call.name, content: r.content }));
  const notes: ChatMessage[] = results.filter((r) => !echoedIds.has(r.call.id)).map((r) => ({ role: 'user', content: r.content }));
  return {
    ...state,
    messages: [...state.messages, ...paired, ...notes],
    // The tool itself (functions) stays out of the state; its effects are recorded here.
    toolResults: [...state.toolResults, ...results.map(({ tool: _tool, ...entry }) => entry)],
    ledger: [...state.ledger, ...results.flatMap((r) => r.ledger ?? [])],
    posted: state.posted || results.some((r) => r.status === 'ok' && r.tool?.postsToHub === true),
    pending: null,
  };
}

/** A planned call as the state keeps it: without its tool. */
function pendingOf(p: Exclude<PlannedCall, { kind: 'denied' }>): PendingCall {
  return p.kind === 'ready' ? { kind: 'ready', call: p.call } : { kind: p.kind, call: p.call, message: p.message };
}

/** A pending call with its tool again, from this run's registry. */
function preparedOf(c: PendingCall, registry: ToolRegistry, approval: ApprovalGate | undefined): PlannedCall {
  if (c.kind === 'unknown') return { kind: 'unknown', call: c.call, message: c.message };
  const tool = registry.get(c.call.name);
  // Only a run resumed with other tools than the one that stopped can miss one.
  if (!tool) return { kind: 'unknown', call: c.call, message: `call ${c.call.id}: the tool ${c.call.name} is no longer offered.` };
  const decision = c.kind === 'ready' ? approval?.decisions?.[c.call.id] : undefined;
  if (decision?.kind === 'denied') return { kind: 'denied', call: c.call, tool, message: deniedMessage(c.call.name, decision.note) };
  return c.kind === 'ready' ? { kind: 'ready', call: c.call, tool, repairs: [] } : { kind: c.kind, call: c.call, tool, message: c.message };
}

/** The reply's calls, each with an id unused in the run (providers send empty or repeated ones; R5). */
function callsOf(res: ModelResponse, mode: ToolMode, ids: LoopState['callIds'], toolNames: readonly string[]): { raws: RawToolCall[]; callIds: LoopState['callIds'] } {
  const used = new Set(ids.used);
  let minted = ids.minted;
  const fresh = (kind: string): string => {
    let id: string;
    do id = `call_${kind}_${++minted}`;
    while (used.has(id));
    return id;
  };
  const raws = rawCallsOf(res, mode, () => fresh('text'), toolNames).map((r) => {
    const id = r.id && !used.has(r.id) ? r.id : fresh('synth');
    used.add(id);
    return { ...r, id };
  });
  return { raws, callIds: { used: [...used], minted } };
}

function rawCallsOf(res: ModelResponse, mode: ToolMode, nextId: () => string, toolNames: readonly string[]): RawToolCall[] {
  // Native calls win; text is parsed only in text mode, so a final answer quoting JSON is not run as a call.
  if (res.toolCalls.length) return res.toolCalls.map((c) => ({ id: c.id, name: c.name, rawArguments: c.rawArguments ?? c.arguments }));
  return mode === 'text' && res.content ? parseTextToolCalls(res.content, nextId, (name) => repairToolName(name, toolNames) !== undefined) : [];
}
