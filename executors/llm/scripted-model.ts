// The `scripted` provider: answers from canned replies, in order, like the seeds' DEBUG_MOCK_RESPONSES.
// Each activation gets a fresh model, so every activation replays the script from its first reply.
import { z } from 'zod';
import type { ToolCall } from '../../agent-loop/messages.ts';
import { ModelError, type ChatModel, type ModelRequest, type ModelResponse } from '../../agent-loop/model.ts';
import { isRetryableStatus } from '../../policy/retryable-status.ts';
import { ScriptedReplySchema, type ScriptedReply } from '../../store/agent-config.ts';

export class ScriptedChatModel implements ChatModel {
  readonly #replies: readonly ScriptedReply[];
  #next = 0;
  #ids = 0;

  constructor(replies: readonly ScriptedReply[]) {
    this.#replies = replies;
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const reply = this.#replies[this.#next];
    if (reply === undefined) {
      // Running out is an error, never a silent loop (docs/agent-loop.md R15).
      throw new ModelError(`scripted model: no reply left (all ${this.#replies.length} used)`, { retryable: false });
    }
    this.#next++;
    const r = typeof reply === 'string' ? { content: reply } : reply;
    if (r.delay_ms) await delay(r.delay_ms, req.signal);
    if (r.error) {
      const status = r.error.status;
      throw new ModelError(`scripted model: ${r.error.message ?? `HTTP ${status}`}`, {
        status,
        // As a provider's answer with that status would be (openai-model.ts).
        retryable: isRetryableStatus(status, 'busy'),
        retryAfterMs: r.error.retry_after === undefined ? undefined : r.error.retry_after * 1000,
      });
    }
    const toolCalls: ToolCall[] = (r.tool_calls ?? []).map((c) => ({
      id: c.id ?? `scripted_${++this.#ids}`,
      name: c.name,
      arguments: typeof c.arguments === 'string' ? parseArgs(c.arguments) : c.arguments,
      rawArguments: typeof c.arguments === 'string' ? c.arguments : undefined,
    }));
    const content = r.content ?? null;
    req.onDelta?.(content ?? '');
    return {
      content,
      toolCalls,
      finishReason: r.finish_reason ?? (toolCalls.length ? 'tool_calls' : 'stop'),
      // A canned reply costs nothing: no tokens (so no cost) unless the script says what to count.
      usage: { inputTokens: r.usage?.prompt_tokens ?? 0, outputTokens: r.usage?.completion_tokens ?? 0, cachedTokens: 0 },
      model: req.model,
    };
  }
}

/** Parses a WARREN_MOCK_RESPONSES value; throws a message that says what is wrong with it. */
export function parseMockResponses(json: string): ScriptedReply[] {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (err) {
    throw new Error(`WARREN_MOCK_RESPONSES is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  const parsed = z.array(ScriptedReplySchema).safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`WARREN_MOCK_RESPONSES: item ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'} (expected a JSON array of strings or {"tool_calls":[…]} objects)`);
  }
  return parsed.data;
}

function parseArgs(s: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ModelError('scripted model: aborted', { retryable: false }));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort(): void {
      clearTimeout(t);
      reject(new ModelError('scripted model: aborted', { retryable: false }));
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
