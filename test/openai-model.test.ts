// The openai-SDK model adapter against the fake OpenAI-compatible server: JSON and SSE, text and tool calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError } from '../agent-loop/model.ts';
import { OpenAIChatModel } from '../executors/llm/openai-model.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

const messages = [{ role: 'user' as const, content: 'hi' }];

describe.each([false, true])('OpenAIChatModel (stream: %s)', (stream) => {
  it('returns text with usage', async () => {
    fake.reset();
    fake.enqueue({ content: 'Hello there, friend of many words.', usage: { prompt_tokens: 11, completion_tokens: 7, cached_tokens: 3 } });
    const deltas: string[] = [];
    const model = new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', stream, maxRetries: 0 });
    const r = await model.complete({ model: 'fake-gpt', messages, onDelta: (d) => deltas.push(d) });
    expect(r).toMatchObject({ content: 'Hello there, friend of many words.', finishReason: 'stop', usage: { inputTokens: 11, outputTokens: 7, cachedTokens: 3 }, toolCalls: [] });
    if (stream) expect(deltas.length).toBeGreaterThan(1);
    expect((fake.requests[0]?.body as { stream?: boolean }).stream ?? false).toBe(stream);
  });

  it('sends its parameters as JSON bytes: a JSON content type, its exact length, characters outside Latin-1 intact', async () => {
    fake.reset();
    fake.enqueue({ content: 'ok' });
    const model = new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', stream, maxRetries: 0 });
    const text = 'a dash — a quote ’ an é and a 🐇';
    await model.complete({ model: 'fake-gpt', messages: [{ role: 'user', content: text }], temperature: 0.5 });
    const sent = fake.requests[0]!;
    expect(sent.headers['content-type']).toBe('application/json');
    expect(Number(sent.headers['content-length'])).toBe(Buffer.byteLength(sent.rawBody));
    expect(sent.body).toMatchObject({ model: 'fake-gpt', messages: [{ role: 'user', content: text }], temperature: 0.5 });
  });

  it('reassembles tool calls, two of the same tool with distinct ids', async () => {
    fake.reset();
    fake.enqueue({ tool_calls: [{ id: 'c1', name: 'hub_search', arguments: { q: 'flaky tests', limit: 5 } }, { id: 'c2', name: 'hub_search', arguments: { q: 'ci' } }] });
    const model = new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', stream, maxRetries: 0 });
    const r = await model.complete({ model: 'fake-gpt', messages, tools: [{ name: 'hub_search', description: 'search', parameters: { type: 'object' } }] });
    expect(r.finishReason).toBe('tool_calls');
    expect(r.toolCalls).toEqual([
      { id: 'c1', name: 'hub_search', arguments: { q: 'flaky tests', limit: 5 } },
      { id: 'c2', name: 'hub_search', arguments: { q: 'ci' } },
    ]);
    expect((fake.requests[0]?.body as { tools: unknown[] }).tools).toEqual([{ type: 'function', function: { name: 'hub_search', description: 'search', parameters: { type: 'object' } } }]);
  });
});

describe('OpenAIChatModel errors', () => {
  it('classifies 429 as retryable with its retry-after, and 401 as final', async () => {
    fake.reset();
    fake.enqueue({ error: { status: 429, retry_after: 1 } }, { error: { status: 401 } });
    const model = new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', maxRetries: 0 });
    expect(await model.complete({ model: 'm', messages }).catch((e: unknown) => e)).toMatchObject({ status: 429, retryable: true, retryAfterMs: 1_000 });
    const e401 = await model.complete({ model: 'm', messages }).catch((e: unknown) => e);
    expect(e401).toBeInstanceOf(ModelError);
    expect(e401).toMatchObject({ status: 401, retryable: false });
  });

  it('lets the SDK retry a 429 after at least its retry-after', async () => {
    fake.reset();
    fake.enqueue({ error: { status: 429, retry_after: 1 } }, 'ok');
    const model = new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', maxRetries: 2 });
    const started = Date.now();
    expect((await model.complete({ model: 'm', messages })).content).toBe('ok');
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(fake.requests).toHaveLength(2);
  });
});
