// The fake OpenAI-compatible server, driven through the real `openai` SDK: if the SDK parses it, the
// executor tests that build on it are testing against the protocol, not against our own assumptions.
import OpenAI, { type RateLimitError } from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';

let fake: FakeOpenAI;
let client: OpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  client = new OpenAI({ baseURL: fake.url, apiKey: 'test-key', maxRetries: 0 });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const messages = [{ role: 'user' as const, content: 'hi there' }];
const tools = [{ type: 'function' as const, function: { name: 'hub_search', description: 'search', parameters: { type: 'object' } } }];

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}

describe('fake OpenAI server, non-streaming', () => {
  it('answers plain text as a chat.completion echoing the model, with estimated usage', async () => {
    fake.enqueue('Hello from the fake.', 'Hello from the fake.');
    const r = await client.chat.completions.create({ model: 'my-model', messages });
    expect(r).toMatchObject({ object: 'chat.completion', model: 'my-model', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hello from the fake.' } }] });
    expect(r.id).toMatch(/^chatcmpl-/);
    expect(r.choices[0]?.message.tool_calls).toBeUndefined();
    expect(r.usage?.completion_tokens).toBe(Math.ceil('Hello from the fake.'.length / 4));
    expect(r.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(r.usage?.total_tokens).toBe(r.usage!.prompt_tokens + r.usage!.completion_tokens);
    expect(r.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
    // Deterministic: the same request is estimated the same way.
    expect((await client.chat.completions.create({ model: 'my-model', messages })).usage).toEqual(r.usage);

    const req = fake.requests[0]!;
    expect(req).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body: { model: 'my-model', messages } });
    expect(req.headers.authorization).toBe('Bearer test-key');
    expect(JSON.parse(req.rawBody)).toEqual(req.body);
  });

  it('answers tool calls with type function, JSON-string arguments and finish_reason tool_calls', async () => {
    fake.enqueue({ tool_calls: [{ id: 'c1', name: 'hub_search', arguments: { q: 'flaky', limit: 5 } }, { name: 'hub_search', arguments: '{"q":"ci"' }], usage: { prompt_tokens: 50, completion_tokens: 9, cached_tokens: 20 } });
    const r = await client.chat.completions.create({ model: 'm', messages, tools });
    const choice = r.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: 'c1', type: 'function', function: { name: 'hub_search', arguments: '{"q":"flaky","limit":5}' } },
      { id: expect.stringMatching(/^call_/) as unknown, type: 'function', function: { name: 'hub_search', arguments: '{"q":"ci"' } },
    ]);
    expect(r.usage).toEqual({ prompt_tokens: 50, completion_tokens: 9, total_tokens: 59, prompt_tokens_details: { cached_tokens: 20 } });
    expect((fake.requests[0]?.body as { tools: unknown }).tools).toEqual(tools);
  });

  it('honours an explicit finish_reason and content alongside tool calls', async () => {
    fake.enqueue({ content: 'cut', finish_reason: 'length' });
    const r = await client.chat.completions.create({ model: 'm', messages });
    expect(r.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'cut' } });
  });
});

describe('fake OpenAI server, streaming', () => {
  it('streams text in several deltas after a role delta, then a finish chunk', async () => {
    const text = 'Streaming works, one fragment at a time 🙂.';
    fake.enqueue(text);
    const chunks = await collect(await client.chat.completions.create({ model: 'm', messages, stream: true }));
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const pieces = chunks.map((c) => c.choices[0]?.delta.content ?? '').filter(Boolean);
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    expect(pieces.join('')).toBe(text);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'm' && c.usage == null)).toBe(true);
  });

  it('streams tool calls as indexed deltas, identity first, arguments in fragments', async () => {
    fake.enqueue({ tool_calls: [{ id: 'c1', name: 'hub_search', arguments: { q: 'flaky tests', limit: 5 } }, { id: 'c2', name: 'hub_post', arguments: { text: 'done' } }] });
    const chunks = await collect(await client.chat.completions.create({ model: 'm', messages, tools, stream: true }));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    for (const index of [0, 1]) {
      const mine = deltas.filter((d) => d.index === index);
      expect(mine[0]).toMatchObject({ id: `c${index + 1}`, type: 'function', function: { arguments: '' } });
      expect(mine.slice(1).every((d) => d.id === undefined && d.function?.name === undefined)).toBe(true);
      expect(mine.slice(1).length).toBeGreaterThanOrEqual(3);
    }
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it("is reassembled by the SDK's stream helper into the final completion", async () => {
    fake.enqueue({ content: 'Let me look.', tool_calls: [{ id: 'c1', name: 'hub_search', arguments: { q: 'flaky tests', limit: 5 } }, { id: 'c2', name: 'hub_search', arguments: { q: 'ci' } }] });
    const stream = client.chat.completions.stream({ model: 'm', messages, tools });
    const contentDeltas: string[] = [];
    stream.on('content', (d) => contentDeltas.push(d));
    const final = await stream.finalChatCompletion();
    expect(contentDeltas.length).toBeGreaterThan(1);
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
    expect(final.choices[0]?.message.content).toBe('Let me look.');
    const calls = final.choices[0]?.message.tool_calls?.map((c) => (c.type === 'function' ? { id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) as unknown } : c));
    expect(calls).toEqual([
      { id: 'c1', name: 'hub_search', args: { q: 'flaky tests', limit: 5 } },
      { id: 'c2', name: 'hub_search', args: { q: 'ci' } },
    ]);
  });

  it('ends with an empty-choices usage chunk when include_usage is set', async () => {
    fake.enqueue({ content: 'counted', usage: { prompt_tokens: 11, completion_tokens: 7, cached_tokens: 3 } });
    const chunks = await collect(await client.chat.completions.create({ model: 'm', messages, stream: true, stream_options: { include_usage: true } }));
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18, prompt_tokens_details: { cached_tokens: 3 } });
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
  });
});

describe('fake OpenAI server, errors', () => {
  it('surfaces a 429 with retry-after as RateLimitError in OpenAI error shape', async () => {
    fake.enqueue({ error: { status: 429, message: 'slow down', retry_after: 7 } });
    const err = await client.chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err).toMatchObject({ status: 429, message: '429 slow down', type: 'requests', code: 'rate_limit_exceeded' });
    expect((err as RateLimitError).headers.get('retry-after')).toBe('7');
    expect(fake.requests).toHaveLength(1);
  });

  it('lets the SDK retry a 429 after at least its retry-after (seconds, then milliseconds)', async () => {
    const retrying = new OpenAI({ baseURL: fake.url, apiKey: 'test-key', maxRetries: 2 });
    fake.enqueue({ error: { status: 429, retry_after: 1 } }, 'after seconds');
    let started = Date.now();
    expect((await retrying.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content).toBe('after seconds');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);

    fake.enqueue({ error: { status: 429, retry_after: 30, retry_after_ms: 300 } }, 'after ms');
    started = Date.now();
    expect((await retrying.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content).toBe('after ms');
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(280); // retry-after-ms wins over retry-after, as the SDK documents
    expect(elapsed).toBeLessThan(5_000);
    expect(fake.requests).toHaveLength(4);
  });

  it('rejects a wrong key with 401 when apiKey is set, and records the key that was sent', async () => {
    const guarded = await startFakeOpenAI({ apiKey: 'right-key', defaultReply: 'welcome' });
    try {
      const wrong = new OpenAI({ baseURL: guarded.url, apiKey: 'wrong-key', maxRetries: 0 });
      const err = await wrong.chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(err).toMatchObject({ status: 401, code: 'invalid_api_key' });
      const right = new OpenAI({ baseURL: guarded.url, apiKey: 'right-key', maxRetries: 0 });
      expect((await right.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content).toBe('welcome');
      expect(guarded.requests.map((r) => r.headers.authorization)).toEqual(['Bearer wrong-key', 'Bearer right-key']);
    } finally {
      await guarded.close();
    }
  });

  it('fails loudly, without SDK retries, when no scripted reply is left', async () => {
    const retrying = new OpenAI({ baseURL: fake.url, apiKey: 'test-key', maxRetries: 2 });
    const err = await retrying.chat.completions.create({ model: 'm', messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as Error).message).toContain('fake-openai: no scripted reply left');
    expect(fake.requests).toHaveLength(1);
  });

  it('maps other scripted statuses to the matching SDK errors', async () => {
    fake.enqueue({ error: { status: 400, message: 'bad tool schema' } }, { error: { status: 429, message: 'quota', type: 'insufficient_quota', code: 'insufficient_quota' } });
    await expect(client.chat.completions.create({ model: 'm', messages })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await expect(client.chat.completions.create({ model: 'm', messages })).rejects.toMatchObject({ status: 429, type: 'insufficient_quota', code: 'insufficient_quota' });
  });
});

describe('fake OpenAI server, timing and routing', () => {
  it('honours delay_ms', async () => {
    fake.enqueue({ content: 'late', delay_ms: 200 });
    const started = Date.now();
    await client.chat.completions.create({ model: 'm', messages });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });

  it('drops a delayed reply cleanly when the client aborts, and keeps serving', async () => {
    fake.enqueue({ content: 'never seen', delay_ms: 10_000 }, 'next one');
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const started = Date.now();
    const err = await client.chat.completions.create({ model: 'm', messages }, { signal: ac.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await client.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content).toBe('next one');
    // Also mid-stream: abandoning the iteration closes the connection without upsetting the server.
    fake.enqueue('x'.repeat(500), 'still alive');
    for await (const _chunk of await client.chat.completions.create({ model: 'm', messages, stream: true })) break;
    expect((await client.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content).toBe('still alive');
  });

  it('records requests in arrival order; the responder (async) answers once the queue is empty, then defaultReply', async () => {
    fake.enqueue('first');
    fake.setResponder(async (req) => {
      await new Promise((r) => setTimeout(r, 5));
      const last = (req.body as { messages: Array<{ content: string }> }).messages.at(-1);
      return `echo: ${last?.content ?? ''}`;
    });
    const ask = async (content: string): Promise<string | null | undefined> => (await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content }] })).choices[0]?.message.content;
    expect(await ask('one')).toBe('first');
    expect(await ask('two')).toBe('echo: two');
    expect(await ask('three')).toBe('echo: three');
    expect(fake.requests.map((r) => (r.body as { messages: Array<{ content: string }> }).messages[0]?.content)).toEqual(['one', 'two', 'three']);
    expect(fake.requests.every((r, i) => i === 0 || r.at >= fake.requests[i - 1]!.at)).toBe(true);

    const withDefault = await startFakeOpenAI({ defaultReply: { content: 'default' } });
    try {
      const c = new OpenAI({ baseURL: withDefault.url, apiKey: 'k', maxRetries: 0 });
      withDefault.enqueue('queued');
      const texts = [];
      for (let i = 0; i < 3; i++) texts.push((await c.chat.completions.create({ model: 'm', messages })).choices[0]?.message.content);
      expect(texts).toEqual(['queued', 'default', 'default']);
    } finally {
      await withDefault.close();
    }
  });

  it('lists models, answers 404 for unknown routes and 400 for malformed JSON (embeddings: test/memory-pipeline.test.ts)', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toContain('fake-gpt');
    const notFound = await fetch(`${fake.url}/audio/speech`, { method: 'POST', body: '{}' });
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toMatchObject({ error: { message: expect.stringContaining('/v1/audio/speech') as unknown } });
    const bad = await fetch(`${fake.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": "m", ' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    const err = await fetch(`${fake.url}/chat/completions`, { method: 'POST', body: '{"model":"m"}' });
    expect(err.status).toBe(400);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/models', 'POST /v1/audio/speech', 'POST /v1/chat/completions', 'POST /v1/chat/completions']);
    expect(fake.requests[2]?.body).toBeUndefined();
  });
});
