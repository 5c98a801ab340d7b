// Streamed model output used for progress: coalesced live `model_delta` events through the real `openai` SDK
// against the fake server, kept out of the activation record, and shown by `warren run` as it arrives.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventLog, type ActivationEvent } from '../agent-loop/events.ts';
import { runLoop } from '../agent-loop/loop.ts';
import { DEFAULT_RETRY } from '../agent-loop/model-caller.ts';
import { StreamProgress } from '../agent-loop/stream-progress.ts';
import { ProgressPrinter } from '../daemon/commands/run.ts';
import { OpenAIChatModel } from '../executors/llm/openai-model.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());
afterEach(() => fake.reset());

const LONG = 'Streaming lets a person watch the answer being written, one fragment after another, instead of waiting for all of it at once.';

function listened(): { log: EventLog; seen: ActivationEvent[] } {
  const seen: ActivationEvent[] = [];
  return { log: new EventLog('act_stream', { listener: (e) => seen.push(e) }), seen };
}

describe('stream progress', () => {
  it('coalesces fragments by size and by time, and flushes what waits at the end', () => {
    const { log, seen } = listened();
    let now = 0;
    const p = new StreamProgress(log, { model: 'm', attempt: 1, minChars: 10, maxDelayMs: 100, now: () => now });
    p.push('abc');
    p.push('');
    p.push('def');
    expect(seen).toHaveLength(0);
    p.push('ghij'); // 10 characters waiting
    now = 50;
    p.push('k');
    expect(seen.map((e) => e.type === 'model_delta' && e.text)).toEqual(['abcdefghij']);
    now = 200; // a slow stream still shows progress
    p.push('l');
    p.flush();
    p.flush();
    expect(seen.map((e) => e.type === 'model_delta' && e.text)).toEqual(['abcdefghij', 'kl']);
  });

  it('live events reach listeners but neither the record nor the numbering', () => {
    const { log, seen } = listened();
    log.emit({ type: 'step_start', step: 1, max_steps: 3 });
    log.emit({ type: 'model_delta', model: 'm', attempt: 1, text: 'hi' });
    log.emit({ type: 'agent_response', text: 'hi', partial: false });
    expect(seen.map((e) => [e.type, e.seq])).toEqual([['step_start', 1], ['model_delta', 1], ['agent_response', 2]]);
    expect(log.events.map((e) => e.type)).toEqual(['step_start', 'agent_response']);
  });
});

describe('the loop streams progress', () => {
  const model = (stream: boolean) => new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', stream, maxRetries: 0 });
  const run = (stream: boolean, log: EventLog) =>
    runLoop({ model: model(stream), modelName: 'fake-gpt', system: 's', task: 't', maxSteps: 3, signal: new AbortController().signal, events: log, retry: { ...DEFAULT_RETRY, initialDelayMs: 5, maxDelayMs: 10 } });

  it('streamed text arrives as model_delta events between the call and its result, and adds up to the answer', async () => {
    fake.enqueue({ content: LONG });
    const { log, seen } = listened();
    const r = await run(true, log);
    expect(r).toMatchObject({ termination: 'final', text: LONG });
    const deltas = seen.filter((e) => e.type === 'model_delta');
    expect(deltas.length).toBeGreaterThan(1); // coalesced, but still progress, not one lump
    expect(deltas.map((e) => e.text).join('')).toBe(LONG);
    const types = seen.map((e) => e.type);
    expect(types.indexOf('model_call')).toBeLessThan(types.indexOf('model_delta'));
    expect(types.lastIndexOf('model_delta')).toBeLessThan(types.indexOf('model_result'));
    expect(log.events.some((e) => e.type === 'model_delta')).toBe(false);
    expect(log.events.map((e) => e.seq)).toEqual(log.events.map((_, i) => i + 1));
  });

  it('a stream cut mid-answer is retried; each attempt’s text is its own', async () => {
    fake.enqueue({ content: LONG, cut_after_events: 4 }, { content: 'second try' });
    const { log, seen } = listened();
    const r = await run(true, log);
    expect(r).toMatchObject({ termination: 'final', text: 'second try' });
    const byAttempt = (n: number) => seen.flatMap((e) => (e.type === 'model_delta' && e.attempt === n ? [e.text] : [])).join('');
    expect(LONG.startsWith(byAttempt(1))).toBe(true);
    expect(byAttempt(1).length).toBeGreaterThan(0);
    expect(byAttempt(2)).toBe('second try');
  });

  it('a model that does not stream gives no deltas', async () => {
    fake.enqueue({ content: LONG });
    const { log, seen } = listened();
    await run(false, log);
    expect(seen.some((e) => e.type === 'model_delta')).toBe(false);
  });
});

describe('progress printer', () => {
  const ev = (body: Record<string, unknown>): ActivationEvent => ({ seq: 1, activation_id: 'a', ts: '', ...body }) as ActivationEvent;
  it('shows streamed text inline under its step and ends the line before the next one', () => {
    const p = new ProgressPrinter();
    const out = [
      ev({ type: 'step_start', step: 1, max_steps: 3 }),
      ev({ type: 'model_call', model: 'm', attempt: 1 }),
      ev({ type: 'model_delta', model: 'm', attempt: 1, text: ' Hello' }),
      ev({ type: 'model_delta', model: 'm', attempt: 1, text: ' there,\nworld' }),
      ev({ type: 'model_result', usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0 }, finish_reason: 'stop' }),
      ev({ type: 'step_start', step: 2, max_steps: 3 }),
      ev({ type: 'model_delta', model: 'm', attempt: 1, text: 'cut' }),
    ]
      .map((e) => p.write(e))
      .join('');
    expect(out + p.close()).toBe('step 1/3\n  … Hello there,\n    world\nstep 2/3\n  … cut\n');
    expect(p.close()).toBe('');
  });
});

describe('warren run streams by default', { timeout: PROCESS_TEST_MS }, () => {
  const agentsDir = makeAgentsDir({ streamer: { config: 'name: streamer\ntype: llm\nbrain:\n  provider: openai\n  model: fake-gpt\n  api_key_env: STREAM_KEY\ncapabilities:\n  grants: [hub:read]\n', prompt: 'You are {{name}}.' } }, { withGreeter: false });
  const warren = (args: string[]) =>
    new Promise<{ status: number | null; stdout: string }>((done) => {
      const child = spawn(process.execPath, [resolve('bin/warren.js'), ...args], { env: { ...process.env, STREAM_KEY: 'sk-stream', WARREN_HUB_ADMIN_KEY: '', OPENAI_BASE_URL: fake.url }, stdio: ['ignore', 'pipe', 'inherit'] });
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.on('close', (status) => done({ status, stdout }));
    });

  it('prints the answer as it streams; --no-stream asks for a whole answer', async () => {
    fake.enqueue({ content: LONG }, { content: LONG });
    const streamed = await warren(['run', 'streamer', '--prompt', 'hi', '--agents', agentsDir]);
    expect(streamed.status).toBe(0);
    expect((fake.requests[0]?.body as { stream?: boolean }).stream).toBe(true);
    const live = streamed.stdout.split('\n').find((l) => l.startsWith('  … '));
    expect(live).toBe(`  … ${LONG}`);
    const whole = await warren(['run', 'streamer', '--prompt', 'hi', '--agents', agentsDir, '--no-stream']);
    expect(whole.status).toBe(0);
    expect((fake.requests[1]?.body as { stream?: boolean }).stream ?? false).toBe(false);
    expect(whole.stdout).not.toContain('  … ');
    expect(whole.stdout).toContain(LONG);
  });
});

describe('a cancelled stream', () => {
  it('is never taken for a (shorter) answer', async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue({ content: LONG, stall_after_events: 3 });
      const ac = new AbortController();
      const model = new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', stream: true, maxRetries: 0 });
      setTimeout(() => ac.abort(), 300); // mid-stream: the fake has sent part of the answer and gone quiet
      const r = await runLoop({ model, modelName: 'fake-gpt', system: 's', task: 't', maxSteps: 3, signal: ac.signal, events: new EventLog('act_cancel') });
      expect(r.termination).toBe('aborted');
      expect(r.text).toBe('');
    } finally {
      await fake.close();
    }
  });
});
