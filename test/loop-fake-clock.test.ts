// The loop on a fake clock (vitest's fake timers; docs/agent-loop.md R15): waits measured in minutes are checked
// to the millisecond without waiting for them.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runLoop } from '../agent-loop/loop.ts';
import { ModelError } from '../agent-loop/model.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { events, FnModel, makeTool, sleep } from './support/loop-kit.ts';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('on a fake clock', () => {
  it('a 429 asking for 30 s is retried after exactly 30 s', async () => {
    const model = new FnModel((_r, n) => {
      if (n === 1) throw new ModelError('rate limited', { status: 429, retryable: true, retryAfterMs: 30_000 });
      return { content: 'after the wait' };
    });
    const run = runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, signal: new AbortController().signal, events: events() });
    await vi.advanceTimersByTimeAsync(29_999);
    expect(model.requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(model.requests).toHaveLength(2);
    await expect(run).resolves.toMatchObject({ termination: 'final', text: 'after the wait' });
  });

  it('a 10-minute max_duration ends an hour-long tool call on time, with a wrap-up answer', async () => {
    const slow = makeTool('dig', { readOnly: true, run: async (_a, ctx) => (await sleep(3_600_000, ctx.signal), { status: 'ok', content: 'dug' }) });
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'dig', arguments: {} }] } : { content: 'what I have so far' }));
    const started = Date.now();
    let settledAt: number | undefined;
    const run = runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 5, maxDurationMs: 600_000, toolTimeoutMs: 7_200_000, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([slow], []) }).then((r) => ((settledAt = Date.now()), r));
    await vi.advanceTimersByTimeAsync(540_000);
    expect(settledAt).toBeUndefined(); // nine minutes in, still digging
    await vi.advanceTimersByTimeAsync(60_000);
    const r = await run;
    expect(r).toMatchObject({ termination: 'deadline', partial: true, text: 'what I have so far' });
    expect(r.toolResults[0]).toMatchObject({ status: 'cancelled' });
    expect(settledAt! - started).toBeLessThanOrEqual(600_000);
  });
});
