// A fake OpenAI-compatible Chat Completions server on real HTTP (127.0.0.1 only), for driving the real
// `openai` SDK in tests: scripted turns (text, tool calls, usage, delays, errors), JSON or SSE streaming,
// every request recorded. It speaks the wire protocol, not the SDK's types, so what passes here is what
// the SDK really parses; a test that runs out of scripted turns gets a loud 500, never a hang.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { readBody } from './read-body.ts';

/** One scripted model turn. */
export interface FakeReply {
  content?: string | null;
  /** `arguments` as an object is JSON-encoded; as a string it is sent verbatim (so tests can send broken JSON). */
  tool_calls?: Array<{ id?: string; name: string; arguments: string | Record<string, unknown> }>;
  /** Defaults to `tool_calls` when there are calls, else `stop`. */
  finish_reason?: 'stop' | 'tool_calls' | 'length' | 'content_filter';
  /** Omitted: estimated deterministically as characters / 4. */
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  /**
   * Streaming only: characters per content or arguments fragment (default: at most 16, at least three pieces). A
   * large answer is cut and sent lazily, one fragment per event, so the fake itself never blocks the event loop.
   */
  fragment_chars?: number;
  /** Streaming only: drop the connection after this many SSE events (a network cut mid-stream). */
  cut_after_events?: number;
  /** Streaming only: after this many SSE events, go quiet with the connection open (a stalled stream). */
  stall_after_events?: number;
  /** Wait this long before answering; a client that goes away meanwhile is simply dropped. */
  delay_ms?: number;
  /** Answer with this HTTP status and an OpenAI-shaped error body; `type`/`code` default by status. */
  error?: { status: number; message?: string; retry_after?: number; retry_after_ms?: number; type?: string; code?: string | null };
}

export interface RecordedRequest {
  method: string;
  /** As sent, including any query string. */
  path: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Parsed JSON, or undefined when the body was empty or malformed. */
  body: unknown;
  rawBody: string;
  at: number;
}

export type FakeResponder = (req: RecordedRequest) => FakeReply | string | Promise<FakeReply | string>;

export interface FakeOpenAI {
  /** Base URL for the SDK, ending in /v1. */
  url: string;
  /** Every request (any route, any outcome), in arrival order. */
  requests: RecordedRequest[];
  /** Queue turns for the next chat completions; a string is a plain text reply. */
  enqueue(...replies: Array<FakeReply | string>): void;
  /** Answers when the queue is empty (before `defaultReply`). */
  setResponder(fn: FakeResponder | undefined): void;
  /** Clears the queue, the recorded requests and the responder (not `defaultReply`). */
  reset(): void;
  close(): Promise<void>;
}

export interface FakeOpenAIOptions {
  port?: number;
  /** When set, any other bearer token gets a 401 as OpenAI sends it. */
  apiKey?: string;
  /** Answers when the queue is empty and there is no responder. */
  defaultReply?: FakeReply | string;
  /** Keep every request in `requests` (default true; benchmarks turn it off to keep memory flat). */
  recordRequests?: boolean;
  /** The vector `POST /v1/embeddings` answers for one input (default: hashedEmbedding). */
  embed?: (text: string) => number[];
}

/** Dimensions of the default fake embedding. */
export const FAKE_EMBEDDING_DIMS = 64;

/**
 * A deterministic stand-in for an embedding model: each word (lower-cased letters and digits) adds 1 to one of
 * 64 components chosen by its FNV-1a hash, so texts sharing words point the same way.
 */
export function hashedEmbedding(text: string): number[] {
  const v = new Array<number>(FAKE_EMBEDDING_DIMS).fill(0);
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    let h = 0x811c9dc5;
    for (const ch of m[0]) h = Math.imul(h ^ ch.codePointAt(0)!, 0x01000193) >>> 0;
    v[h % FAKE_EMBEDDING_DIMS]! += 1;
  }
  return v;
}

export const FAKE_MODELS = ['fake-gpt', 'fake-gpt-mini'];

interface ChatBody {
  model?: string;
  messages?: unknown;
  tools?: unknown;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
}

export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const queue: Array<FakeReply | string> = [];
  const requests: RecordedRequest[] = [];
  let responder: FakeResponder | undefined;
  let seq = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bug in the fake must surface in the test as a failed call, not a hung one.
      if (!res.headersSent) sendError(res, 500, `fake-openai: internal error: ${String(err)}`, { 'x-should-retry': 'false' });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Fires when we finish or when the client disconnects; aborting makes pending waits give up at once.
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const n = ++seq; // taken now: concurrent requests interleave at every await below
    res.setHeader('x-request-id', `req_fake_${n}`);

    const rawBody = await readBody(req);
    let body: unknown;
    let malformed = false;
    if (rawBody) {
      try {
        body = JSON.parse(rawBody);
      } catch {
        malformed = true;
      }
    }
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
    const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers, body, rawBody, at: Date.now() };
    if (opts.recordRequests !== false) requests.push(recorded);

    if (opts.apiKey !== undefined && headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendError(res, 401, 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.', {}, 'invalid_request_error', 'invalid_api_key');
    }
    const route = `${req.method} ${new URL(req.url ?? '/', 'http://fake').pathname.replace(/\/+$/, '')}`;
    if (route === 'GET /v1/models') {
      return sendJson(res, 200, { object: 'list', data: FAKE_MODELS.map((id) => ({ id, object: 'model', created: 0, owned_by: 'fake-openai' })) });
    }
    if (route === 'POST /v1/embeddings') {
      const input = (body as { input?: unknown } | undefined)?.input;
      const texts = typeof input === 'string' ? [input] : Array.isArray(input) && input.every((t) => typeof t === 'string') ? input : undefined;
      if (malformed || !texts) return sendError(res, 400, "'input' is a required property");
      const embed = opts.embed ?? hashedEmbedding;
      const model = (body as { model?: unknown }).model;
      return sendJson(res, 200, {
        object: 'list',
        data: texts.map((t, index) => ({ object: 'embedding', index, embedding: embed(t) })),
        model: typeof model === 'string' ? model : 'fake-embedding',
        usage: { prompt_tokens: texts.join(' ').length, total_tokens: texts.join(' ').length },
      });
    }
    if (route !== 'POST /v1/chat/completions') return sendError(res, 404, `Invalid URL (${route})`);
    if (malformed) return sendError(res, 400, 'We could not parse the JSON body of your request.');
    if (!isChatBody(body)) return sendError(res, 400, "'messages' is a required property");

    let next: FakeReply | string | undefined = queue.shift();
    if (next === undefined && responder) {
      try {
        next = await responder(recorded);
      } catch (err) {
        return sendError(res, 500, `fake-openai: responder threw: ${String(err)}`, { 'x-should-retry': 'false' });
      }
    }
    next ??= opts.defaultReply;
    // x-should-retry: false keeps an SDK with maxRetries > 0 from retrying (and backing off) a scripting mistake.
    if (next === undefined) return sendError(res, 500, 'fake-openai: no scripted reply left (queue empty, no responder, no defaultReply)', { 'x-should-retry': 'false' });
    const reply: FakeReply = typeof next === 'string' ? { content: next } : next;

    if (reply.delay_ms) {
      try {
        await sleep(reply.delay_ms, undefined, { signal: gone.signal });
      } catch {
        return; // the client aborted while we waited: nobody to answer
      }
    }
    if (gone.signal.aborted) return;

    if (reply.error) {
      const { status, message, retry_after, retry_after_ms, type, code } = reply.error;
      const extra: Record<string, string> = {};
      if (retry_after !== undefined) extra['retry-after'] = String(retry_after);
      if (retry_after_ms !== undefined) extra['retry-after-ms'] = String(retry_after_ms);
      return sendError(res, status, message ?? `fake-openai: scripted HTTP ${status}`, extra, type, code);
    }
    const turn = buildTurn(reply, body, n);
    if (!body.stream) return sendJson(res, 200, completionObject(turn));
    await streamTurn(res, turn, body.stream_options?.include_usage === true, gone.signal, reply.cut_after_events, reply.stall_after_events, reply.fragment_chars);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setResponder: (fn) => {
      responder = fn;
    },
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      responder = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Dropping keep-alive and in-flight connections lets close() finish now; their waits abort via 'close'.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Turn {
  id: string;
  created: number;
  model: string;
  content: string | null;
  calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  finish: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number; prompt_tokens_details: { cached_tokens: number } };
}

function buildTurn(r: FakeReply, body: ChatBody, n: number): Turn {
  const calls = (r.tool_calls ?? []).map((c, i) => ({
    id: c.id ?? `call_fake_${n}_${i}`,
    type: 'function' as const,
    function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
  }));
  // OpenAI sends content null on a pure tool-call turn, and a string otherwise.
  const content = r.content !== undefined ? r.content : calls.length ? null : '';
  const estimate = (s: string): number => Math.ceil(s.length / 4);
  const prompt = r.usage?.prompt_tokens ?? estimate(JSON.stringify(body.messages) + (body.tools === undefined ? '' : JSON.stringify(body.tools)));
  const completion = r.usage?.completion_tokens ?? estimate((content ?? '') + calls.map((c) => c.function.name + c.function.arguments).join(''));
  return {
    id: `chatcmpl-fake-${n}`,
    created: Math.floor(Date.now() / 1000),
    model: body.model ?? FAKE_MODELS[0]!,
    content,
    calls,
    finish: r.finish_reason ?? (calls.length ? 'tool_calls' : 'stop'),
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: r.usage?.cached_tokens ?? 0 } },
  };
}

function completionObject(t: Turn): unknown {
  const message = { role: 'assistant', content: t.content, refusal: null, annotations: [], ...(t.calls.length ? { tool_calls: t.calls } : {}) };
  return {
    id: t.id, object: 'chat.completion', created: t.created, model: t.model, system_fingerprint: 'fp_fake',
    choices: [{ index: 0, message, logprobs: null, finish_reason: t.finish }],
    usage: t.usage,
  };
}

/** SSE as OpenAI sends it: role first, content and arguments in fragments, finish, optional usage chunk, [DONE]. */
async function streamTurn(res: ServerResponse, t: Turn, includeUsage: boolean, gone: AbortSignal, cutAfter?: number, stallAfter?: number, fragmentChars?: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const pieces = (s: string): Iterable<string> => (fragmentChars ? slices(s, fragmentChars) : fragments(s));
  // Made as they are sent: a 10 MB answer is never held as events.
  function* events(): Generator<string> {
    const send = (choices: unknown[], usage: Turn['usage'] | null = null): string => {
      // With include_usage OpenAI puts `usage: null` on every chunk but the last.
      const chunk = { id: t.id, object: 'chat.completion.chunk', created: t.created, model: t.model, system_fingerprint: 'fp_fake', choices, ...(includeUsage ? { usage } : {}) };
      return `data: ${JSON.stringify(chunk)}\n\n`;
    };
    const delta = (d: Record<string, unknown>, finish: string | null = null): string => send([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
    yield delta({ role: 'assistant', content: t.content === null ? null : '', refusal: null });
    for (const piece of pieces(t.content ?? '')) yield delta({ content: piece });
    for (const [index, c] of t.calls.entries()) {
      // Identity (id, type, name) only on a call's first delta; later deltas carry just index + an arguments fragment.
      yield delta({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] });
      for (const piece of pieces(c.function.arguments)) yield delta({ tool_calls: [{ index, function: { arguments: piece } }] });
    }
    yield delta({}, t.finish);
    if (includeUsage) yield send([], t.usage);
    yield 'data: [DONE]\n\n';
  }

  // One event per macrotask, so the SDK really parses an incremental stream (and can abort mid-way).
  let i = -1;
  for (const event of events()) {
    i++;
    if (gone.aborted) return;
    if (cutAfter !== undefined && i >= cutAfter) {
      res.destroy();
      return;
    }
    if (stallAfter !== undefined && i >= stallAfter) {
      // Quiet until the client gives up (its abort closes the connection).
      await new Promise<void>((resolve) => (gone.aborted ? resolve() : gone.addEventListener('abort', () => resolve(), { once: true })));
      return;
    }
    res.write(event);
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

/** `size` characters at a time, lazily; a surrogate pair is never split. */
function* slices(s: string, size: number): Generator<string> {
  for (let i = 0; i < s.length; ) {
    let end = Math.min(s.length, i + size);
    if (end < s.length && /[\uD800-\uDBFF]/.test(s[end - 1]!)) end++;
    yield s.slice(i, end);
    i = end;
  }
}

/** At least three pieces when the text allows, at most 16 characters each; split on code points, never mid-emoji. */
function fragments(s: string): string[] {
  const chars = Array.from(s);
  const size = Math.max(1, Math.min(16, Math.ceil(chars.length / 3)));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

function isChatBody(body: unknown): body is ChatBody {
  return typeof body === 'object' && body !== null && Array.isArray((body as ChatBody).messages);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** OpenAI's error body: `{ error: { message, type, param, code } }`, with type/code defaulted by status. */
function sendError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, type?: string, code?: string | null): void {
  const byStatus: Record<number, [string, string | null]> = {
    401: ['invalid_request_error', 'invalid_api_key'],
    403: ['permission_error', null],
    404: ['invalid_request_error', null],
    429: ['requests', 'rate_limit_exceeded'],
  };
  const [defType, defCode] = byStatus[status] ?? (status >= 500 ? ['server_error', null] : ['invalid_request_error', null]);
  sendJson(res, status, { error: { message, type: type ?? defType, param: null, code: code === undefined ? defCode : code } }, headers);
}
