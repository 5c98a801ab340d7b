// A fake Anthropic Messages API on real HTTP (127.0.0.1 only), for running the real `claude` CLI in tests
// (ANTHROPIC_BASE_URL + ANTHROPIC_API_KEY). POST /v1/messages answers scripted turns, as JSON or as the API's
// SSE stream (message_start, content blocks with text and input_json deltas, message_delta with usage,
// message_stop), with tool_use blocks and Anthropic-shaped errors (401, 429 with retry-after…). Every
// request is recorded; a request no script answers gets a loud 500, never a hang.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './read-body.ts';

export interface FakeAnthropicReply {
  text?: string;
  tool_uses?: Array<{ id?: string; name: string; input: Record<string, unknown> }>;
  /** Defaults to `tool_use` when there are tool uses, else `end_turn`. */
  stop_reason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';
  usage?: { input_tokens: number; output_tokens: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  /** Answer with this status and an Anthropic error body (`{type:"error", error:{type, message}}`). */
  error?: { status: number; type?: string; message?: string; retry_after?: number };
}

export interface RecordedAnthropicRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: MessagesBody | undefined;
  at: number;
}

export interface MessagesBody {
  model?: string;
  stream?: boolean;
  system?: unknown;
  messages?: Array<{ role: string; content: unknown }>;
  tools?: Array<{ name: string }>;
  max_tokens?: number;
}

export type AnthropicResponder = (req: RecordedAnthropicRequest) => FakeAnthropicReply | string;

export interface FakeAnthropic {
  /** For ANTHROPIC_BASE_URL (no /v1: clients add it). */
  url: string;
  requests: RecordedAnthropicRequest[];
  /** Requests to POST /v1/messages only. */
  messageRequests(): RecordedAnthropicRequest[];
  setResponder(fn: AnthropicResponder | undefined): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeAnthropic(opts: { apiKey?: string } = {}): Promise<FakeAnthropic> {
  const requests: RecordedAnthropicRequest[] = [];
  let responder: AnthropicResponder | undefined;
  let seq = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'api_error', `fake-anthropic: internal error: ${String(err)}`);
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const n = ++seq;
    res.setHeader('request-id', `req_fake_${n}`);
    const raw = await readBody(req);
    let body: MessagesBody | undefined;
    try {
      body = raw ? (JSON.parse(raw) as MessagesBody) : undefined;
    } catch {
      return sendError(res, 400, 'invalid_request_error', 'malformed JSON body');
    }
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
    const path = new URL(req.url ?? '/', 'http://fake').pathname.replace(/\/+$/, '');
    const recorded: RecordedAnthropicRequest = { method: req.method ?? '', path, headers, body, at: Date.now() };
    requests.push(recorded);

    const key = headers['x-api-key'] ?? headers.authorization?.replace(/^Bearer /, '');
    if (opts.apiKey !== undefined && key !== opts.apiKey) return sendError(res, 401, 'authentication_error', 'invalid x-api-key');
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') return sendJson(res, 200, { input_tokens: Math.ceil(raw.length / 4) });
    if (req.method !== 'POST' || path !== '/v1/messages') return sendError(res, 404, 'not_found_error', `fake-anthropic: no route ${req.method} ${path}`);
    if (!body || !Array.isArray(body.messages)) return sendError(res, 400, 'invalid_request_error', 'messages: Field required');
    if (!responder) return sendError(res, 500, 'api_error', 'fake-anthropic: no responder set');
    const next = responder(recorded);
    const reply: FakeAnthropicReply = typeof next === 'string' ? { text: next } : next;
    if (reply.error) {
      const { status, type, message, retry_after } = reply.error;
      return sendError(res, status, type ?? errorTypeFor(status), message ?? `fake-anthropic: scripted HTTP ${status}`, retry_after === undefined ? {} : { 'retry-after': String(retry_after) });
    }
    const message = buildMessage(reply, body, n);
    if (!body.stream) return sendJson(res, 200, message);
    streamMessage(res, message);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    messageRequests: () => requests.filter((r) => r.path === '/v1/messages'),
    setResponder: (fn) => {
      responder = fn;
    },
    reset: () => {
      requests.length = 0;
      responder = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: Array<{ type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }>;
  stop_reason: string;
  stop_sequence: null;
  usage: { input_tokens: number; output_tokens: number; cache_creation_input_tokens: number; cache_read_input_tokens: number };
}

function buildMessage(r: FakeAnthropicReply, body: MessagesBody, n: number): Message {
  const content: Message['content'] = [];
  if (r.text !== undefined && r.text !== '') content.push({ type: 'text', text: r.text });
  (r.tool_uses ?? []).forEach((t, i) => content.push({ type: 'tool_use', id: t.id ?? `toolu_fake_${n}_${i}`, name: t.name, input: t.input }));
  const estimate = (s: string): number => Math.ceil(s.length / 4);
  return {
    id: `msg_fake_${n}`,
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'claude-fake',
    content,
    stop_reason: r.stop_reason ?? (r.tool_uses?.length ? 'tool_use' : 'end_turn'),
    stop_sequence: null,
    usage: {
      input_tokens: r.usage?.input_tokens ?? estimate(JSON.stringify(body.messages)),
      output_tokens: r.usage?.output_tokens ?? estimate(JSON.stringify(content)),
      cache_creation_input_tokens: r.usage?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: r.usage?.cache_read_input_tokens ?? 0,
    },
  };
}

/** The Messages API's SSE sequence, text and tool input in several deltas. */
function streamMessage(res: ServerResponse, m: Message): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const send = (event: string, data: unknown): void => void res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send('message_start', { type: 'message_start', message: { ...m, content: [], stop_reason: null, usage: { ...m.usage, output_tokens: 1 } } });
  send('ping', { type: 'ping' });
  m.content.forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of fragments(block.text)) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
    } else {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      for (const piece of fragments(JSON.stringify(block.input))) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  });
  send('message_delta', { type: 'message_delta', delta: { stop_reason: m.stop_reason, stop_sequence: null }, usage: { output_tokens: m.usage.output_tokens } });
  send('message_stop', { type: 'message_stop' });
  res.end();
}

function fragments(s: string): string[] {
  const chars = Array.from(s);
  const size = Math.max(1, Math.ceil(chars.length / 3));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

function errorTypeFor(status: number): string {
  const byStatus: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 529: 'overloaded_error' };
  return byStatus[status] ?? 'api_error';
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { type: 'error', error: { type, message } }, headers);
}
