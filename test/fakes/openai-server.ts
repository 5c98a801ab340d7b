// A fake OpenAI-compatible Chat Completions server on real HTTP, for driving the real `openai` SDK:
// scripted replies (text, tool calls, usage, delays, errors), JSON or SSE streaming, every request recorded.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeReply {
  content?: string | null;
  tool_calls?: Array<{ id?: string; name: string; arguments: string | Record<string, unknown> }>;
  finish_reason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
  delay_ms?: number;
  error?: { status: number; message?: string; retry_after?: number };
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
  rawBody: string;
  at: number;
}

export interface FakeOpenAI {
  /** Base URL for the SDK, ending in /v1. */
  url: string;
  requests: RecordedRequest[];
  enqueue(...replies: Array<FakeReply | string>): void;
  /** Answers when the queue is empty. */
  setResponder(fn: ((req: RecordedRequest) => FakeReply | string) | undefined): void;
  reset(): void;
  close(): Promise<void>;
}

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const queue: Array<FakeReply | string> = [];
  const requests: RecordedRequest[] = [];
  let responder: ((req: RecordedRequest) => FakeReply | string) | undefined;
  let ids = 0;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        return json(res, 400, { error: { message: 'malformed JSON', type: 'invalid_request_error' } });
      }
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers, body, rawBody, at: Date.now() };
      requests.push(recorded);
      if (req.method === 'GET' && req.url === '/v1/models') return json(res, 200, { object: 'list', data: [{ id: 'fake-gpt', object: 'model' }] });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return json(res, 404, { error: { message: 'not found' } });
      const next = queue.shift() ?? responder?.(recorded);
      if (next === undefined) return json(res, 500, { error: { message: 'fake-openai: no scripted reply left', type: 'server_error' } });
      const reply: FakeReply = typeof next === 'string' ? { content: next } : next;
      const timer = setTimeout(() => answer(res, reply, body as { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } }), reply.delay_ms ?? 0);
      res.on('close', () => clearTimeout(timer));
    });
  });

  function answer(res: ServerResponse, r: FakeReply, body: { model?: string; stream?: boolean; stream_options?: { include_usage?: boolean } }): void {
    if (r.error) {
      const h: Record<string, string> = r.error.retry_after !== undefined ? { 'retry-after': String(r.error.retry_after) } : {};
      return json(res, r.error.status, { error: { message: r.error.message ?? `HTTP ${r.error.status}`, type: 'fake_error', code: null } }, h);
    }
    const id = `chatcmpl-${++ids}`;
    const model = body.model ?? 'fake-gpt';
    const calls = (r.tool_calls ?? []).map((c, i) => ({
      id: c.id ?? `call_${ids}_${i}`,
      type: 'function' as const,
      function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) },
    }));
    const content = r.content ?? (calls.length ? null : '');
    const finish = r.finish_reason ?? (calls.length ? 'tool_calls' : 'stop');
    const prompt = r.usage?.prompt_tokens ?? 10;
    const completion = r.usage?.completion_tokens ?? Math.ceil((content ?? '').length / 4);
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: r.usage?.cached_tokens ?? 0 } };
    const created = Math.floor(Date.now() / 1000);
    if (!body.stream) {
      return json(res, 200, {
        id, object: 'chat.completion', created, model,
        choices: [{ index: 0, message: { role: 'assistant', content, tool_calls: calls.length ? calls : undefined, refusal: null }, finish_reason: finish, logprobs: null }],
        usage,
      });
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null): void => {
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason }] })}\n\n`);
    };
    chunk({ role: 'assistant', content: '' });
    // Split text and arguments into several fragments, as real servers do.
    for (const piece of (content ?? '').match(/.{1,7}/gs) ?? []) chunk({ content: piece });
    calls.forEach((c, index) => {
      chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] });
      for (const piece of c.function.arguments.match(/.{1,5}/gs) ?? []) chunk({ tool_calls: [{ index, function: { arguments: piece } }] });
    });
    chunk({}, finish);
    if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    setResponder: (fn) => void (responder = fn),
    reset: () => {
      queue.length = 0;
      requests.length = 0;
      responder = undefined;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
