// ChatModel over the real `openai` SDK: any OpenAI-compatible endpoint, JSON or SSE streaming.
import OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { ChatMessage, ToolCall } from '../../agent-loop/messages.ts';
import { ModelError, type ChatModel, type ModelRequest, type ModelResponse } from '../../agent-loop/model.ts';
import { OutputMeter, OversizedOutputError, type ModelOutputBounds } from '../../agent-loop/oversized-output.ts';
import { isRetryableStatus } from '../../policy/retryable-status.ts';
import type { FetchFn } from './cassette.ts';
import { poolFetch } from './pool-fetch.ts';

export interface OpenAIModelOptions {
  /** OpenAI-compatible base URL (…/v1); undefined = the SDK default (OPENAI_BASE_URL, else OpenAI). */
  baseURL?: string;
  apiKey: string;
  /** Stream the answer (SSE) and report text deltas as they arrive. */
  stream?: boolean;
  /** Until the answer starts, and between streamed chunks (a stalled stream), in ms (default 120 s). */
  timeoutMs?: number;
  maxRetries?: number;
  /** The HTTP client underneath (record-and-replay in cassette.ts); default pool-fetch.ts. */
  fetch?: FetchFn;
}

export class OpenAIChatModel implements ChatModel {
  readonly #client: OpenAI;
  readonly #stream: boolean;
  readonly #timeoutMs: number;

  constructor(opts: OpenAIModelOptions) {
    this.#timeoutMs = opts.timeoutMs ?? 120_000;
    this.#client = new OpenAI({ baseURL: opts.baseURL, apiKey: opts.apiKey, timeout: this.#timeoutMs, maxRetries: opts.maxRetries ?? 2, fetch: opts.fetch ?? poolFetch });
    this.#stream = opts.stream ?? false;
  }

  async complete(req: ModelRequest): Promise<ModelResponse> {
    const params = {
      model: req.model,
      messages: req.messages.map(toWireMessage),
      temperature: req.temperature,
      max_tokens: req.maxTokens,
      tools: req.tools?.length ? req.tools.map(toWireTool) : undefined,
      tool_choice: req.tools?.length && req.toolChoice ? req.toolChoice : undefined,
    };
    try {
      if (this.#stream) {
        // The SDK's timeout ends once the headers are in; a stream that then goes quiet is cut by this watchdog.
        const idle = new IdleWatchdog(this.#timeoutMs);
        const signal = req.signal ? AbortSignal.any([req.signal, idle.signal]) : idle.signal;
        try {
          const streamed = { ...params, stream: true as const, stream_options: { include_usage: true } };
          const stream = await this.#client.chat.completions.create(streamed, { signal, ...jsonBody(streamed) });
          const res = await collectStream(stream, req, () => idle.touch());
          // The SDK ends an aborted stream quietly: what came before a cancel or a stall is not an answer.
          if (req.signal?.aborted) throw new ModelError('model call aborted', { retryable: false });
          if (idle.fired) throw new ModelError('stalled', { retryable: res.toolCalls.length === 0, toolCallBegan: res.toolCalls.length > 0 });
          return res;
        } catch (err) {
          if (idle.fired && !req.signal?.aborted) {
            const began = err instanceof ModelError && !err.retryable; // a tool call had begun: never replayed blindly
            throw new ModelError(`model stream stalled: no data for ${this.#timeoutMs} ms${began ? ' after a tool call began' : ''}`, { retryable: !began, toolCallBegan: began, cause: err });
          }
          throw err;
        } finally {
          idle.stop();
        }
      }
      // With bounds, the body is read against a cap (a 10 MB answer is never held whole), then parsed as the SDK would.
      const call = this.#client.chat.completions.create(params, { signal: req.signal, ...jsonBody(params) });
      const res = (req.bounds ? await readBoundedJson(await call.asResponse(), req.bounds, req.signal) : await call) as Partial<ChatCompletion> | undefined;
      // The SDK types the body but does not check it: every field is taken as untrusted (wrong types count as absent).
      const choice = Array.isArray(res?.choices) ? (res.choices[0] as unknown) : undefined;
      const message = field(choice, 'message');
      const calls = field(message, 'tool_calls');
      const content = field(message, 'content');
      return {
        content: typeof content === 'string' ? content : null,
        toolCalls: (Array.isArray(calls) ? (calls as unknown[]) : []).flatMap((tc) => {
          const fn = field(tc, 'function');
          return field(tc, 'type') === 'function' && fn ? [fromWireCall(text(field(tc, 'id')), text(field(fn, 'name')), field(fn, 'arguments'))] : [];
        }),
        finishReason: text(field(choice, 'finish_reason')) || 'stop',
        usage: {
          inputTokens: tokens(field(res?.usage, 'prompt_tokens')),
          outputTokens: tokens(field(res?.usage, 'completion_tokens')),
          cachedTokens: tokens(field(field(res?.usage, 'prompt_tokens_details'), 'cached_tokens')),
        },
        model: text(res?.model) || req.model,
      };
    } catch (err) {
      throw toModelError(err);
    }
  }
}

/**
 * The request's JSON as bytes of its own, handed to the SDK as its body (a body in the request options replaces
 * the one it would serialize; the parameters still say whether to stream). Given the parameters, the SDK keeps
 * their JSON string in five frames of its call chain for the model's whole latency, beside the bytes undici sends:
 * heap snapshots at 300 calls in flight held a 4.2 KB string apiece (twice that when a prompt has a character
 * outside Latin-1), growing with the thread. Encoded here, the string is dropped at once and only the bytes wait.
 */
function jsonBody(params: object): { body: Uint8Array; headers: { 'content-type': string } } {
  return { body: utf8.encode(JSON.stringify(params)), headers: { 'content-type': 'application/json' } };
}

const utf8 = new TextEncoder();

/** Aborts when `touch` has not been called for `ms`. */
class IdleWatchdog {
  readonly #controller = new AbortController();
  readonly #ms: number;
  #timer: NodeJS.Timeout;
  fired = false;

  constructor(ms: number) {
    this.#ms = ms;
    this.#timer = this.#arm();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  touch(): void {
    clearTimeout(this.#timer);
    this.#timer = this.#arm();
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  #arm(): NodeJS.Timeout {
    return setTimeout(() => {
      this.fired = true;
      this.#controller.abort(new Error('model stream stalled'));
    }, this.#ms);
  }
}

async function collectStream(stream: AsyncIterable<ChatCompletionChunk>, req: ModelRequest, onChunk: () => void): Promise<ModelResponse> {
  let content = '';
  let finishReason = 'stop';
  let model = req.model;
  let usage = { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
  const calls = new Map<number, { id: string; name: string; args: string }>();
  // Read against the bounds: the piece that passes one ends the read, and leaving the loop aborts the request.
  const meter = req.bounds ? new OutputMeter(req.bounds) : undefined;
  try {
    await readChunks();
  } catch (err) {
    if (err instanceof OversizedOutputError) throw err;
    // A tool call that was partly streamed may already have been acted on by a proxy or logged as made:
    // it is never replayed blindly (docs/agent-loop.md R12), so the failure is final.
    if (calls.size > 0) {
      const e = toModelError(err);
      throw new ModelError(`stream broke after a tool call began: ${e.message}`, { status: e.status, retryable: false, toolCallBegan: true, cause: err });
    }
    throw err;
  }
  const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => fromWireCall(c.id, c.name, c.args));
  return { content: content || null, toolCalls, finishReason, usage, model };

  async function readChunks(): Promise<void> {
    for await (const chunk of stream as AsyncIterable<unknown>) {
      // Chunks are untrusted like whole bodies: a field of the wrong type counts as absent.
      onChunk();
      model = text(field(chunk, 'model')) || model;
      const u = field(chunk, 'usage');
      if (u && typeof u === 'object') {
        usage = { inputTokens: tokens(field(u, 'prompt_tokens')), outputTokens: tokens(field(u, 'completion_tokens')), cachedTokens: tokens(field(field(u, 'prompt_tokens_details'), 'cached_tokens')) };
      }
      const choices = field(chunk, 'choices');
      const choice: unknown = Array.isArray(choices) ? choices[0] : undefined;
      const delta = field(choice, 'delta');
      const piece = text(field(delta, 'content'));
      if (piece) {
        meter?.answer(piece, () => content + piece);
        content += piece;
        req.onDelta?.(piece);
      }
      const deltas = field(delta, 'tool_calls');
      for (const d of Array.isArray(deltas) ? (deltas as unknown[]) : []) {
        const index = field(d, 'index');
        if (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0) continue;
        const call = calls.get(index) ?? { id: '', name: '', args: '' };
        const fn = field(d, 'function');
        call.id = text(field(d, 'id')) || call.id;
        const name = text(field(fn, 'name'));
        const args = text(field(fn, 'arguments'));
        // The name counts with the arguments: a provider streaming a runaway name is bounded too.
        meter?.toolArgument(index, name + args, () => call.args + args);
        call.name += name;
        call.args += args;
        calls.set(index, call);
      }
      finishReason = text(field(choice, 'finish_reason')) || finishReason;
    }
  }
}

/**
 * How much of a non-streamed body is read: the bounded answer and arguments with room for JSON's escaping and the
 * envelope. The precise bounds are checked on what it holds (agent-loop/model-caller.ts).
 */
export function bodyCapBytes(b: ModelOutputBounds): number {
  return 4 * (b.answerBytes + b.toolArgumentBytes) + 64 * 1024;
}

/** A JSON body read up to bodyCapBytes; past it the read is cancelled and the call is an OversizedOutputError. */
async function readBoundedJson(res: Response, bounds: ModelOutputBounds, signal: AbortSignal | undefined): Promise<unknown> {
  const cap = bodyCapBytes(bounds);
  const parts: Uint8Array[] = [];
  let bytes = 0;
  const reader = res.body?.getReader();
  if (!reader) return undefined;
  for (;;) {
    if (signal?.aborted) {
      await reader.cancel().catch(() => undefined);
      throw new ModelError('model call aborted', { retryable: false });
    }
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (err) {
      // The caller's signal cuts the body too: a cancel, not a network failure.
      if (signal?.aborted) throw new ModelError('model call aborted', { retryable: false, cause: err });
      throw err;
    }
    const { done, value } = chunk;
    if (done) break;
    bytes += value.byteLength;
    if (bytes > cap) {
      await reader.cancel().catch(() => undefined);
      const head = Buffer.concat(parts.slice(0, 1)).toString('utf8');
      throw new OversizedOutputError({ what: 'answer', limit: bounds.answerBytes, length: bytes, cut: true }, head);
    }
    parts.push(value);
  }
  try {
    return JSON.parse(Buffer.concat(parts, bytes).toString('utf8')) as unknown;
  } catch (err) {
    throw new ModelError(`model answer is not JSON: ${err instanceof Error ? err.message : String(err)}`, { retryable: false, cause: err });
  }
}

function toWireMessage(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        tool_calls: m.toolCalls?.length
          ? m.toolCalls.map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.name, arguments: c.rawArguments ?? JSON.stringify(c.arguments) } }))
          : undefined,
      };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    default:
      return { role: m.role, content: m.content };
  }
}

type WireToolSource = { name: string; description: string; parameters: Record<string, unknown> };

/**
 * A definition's wire form, made once per definition: the built-in tools' definitions are shared by every
 * activation (agent-loop/hub-tools.ts), so their wire forms are too, not rebuilt and held by each request in flight.
 * Weak: a definition made for one run (an MCP server's tool) goes with it.
 */
const wireTools = new WeakMap<WireToolSource, ChatCompletionTool>();

function toWireTool(t: WireToolSource): ChatCompletionTool {
  let wire = wireTools.get(t);
  if (!wire) {
    wire = { type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } };
    wireTools.set(t, wire);
  }
  return wire;
}

/** A property of something that may not be an object at all. */
function field(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A token count the budget can add up: anything else (a string, a negative, 1e308 overflowing the sum) is 0. */
function tokens(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/** `args` should be JSON text; an object some servers send is taken as is, anything else goes to repair as text. */
function fromWireCall(id: string, name: string, args: unknown): ToolCall {
  if (args !== null && typeof args === 'object' && !Array.isArray(args)) return { id, name, arguments: args as Record<string, unknown> };
  const raw = typeof args === 'string' ? args : args === undefined ? '' : JSON.stringify(args);
  try {
    const parsed: unknown = raw.trim() === '' ? {} : JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return { id, name, arguments: parsed as Record<string, unknown> };
  } catch {
    // Left for the loop's repair step; keep the raw text so nothing is lost.
  }
  return { id, name, arguments: {}, rawArguments: raw };
}

function toModelError(err: unknown): ModelError {
  if (err instanceof ModelError) return err;
  if (err instanceof OpenAI.APIUserAbortError) return new ModelError('model call aborted', { retryable: false, cause: err });
  if (err instanceof OpenAI.APIConnectionError) return new ModelError(`model endpoint unreachable: ${err.message}`, { retryable: true, cause: err });
  if (err instanceof OpenAI.APIError) {
    const status = err.status as number | undefined;
    // A provider's 409 is a lock or a concurrent request timing out: the OpenAI and Anthropic SDKs retry it too.
    const retryable = isRetryableStatus(status, 'busy');
    const headers = err.headers as Headers | undefined;
    const ra = headers?.get('retry-after');
    const raMs = headers?.get('retry-after-ms');
    return new ModelError(`model call failed (${status ?? 'no status'}): ${err.message}`, {
      status,
      retryable,
      retryAfterMs: raMs && Number.isFinite(Number(raMs)) ? Number(raMs) : ra && Number.isFinite(Number(ra)) ? Number(ra) * 1000 : undefined,
      cause: err,
    });
  }
  // A connection cut mid-stream surfaces from undici as a bare TypeError ("terminated"): a network error, retryable.
  if (isNetworkError(err)) return new ModelError(`model stream interrupted: ${(err as Error).message}`, { retryable: true, cause: err });
  return new ModelError(err instanceof Error ? err.message : String(err), { retryable: false, cause: err });
}

const NETWORK_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function isNetworkError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    if (e instanceof TypeError && (e.message === 'terminated' || e.message === 'fetch failed')) return true;
  }
  return false;
}
