// Layered timeouts (docs/agent-loop.md R10): per tool, per step, per model call, and in total. A tool past its
// limit is `timed_out` and the loop goes on; a model that outlasts its step ends the run with an error.
import { describe, expect, it, vi } from 'vitest';
import { runLoop } from '../agent-loop/loop.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { OpenAIChatModel } from '../executors/llm/openai-model.ts';
import { startFakeOpenAI } from './fakes/openai-server.ts';
import { events, FnModel, makeTool, sleep } from './support/loop-kit.ts';

const slowTool = (ms: number) => makeTool('dig', { readOnly: true, timeoutMs: 60_000, run: async (_a, ctx) => (await sleep(ms, ctx.signal), { status: 'ok', content: 'dug' }) });

// Limits here are at least a second and what they cut takes a minute: with 300 ms step limits, a busy machine
// used the whole step before the tool had even started ("dig was not started"), one run in two under load.
describe('layered timeouts', () => {
  it('a step limit stops a tool that would outlast it: timed_out, and the next step goes on', async () => {
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'dig', arguments: {} }] } : { content: 'gave up digging' }));
    const started = Date.now();
    const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, stepTimeoutMs: 1_000, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([slowTool(60_000)], []) });
    expect(Date.now() - started).toBeLessThan(30_000); // the step limit, not the tool's minute
    expect(r).toMatchObject({ termination: 'final', text: 'gave up digging' });
    expect(r.toolResults[0]).toMatchObject({ status: 'timed_out', content: expect.stringMatching(/stopped at the step's time limit/) as string });
  });

  it('a call the step has no time left for is not started at all (a write is never sent and then retried)', async () => {
    let started = 0;
    const write = makeTool('write', { readOnly: false, timeoutMs: 60_000, run: async (_a, ctx) => (started++, await sleep(60_000, ctx.signal), { status: 'ok', content: 'written' }) });
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'write', arguments: { q: '1' } }, { name: 'write', arguments: { q: '2' } }] } : { content: 'done' }));
    const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, stepTimeoutMs: 1_000, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([write], []) });
    expect(started).toBe(1);
    expect(r.toolResults.map((t) => t.status)).toEqual(['timed_out', 'timed_out']);
    expect(r.toolResults[0]!.content).toMatch(/^Error: write was stopped at the step's time limit, after \d+ ms\.$/);
    expect(r.toolResults[1]!.content).toBe("Error: write was not started: the step's time limit was reached.");
  });

  it('a step cut by its timer is over for the calls after it even where the wall clock reads short of its end', async () => {
    // Timers run on the monotonic clock, Date.now() on the wall clock: the step's timer can fire while Date.now()
    // still reads a few ms before the step's end (seen in CI: the second write was started with 1 ms left). Here
    // the wall clock falls 200 ms behind once the first write runs, so only the timer says the step is over.
    let started = 0;
    const realNow = Date.now.bind(Date);
    const lag = vi.spyOn(Date, 'now');
    const write = makeTool('write', {
      readOnly: false,
      timeoutMs: 60_000,
      run: async (_a, ctx) => {
        started++;
        lag.mockImplementation(() => realNow() - 200);
        await sleep(60_000, ctx.signal);
        return { status: 'ok', content: 'written' };
      },
    });
    try {
      const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'write', arguments: { q: '1' } }, { name: 'write', arguments: { q: '2' } }] } : { content: 'done' }));
      const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, stepTimeoutMs: 1_000, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([write], []) });
      expect(started).toBe(1);
      expect(r.toolResults.map((t) => t.status)).toEqual(['timed_out', 'timed_out']);
      expect(r.toolResults[1]!.content).toBe("Error: write was not started: the step's time limit was reached.");
    } finally {
      lag.mockRestore();
    }
  });

  it('a tool that throws before returning a promise is an error result, not a crash', async () => {
    const broken = { ...makeTool('broken'), execute: () => { throw new Error('synchronous boom'); } };
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'broken', arguments: {} }] } : { content: 'ok' }));
    const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([broken], []) });
    expect(r.termination).toBe('final');
    expect(r.toolResults[0]).toMatchObject({ status: 'error', content: 'Error: broken failed: synchronous boom' });
  });

  it('a tool timeout shorter than the step wins, with its own message', async () => {
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'dig', arguments: {} }] } : { content: 'ok' }));
    const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, stepTimeoutMs: 5_000, toolTimeoutMs: 100, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([{ ...slowTool(5_000), timeoutMs: undefined }], []) });
    expect(r.toolResults[0]).toMatchObject({ status: 'timed_out', content: 'Error: dig timed out after 100 ms.' });
  });

  it('a model that does not answer within the step limit ends the run with a retryable error', async () => {
    const model = new FnModel(() => ({ content: 'too late', delayMs: 60_000 }));
    const started = Date.now();
    const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, stepTimeoutMs: 1_000, signal: new AbortController().signal, events: events() });
    expect(Date.now() - started).toBeLessThan(30_000); // the step limit, not the model's minute
    expect(r).toMatchObject({ termination: 'error', error: { message: 'step 1: the model did not answer within the step limit of 1000 ms', retryable: true } });
  });

  it('a stream that goes quiet mid-answer is cut after the model timeout and retried', async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue({ content: 'this answer never finishes', stall_after_events: 2 }, { content: 'second try' });
      const model = new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', maxRetries: 0, timeoutMs: 1_000, stream: true });
      const ev = events();
      const started = Date.now();
      const r = await runLoop({ model, modelName: 'fake-gpt', system: 's', task: 't', maxSteps: 3, signal: new AbortController().signal, events: ev, retry: { attemptsPerModel: 3, initialDelayMs: 10, maxDelayMs: 20, maxRetryAfterMs: 60_000 } });
      expect(Date.now() - started).toBeLessThan(30_000); // a stalled stream waits for nothing else
      expect(r).toMatchObject({ termination: 'final', text: 'second try' });
      expect(ev.events.find((e) => e.type === 'model_retry')).toMatchObject({ message: 'model stream stalled: no data for 1000 ms' });
    } finally {
      await fake.close();
    }
  });

  it('a model HTTP call past its own timeout is retried, then answers', async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue({ content: 'slow', delay_ms: 60_000 }, { content: 'quick' });
      const model = new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', maxRetries: 0, timeoutMs: 1_000 });
      const r = await runLoop({ model, modelName: 'fake-gpt', system: 's', task: 't', maxSteps: 3, signal: new AbortController().signal, events: events(), retry: { attemptsPerModel: 3, initialDelayMs: 10, maxDelayMs: 20, maxRetryAfterMs: 60_000 } });
      expect(r).toMatchObject({ termination: 'final', text: 'quick' });
      expect(fake.requests).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });
});
