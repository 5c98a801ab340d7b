// Hard limits of one run (docs/agent-loop.md R1, R9, R10) as pure decisions. A slice of tokens and time is kept
// back from the start for the wrap-up call, so a run that hits a limit can still give its best answer.
import type { ChatMessage } from './messages.ts';
import type { ToolDefinition } from './model.ts';

export interface Limits {
  maxSteps: number;
  /** Input + output tokens over the whole run. */
  maxTokens: number;
  maxDurationMs: number;
  /** brain.max_tokens: the most one reply may cost. */
  maxResponseTokens: number;
}

export const DEFAULT_LIMITS: Limits = { maxSteps: 10, maxTokens: 100_000, maxDurationMs: 300_000, maxResponseTokens: 4096 };

/** Tokens kept for the wrap-up call: 10 % of the budget, at most 4,000. */
export function wrapUpTokenReserve(l: Limits): number {
  return Math.min(Math.floor(l.maxTokens * 0.1), 4000);
}

/** Time kept for the wrap-up call: 10 % of the duration, at most 15 s. */
export function wrapUpTimeReserveMs(l: Limits): number {
  return Math.min(Math.floor(l.maxDurationMs * 0.1), 15_000);
}

/** A cheap, deterministic estimate (4 characters a token) of what a request's prompt will cost. */
export function estimatePromptTokens(messages: readonly ChatMessage[], tools: readonly ToolDefinition[] = []): number {
  let chars = 0;
  for (const m of messages) {
    chars += (m.content ?? '').length + 8;
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) chars += c.name.length + JSON.stringify(c.arguments).length + 16;
  }
  if (tools.length) chars += toolChars(tools);
  return Math.ceil(chars / 4);
}

/**
 * JSON size of each tool definition, measured once per definition object: most are module constants (the hub's
 * tools) offered to every activation in a list of its own, so a cache per list measured them again every run.
 */
const definitionChars = new WeakMap<ToolDefinition, number>();
/** Exactly JSON.stringify(tools).length: the definitions, a comma between each two, and the brackets. */
export function toolChars(tools: readonly ToolDefinition[]): number {
  let n = 2 + Math.max(0, tools.length - 1);
  for (const t of tools) {
    let c = definitionChars.get(t);
    if (c === undefined) definitionChars.set(t, (c = JSON.stringify(t).length));
    n += c;
  }
  return n;
}

export type BudgetVerdict = { ok: true } | { ok: false; message: string };

/** Reserve before sending: the prompt estimate plus a full reply must fit in what is left outside the margin. */
export function admitCall(l: Limits, usedTokens: number, promptEstimate: number): BudgetVerdict {
  const needed = promptEstimate + l.maxResponseTokens;
  const available = l.maxTokens - wrapUpTokenReserve(l) - usedTokens;
  if (needed <= available) return { ok: true };
  return { ok: false, message: `token budget: ${usedTokens} of ${l.maxTokens} used; the next call may need ${needed} and only ${Math.max(0, available)} are left` };
}

/** The wrap-up may use everything left; its reply is capped so it cannot overrun. Undefined: nothing left for it. */
export function wrapUpReplyTokens(l: Limits, usedTokens: number, promptEstimate: number): number | undefined {
  const left = l.maxTokens - usedTokens - promptEstimate;
  if (left < 50) return undefined;
  return Math.min(l.maxResponseTokens, left);
}

export function stepNote(step: number, maxSteps: number): string {
  return `[step ${step} of ${maxSteps}]${step === maxSteps ? ' This is the last step: give your answer now.' : ''}`;
}

export const WRAP_UP_PROMPT =
  'You have reached a limit of this run and cannot call tools any more. Give the best answer you can from what you have so far.';
