// Context-window management (docs/agent-loop.md R11): when the history nears the model's window, older turns are
// folded into one deterministic summary message; the system prompt, the task and the newest turns stay
// verbatim. A turn is an assistant message with all its tool results (and notes), so a call is never
// separated from its result. No model call is made: the summary is a digest of what was called and got.
import { estimatePromptTokens } from './limits.ts';
import type { ChatMessage } from './messages.ts';
import type { ToolDefinition } from './model.ts';

export interface CompactionOptions {
  /** The model's context window in tokens. */
  windowTokens: number;
  /** Tokens kept free for the reply. */
  replyTokens: number;
  /** Compact when the prompt estimate passes this share of (window − reply). Default 0.8. */
  threshold?: number;
  /** Newest turns always kept verbatim (fewer only if even they do not fit). Default 4. */
  keepTurns?: number;
  /** Longest summary, in characters; the oldest lines go first. Default 4,000. */
  summaryChars?: number;
}

export const SUMMARY_PREFIX = '[Summary of earlier steps, compacted to fit the context window]';

export interface CompactionResult {
  messages: ChatMessage[];
  droppedTurns: number;
  beforeTokens: number;
  afterTokens: number;
}

/** Splits a history into its fixed head (system, task, an earlier summary) and its turns. */
export function splitTurns(history: readonly ChatMessage[]): { head: ChatMessage[]; summary: string | undefined; turns: ChatMessage[][] } {
  const head = history.slice(0, 2);
  let i = 2;
  let summary: string | undefined;
  const third = history[2];
  if (third?.role === 'user' && third.content.startsWith(SUMMARY_PREFIX)) {
    summary = third.content.slice(SUMMARY_PREFIX.length).trim();
    i = 3;
  }
  const turns: ChatMessage[][] = [];
  for (; i < history.length; i++) {
    const m = history[i]!;
    if (m.role === 'assistant' || turns.length === 0) turns.push([m]);
    else turns[turns.length - 1]!.push(m);
  }
  return { head, summary, turns };
}

/** One line per turn: the reply's text and each call with the start of its result. */
export function digestTurn(turn: readonly ChatMessage[]): string {
  const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s).replace(/\s+/g, ' ');
  const parts: string[] = [];
  for (const m of turn) {
    if (m.role === 'assistant') {
      if (m.content) parts.push(`said "${clip(m.content, 120)}"`);
      for (const c of m.toolCalls ?? []) {
        const result = turn.find((r) => r.role === 'tool' && r.toolCallId === c.id);
        parts.push(`called ${c.name}(${clip(JSON.stringify(c.arguments), 80)}) → ${result ? clip(result.content ?? '', 120) : 'no result'}`);
      }
    } else if (m.role === 'user') {
      parts.push(`note "${clip(m.content, 80)}"`);
    }
  }
  return `- ${parts.join('; ')}`;
}

/** The compacted history, or undefined when it fits as it is. */
export function compactHistory(history: readonly ChatMessage[], tools: readonly ToolDefinition[], opts: CompactionOptions): CompactionResult | undefined {
  const limit = Math.floor((opts.windowTokens - opts.replyTokens) * (opts.threshold ?? 0.8));
  const beforeTokens = estimatePromptTokens(history, tools);
  if (beforeTokens <= limit) return undefined;
  const { head, summary, turns } = splitTurns(history);
  const cap = opts.summaryChars ?? 4000;
  for (let keep = Math.min(opts.keepTurns ?? 4, turns.length); keep >= 1; keep--) {
    const dropped = turns.slice(0, turns.length - keep);
    if (!dropped.length) continue;
    let lines = [summary, ...dropped.map(digestTurn)].filter((l): l is string => Boolean(l)).join('\n');
    if (lines.length > cap) lines = `…\n${lines.slice(lines.length - cap)}`;
    const messages: ChatMessage[] = [...head, { role: 'user', content: `${SUMMARY_PREFIX}\n${lines}` }, ...turns.slice(turns.length - keep).flat()];
    const afterTokens = estimatePromptTokens(messages, tools);
    if (afterTokens <= limit || keep === 1) return { messages, droppedTurns: dropped.length, beforeTokens, afterTokens };
  }
  return undefined;
}
