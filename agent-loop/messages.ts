// The loop's own message and tool-call shapes. Model adapters translate to and from the provider's wire format.

/** One tool call, whatever mode (native or text) it was parsed from. */
export interface ToolCall {
  id: string;
  name: string;
  /** Parsed arguments; raw string kept when it did not parse (reported back to the model as invalid). */
  arguments: Record<string, unknown>;
  rawArguments?: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string; name?: string };

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
}

export const ZERO_USAGE: TokenUsage = Object.freeze({ inputTokens: 0, outputTokens: 0, cachedTokens: 0 });

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens, cachedTokens: a.cachedTokens + b.cachedTokens };
}
