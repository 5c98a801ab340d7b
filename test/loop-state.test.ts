// The loop as a step machine (docs/agent-loop.md): its state is plain data that survives JSON, and a run stopped
// at any checkpoint, its state serialised and parsed, then resumed by a fresh driver, ends exactly as the run
// that was never stopped: same answer, termination, ledger and usage, the same model requests in order, and the
// same events from that checkpoint on.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { noActionTool, taskCompleteTool } from '../agent-loop/builtin-tools.ts';
import type { ActivationEvent } from '../agent-loop/events.ts';
import { parseLoopState, type LoopState } from '../agent-loop/loop-state.ts';
import { resumeLoop, runLoop, type LoopInput, type LoopResult } from '../agent-loop/loop.ts';
import type { ChatModel, ModelRequest, ModelResponse } from '../agent-loop/model.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { ScriptedChatModel } from '../executors/llm/scripted-model.ts';
import type { ScriptedReply } from '../store/agent-config.ts';
import { events, makeTool, type RecordedModelRequest } from './support/loop-kit.ts';

// Ledger entries carry each call's latency: with the clock standing still it is 0 in every run, so ledgers compare
// exactly. Timers stay real.
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** The scripted model from its `from`-th reply on (a resumed run's model goes on where the last one stopped), recording every request. */
class RecordingScript implements ChatModel {
  readonly requests: RecordedModelRequest[] = [];
  readonly #inner: ScriptedChatModel;

  constructor(script: readonly ScriptedReply[], from = 0) {
    this.#inner = new ScriptedChatModel(script.slice(from));
  }

  complete(req: ModelRequest): Promise<ModelResponse> {
    const { signal: _signal, onDelta: _onDelta, ...rest } = req;
    this.requests.push(structuredClone<RecordedModelRequest>(rest));
    return this.#inner.complete(req);
  }
}

interface Scenario {
  name: string;
  script: ScriptedReply[];
  extra?: Partial<LoopInput>;
  expected: Partial<LoopResult>;
}

const usage = (prompt: number, completion: number) => ({ usage: { prompt_tokens: prompt, completion_tokens: completion } });
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({ id, name, arguments: args });
const fence = (name: string, args: Record<string, unknown>) => `\`\`\`tool_call\n${JSON.stringify({ tool: name, arguments: args })}\n\`\`\``;

const scenarios: Scenario[] = [
  {
    name: 'tool calls in between (parallel, a hub write, an unknown tool), ended by task_complete',
    script: [
      { tool_calls: [call('c1', 'lookup', { q: 'a' })], ...usage(120, 20) },
      { content: 'two at once', tool_calls: [call('c2', 'lookup', { q: 'b' }), call('c3', 'post', { q: 'hello' })], ...usage(200, 30) },
      { tool_calls: [call('c4', 'ghost_tool', { q: 'x' })], ...usage(260, 10) },
      { tool_calls: [call('c5', 'task_complete', { result: 'done: 42' })], ...usage(300, 15) },
    ],
    expected: { termination: 'stop_tool', text: 'done: 42', posted: true, steps: 4, modelCalls: 4 },
  },
  {
    name: 'text mode, with call ids the loop makes up, ended by a final answer',
    script: [
      { content: `Looking.\n${fence('lookup', { q: 'a' })}\n${fence('lookup', { q: 'b' })}`, ...usage(100, 40) },
      { content: fence('lookup', { q: 'c' }), ...usage(180, 20) },
      { content: 'The answer is 42.', ...usage(220, 10) },
    ],
    extra: { toolMode: 'text' },
    expected: { termination: 'final', text: 'The answer is 42.', steps: 3, modelCalls: 3 },
  },
  {
    name: 'the repeat guard: a nudge, then loop_detected',
    script: ['1', '2', '3', '4', '5', '6'].map((n) => ({ tool_calls: [call(`r${n}`, 'lookup', { q: 'same' })], ...usage(100, 5) })),
    expected: { termination: 'loop_detected', text: '', steps: 4, modelCalls: 4 },
  },
  {
    name: 'the error breaker: three identical errors, circuit_open',
    script: ['1', '2', '3', '4'].map((n) => ({ tool_calls: [call(`b${n}`, 'broken', { q: 'x' })], ...usage(100, 5) })),
    expected: { termination: 'circuit_open', steps: 3, modelCalls: 3 },
  },
  {
    name: 'max_steps, then the wrap-up call',
    script: [
      { content: 'first', tool_calls: [call('m1', 'lookup', { q: '1' })], ...usage(100, 10) },
      { content: 'second', tool_calls: [call('m2', 'lookup', { q: '2' })], ...usage(150, 10) },
      { content: 'third', tool_calls: [call('m3', 'lookup', { q: '3' })], ...usage(200, 10) },
      { content: 'Best so far: 42.', ...usage(250, 10) },
    ],
    extra: { maxSteps: 3 },
    expected: { termination: 'max_steps', partial: true, text: 'Best so far: 42.', steps: 3, modelCalls: 4 },
  },
];

function input(model: ChatModel, extra: Partial<LoopInput> = {}): LoopInput {
  const tools = [
    makeTool('lookup', { readOnly: true }),
    makeTool('post', { readOnly: false, postsToHub: true }),
    makeTool('broken', { run: () => ({ status: 'error', content: 'disk on fire' }) }),
    taskCompleteTool,
    noActionTool,
  ];
  return { model, modelName: 'gpt-4o', system: 'You are a test agent.', task: 'Find the answer.', maxSteps: 10, signal: new AbortController().signal, events: events(), tools: new ToolRegistry(tools, []), ...extra };
}

/** A run from start to end, with every state it handed out and the events that came after each. */
async function uninterrupted(s: Scenario): Promise<{ result: LoopResult; requests: RecordedModelRequest[]; checkpoints: LoopState[]; eventsAfter: unknown[][] }> {
  const model = new RecordingScript(s.script);
  const ev = events();
  const checkpoints: LoopState[] = [];
  const marks: number[] = [];
  const result = await runLoop(input(model, { ...s.extra, events: ev, onCheckpoint: (state) => (checkpoints.push(state), marks.push(ev.events.length)) }));
  return { result, requests: model.requests, checkpoints, eventsAfter: marks.map((n) => bodies(ev.events.slice(n))) };
}

/** Events without their number and time. */
function bodies(list: readonly ActivationEvent[]): unknown[] {
  return list.map(({ seq: _seq, ts: _ts, ...body }) => body);
}

describe('the loop state', () => {
  it.each(scenarios)('survives JSON at every checkpoint: $name', async (s) => {
    const { checkpoints } = await uninterrupted(s);
    expect(checkpoints.length).toBeGreaterThan(1);
    for (const state of checkpoints) {
      const json = JSON.stringify(state);
      expect(JSON.parse(json)).toEqual(state);
      expect(parseLoopState(json)).toEqual(state);
    }
    // Both kinds of checkpoint occur: between steps, and with a step's calls pending.
    expect(checkpoints.some((c) => c.pending)).toBe(true);
    expect(checkpoints.some((c) => !c.pending)).toBe(true);
  });

  it('a state that is not one is refused with the path of what is wrong', () => {
    expect(() => parseLoopState(JSON.stringify({ version: 1, messages: [{ role: 'user', content: 'x' }], step: -1 }))).toThrow(/^not a loop state: step: /);
    expect(() => parseLoopState('{"version":2}')).toThrow(/not a loop state: version/);
  });
});

describe('a run stopped at checkpoint k and resumed from its parsed state in a fresh driver', () => {
  it.each(scenarios)('ends as the run never stopped, for every k: $name', async (s) => {
    const full = await uninterrupted(s);
    expect(full.result).toMatchObject(s.expected);
    for (let k = 1; k <= full.checkpoints.length; k++) {
      // The first run stops where the state is handed out; the caller's abort ends it there.
      const stop = new AbortController();
      let seen = 0;
      let saved: string | undefined;
      const first = new RecordingScript(s.script);
      await runLoop(
        input(first, {
          ...s.extra,
          signal: stop.signal,
          onCheckpoint: (state) => {
            if (++seen !== k) return;
            saved = JSON.stringify(state);
            stop.abort();
          },
        }),
      );
      const state = parseLoopState(saved!);
      const where = `checkpoint ${k}: step ${state.step}${state.pending ? ', calls pending' : ''}`;
      expect(first.requests, where).toHaveLength(state.modelCalls);

      const second = new RecordingScript(s.script, state.modelCalls);
      const ev = events();
      const resumed = await resumeLoop(state, input(second, { ...s.extra, events: ev }));
      expect(resumed, where).toEqual(full.result);
      expect([...first.requests, ...second.requests], where).toEqual(full.requests);
      // After its opening line, the resumed run tells what the whole run told from that checkpoint on.
      expect(ev.events[0], where).toMatchObject({ type: 'user_message', text: `(resumed at step ${state.step})` });
      expect(bodies(ev.events.slice(1)), where).toEqual(full.eventsAfter[k - 1]);
    }
  });

  it('a resumed run has only what the earlier run left of max_duration', async () => {
    const script: ScriptedReply[] = [{ tool_calls: [call('d1', 'lookup', { q: 'a' })] }, { content: 'too late', delay_ms: 5_000 }, 'wrapped up'];
    const stop = new AbortController();
    let saved: string | undefined;
    await runLoop(
      input(new RecordingScript(script), {
        signal: stop.signal,
        onCheckpoint: (state) => {
          if (state.pending) return;
          saved = JSON.stringify(state);
          stop.abort();
        },
      }),
    );
    // 10 s, of which 1 s is the wrap-up's: 8.9 s used already leaves 100 ms for the slow reply.
    const state: LoopState = { ...parseLoopState(saved!), elapsedMs: 8_900 };
    vi.useRealTimers();
    const started = Date.now();
    const r = await resumeLoop(state, input(new RecordingScript(script, state.modelCalls), { maxDurationMs: 10_000 }));
    expect(r).toMatchObject({ termination: 'deadline', partial: true, text: 'wrapped up', steps: 2 });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
