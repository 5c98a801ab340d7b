// The one thing the loop needs from a model: complete a conversation. Implemented by the openai-SDK
// adapter and the scripted model (executors/llm).
import type { ChatMessage, TokenUsage, ToolCall } from './messages.ts';

export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments, exactly as sent to the provider. */
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  model: string;
  messages: readonly ChatMessage[];
  tools?: readonly ToolDefinition[];
  /** 'none' keeps the tools in the request (same prefix, cache-friendly) but forbids calling them: the wrap-up. */
  toolChoice?: 'auto' | 'none';
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
  /** The most answer text and tool-call arguments read (agent-loop/oversized-output.ts); absent: unbounded. */
  bounds?: { answerBytes: number; toolArgumentBytes: number };
  /** Called with each streamed text fragment, when the model streams. */
  onDelta?: (text: string) => void;
}

export interface ModelResponse {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: string;
  usage: TokenUsage;
  /** The model that actually answered (may differ from the one asked for). */
  model: string;
}

export interface ChatModel {
  complete(request: ModelRequest): Promise<ModelResponse>;
}

/** A model call that failed; `retryable` follows policy/retryable-status.ts for a status (docs/agent-loop.md R12). */
export class ModelError extends Error {
  override readonly name: string = 'ModelError';
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  /**
   * The answer broke after a tool call had begun streaming: the call is never replayed within the run (`retryable`
   * is false), yet nothing ran, so the activation may be tried again when no tool ran before (next-step.ts).
   */
  readonly toolCallBegan: boolean;
  constructor(message: string, init: { status?: number; retryable: boolean; retryAfterMs?: number; toolCallBegan?: boolean; cause?: unknown }) {
    super(message, { cause: init.cause });
    this.status = init.status;
    this.retryable = init.retryable;
    this.retryAfterMs = init.retryAfterMs;
    this.toolCallBegan = init.toolCallBegan ?? false;
  }
}
