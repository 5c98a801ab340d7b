// The loop's state (docs/agent-loop.md, "The loop as a step machine"): everything one run carries from one step
// to the next, as one plain object: no class instances, Maps, Sets or functions, so it survives
// JSON.stringify/JSON.parse unchanged. A run can stop after any step and go on from its state in another process
// (resumeLoop in loop.ts). What is not here is configuration, rebuilt from the input on every run: the system
// prompt, the tools, the limits, the model.
import { z } from 'zod';
import type { ToolResultStatus } from './events.ts';
import { FRESH_GUARD, type GuardState, type GuardVerdict } from './loop-guard.ts';
import { repairHistory } from './history-repair.ts';
import type { ChatMessage, ToolCall } from './messages.ts';
import type { ToolResultRecord } from './tool-runner.ts';
import type { LedgerEntry } from './usage-ledger.ts';

/** A tool result as the run keeps it: the record without its tool (an object with functions). */
export type ToolResultEntry = Omit<ToolResultRecord, 'tool'>;

/**
 * A call of the current step, decided but not yet run: `ready` runs; `invalid`, `unknown` (tool-repair.ts) and
 * `duplicate` (duplicate-calls.ts) are answered with `message`. Its tool is looked up again by name when it runs.
 */
export type PendingCall = { readonly kind: 'ready'; readonly call: ToolCall } | { readonly kind: 'invalid' | 'unknown' | 'duplicate'; readonly call: ToolCall; readonly message: string };

/** A step between the model's reply and its results: the assistant message is in the history already. */
export interface PendingStep {
  /** In reply order, unknown calls included (they count for the guards and get results). */
  readonly calls: readonly PendingCall[];
  /** The repeat guard's verdict on these calls, given before they run (a `loop_detected` rejects them all). */
  readonly verdict: GuardVerdict;
}

export interface LoopState {
  readonly version: 1;
  /** The conversation after the system prompt: the task, replies, results and notes, compacted as it goes. */
  readonly messages: readonly ChatMessage[];
  /** Steps begun; the wrap-up is not a step. */
  readonly step: number;
  /** Model calls that answered, the wrap-up included. */
  readonly modelCalls: number;
  /** One entry per model call that returned usage, the run's own and its delegates' (usage-ledger.ts). */
  readonly ledger: readonly LedgerEntry[];
  /** Every tool result, in the order committed. */
  readonly toolResults: readonly ToolResultEntry[];
  /** A tool wrote to the hub as the agent. */
  readonly posted: boolean;
  /** Call ids are unique in a run (R5): every id used so far, and how many the loop made up. */
  readonly callIds: { readonly used: readonly string[]; readonly minted: number };
  readonly guard: GuardState;
  /** Set between a step's reply and its results; null between steps. */
  readonly pending: PendingStep | null;
  /** Run time used when the state was handed out (ms): a resumed run has max_duration minus this. */
  readonly elapsedMs: number;
}

/** A fresh run's state: the task, or a stored conversation paired again first (R5), with what was repaired. */
export function initialState(task: string, resume?: readonly ChatMessage[]): { state: LoopState; repairs: string[] } {
  const empty: LoopState = {
    version: 1,
    messages: [{ role: 'user', content: task }],
    step: 0,
    modelCalls: 0,
    ledger: [],
    toolResults: [],
    posted: false,
    callIds: { used: [], minted: 0 },
    guard: FRESH_GUARD,
    pending: null,
    elapsedMs: 0,
  };
  if (!resume) return { state: empty, repairs: [] };
  // The system prompt is today's, not the stored one: definitions and tools may have changed since.
  const repaired = repairHistory(resume.filter((m) => m.role !== 'system'));
  const used = repaired.messages.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []));
  return { state: { ...empty, messages: repaired.messages, callIds: { used, minted: 0 } }, repairs: repaired.repairs };
}

/** The state after a model call that answered, with its ledger entry. */
export function withModelCall(state: LoopState, entry: LedgerEntry): LoopState {
  return { ...state, modelCalls: state.modelCalls + 1, ledger: [...state.ledger, entry] };
}

// The schema checks a state that comes from elsewhere (a store, another process) before a run goes on from it.
const ToolCallSchema = z.object({ id: z.string(), name: z.string(), arguments: z.record(z.string(), z.unknown()), rawArguments: z.string().optional() });
const ChatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({ role: z.literal('assistant'), content: z.string().nullable(), toolCalls: z.array(ToolCallSchema).optional() }),
  z.object({ role: z.literal('tool'), toolCallId: z.string(), content: z.string(), name: z.string().optional() }),
]);
const count = z.number().int().nonnegative();
const LedgerEntrySchema = z.object({
  model: z.string(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  cachedTokens: z.number(),
  costUsd: z.number(),
  estimate: z.boolean(),
  latencyMs: z.number(),
  attempt: z.number(),
  wrapUp: z.boolean(),
});
const STATUSES = ['ok', 'error', 'cancelled', 'timed_out', 'denied', 'rejected', 'unknown_tool', 'invalid_arguments'] as const satisfies readonly ToolResultStatus[];
const ToolResultSchema = z.object({ call: ToolCallSchema, status: z.enum(STATUSES), content: z.string(), fullLength: z.number().optional(), ledger: z.array(LedgerEntrySchema).optional() });
const GuardSchema = z.object({
  seen: z.record(z.string(), z.array(z.number())),
  warned: z.record(z.string(), z.object({ step: z.number(), count: z.number() })),
  lastError: z.string().nullable(),
  errorStreak: count,
  failedSteps: count,
  failedStepsRan: z.boolean(),
  failedNames: z.array(z.string()),
});
const PendingSchema = z.object({
  calls: z.array(z.discriminatedUnion('kind', [z.object({ kind: z.literal('ready'), call: ToolCallSchema }), z.object({ kind: z.enum(['invalid', 'unknown', 'duplicate']), call: ToolCallSchema, message: z.string() })])),
  verdict: z.discriminatedUnion('kind', [z.object({ kind: z.literal('ok') }), z.object({ kind: z.enum(['nudge', 'loop_detected']), message: z.string() })]),
});
const LoopStateSchema = z.object({
  version: z.literal(1),
  messages: z.array(ChatMessageSchema),
  step: count,
  modelCalls: count,
  ledger: z.array(LedgerEntrySchema),
  toolResults: z.array(ToolResultSchema),
  posted: z.boolean(),
  callIds: z.object({ used: z.array(z.string()), minted: count }),
  guard: GuardSchema,
  pending: PendingSchema.nullable(),
  elapsedMs: z.number().nonnegative(),
}) satisfies z.ZodType<LoopState>;

/** A state from its JSON text (as JSON.stringify wrote it); throws saying what does not fit. */
export function parseLoopState(json: string): LoopState {
  const parsed = LoopStateSchema.safeParse(JSON.parse(json));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`not a loop state: ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
