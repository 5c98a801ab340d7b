// Model retries and fallback (docs/agent-loop.md R12) through the real `openai` SDK against the fake server.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runLoop, type LoopInput } from '../agent-loop/loop.ts';
import { backoffMs, DEFAULT_RETRY } from '../agent-loop/model-caller.ts';
import { OpenAIChatModel } from '../executors/llm/openai-model.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { events, makeTool } from './support/loop-kit.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());
afterEach(() => fake.reset());

function input(extra: Partial<LoopInput> = {}): LoopInput {
  return {
    model: new OpenAIChatModel({ baseURL: fake.url, apiKey: 'sk-test', maxRetries: 0 }),
    modelName: 'fake-gpt',
    system: 's',
    task: 't',
    maxSteps: 5,
    signal: new AbortController().signal,
    events: events(),
    retry: { ...DEFAULT_RETRY, initialDelayMs: 10, maxDelayMs: 20 },
    ...extra,
  };
}

describe('retries', () => {
  it('a 429 with retry-after: 1 is retried after at least 1 s; the ledger holds only the successful call', async () => {
    fake.enqueue({ error: { status: 429, retry_after: 1 } }, { content: 'hello', usage: { prompt_tokens: 11, completion_tokens: 3 } });
    const ev = events();
    const r = await runLoop(input({ events: ev }));
    expect(r).toMatchObject({ termination: 'final', text: 'hello' });
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.at - fake.requests[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(r.ledger).toHaveLength(1);
    expect(r.ledger[0]).toMatchObject({ inputTokens: 11, outputTokens: 3, attempt: 2 });
    expect(ev.events.find((e) => e.type === 'model_retry')).toMatchObject({ delay_ms: 1000 });
  });

  it('three 503s in a row switch to the fallback model, and the switch is an event', async () => {
    fake.enqueue({ error: { status: 503 } }, { error: { status: 503 } }, { error: { status: 503 } }, { content: 'from the fallback' });
    const ev = events();
    const r = await runLoop(input({ events: ev, fallbackModels: ['fake-gpt-mini'] }));
    expect(r).toMatchObject({ termination: 'final', text: 'from the fallback' });
    expect(fake.requests.map((q) => (q.body as { model: string }).model)).toEqual(['fake-gpt', 'fake-gpt', 'fake-gpt', 'fake-gpt-mini']);
    expect(ev.events.find((e) => e.type === 'model_fallback')).toMatchObject({ from: 'fake-gpt', to: 'fake-gpt-mini' });
    expect(r.ledger.map((e) => e.model)).toEqual(['fake-gpt-mini']);
  });

  it('a retry-after beyond what the loop waits ends the run at once, passing the wait on to the queue', async () => {
    fake.enqueue({ error: { status: 429, retry_after: 120 } }, 'never sent');
    const started = Date.now();
    const r = await runLoop(input());
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r).toMatchObject({ termination: 'error', error: { retryable: true, retryAfterMs: 120_000 } });
    expect(fake.requests).toHaveLength(1);
  });

  it('a 401 is not retried: one request, termination error', async () => {
    fake.enqueue({ error: { status: 401 } }, 'never sent');
    const r = await runLoop(input({ fallbackModels: ['fake-gpt-mini'] }));
    expect(r.termination).toBe('error');
    expect(r.error?.retryable).toBe(false);
    expect(fake.requests).toHaveLength(1);
  });

  it('retryable failures on every model end with error, marked retryable', async () => {
    fake.setResponder(() => ({ error: { status: 500 } }));
    const r = await runLoop(input());
    expect(r.termination).toBe('error');
    expect(r.error?.retryable).toBe(true);
    expect(fake.requests).toHaveLength(3);
  });

  it('backoff grows, stays under the cap and is jittered', () => {
    const p = { ...DEFAULT_RETRY };
    expect(backoffMs(1, p, undefined, () => 0)).toBe(125);
    expect(backoffMs(1, p, undefined, () => 1)).toBe(250);
    expect(backoffMs(5, p, undefined, () => 1)).toBe(2000);
    expect(backoffMs(1, p, 3000)).toBe(3000);
  });
});

describe('streams cut mid-way', () => {
  const streaming = (): LoopInput['model'] => new OpenAIChatModel({ baseURL: fake.url, apiKey: 'sk-test', maxRetries: 0, stream: true });

  it('a cut before any tool call began is retried', async () => {
    fake.enqueue({ content: 'partial text that never finishes', cut_after_events: 2 }, 'whole answer');
    const r = await runLoop(input({ model: streaming() }));
    expect(r).toMatchObject({ termination: 'final', text: 'whole answer' });
    expect(fake.requests).toHaveLength(2);
  });

  it('a cut after a tool call began streaming is never replayed; with no tool run yet the activation may retry (issue 28 item 7)', async () => {
    // Event 0 is the role, 1 the call's identity, 2.. its argument fragments: cut inside the arguments.
    fake.enqueue({ tool_calls: [{ id: 'c1', name: 'hub_post', arguments: { content: 'x'.repeat(100) } }], cut_after_events: 3 }, 'must not be asked');
    const r = await runLoop(input({ model: streaming() }));
    expect(r.termination).toBe('error');
    expect(r.error?.message).toContain('stream broke after a tool call began');
    expect(r.error?.message).toContain('no tool ran');
    expect(r.error?.retryable).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('the same cut after a tool already ran in the run is final: not retried', async () => {
    const lookup = makeTool('lookup', { readOnly: true, run: () => ({ status: 'ok', content: 'found' }) });
    fake.enqueue(
      { tool_calls: [{ id: 'c1', name: 'lookup', arguments: { q: 'a' } }] },
      { tool_calls: [{ id: 'c2', name: 'lookup', arguments: { q: 'b'.repeat(100) } }], cut_after_events: 3 },
      'must not be asked',
    );
    const r = await runLoop(input({ model: streaming(), tools: new ToolRegistry([lookup], []) }));
    expect(lookup.calls).toHaveLength(1);
    expect(r.termination).toBe('error');
    expect(r.error?.message).toContain('a tool had already run');
    expect(r.error?.retryable).toBe(false);
    expect(fake.requests).toHaveLength(2);
  });
});
