// Tools done right (docs/agent-loop.md R4, R5, R10, R11): planner, call-order commits, timeouts, output cap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoop, type LoopInput } from '../agent-loop/loop.ts';
import { capOutput, planStages } from '../agent-loop/tool-runner.ts';
import { ToolRegistry, type Tool } from '../agent-loop/tools.ts';
import { OpenAIChatModel } from '../executors/llm/openai-model.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { events, FnModel, makeTool, sleep } from './support/loop-kit.ts';
import { Prng } from './support/prng.ts';

function input(model: LoopInput['model'], tools: Tool[], extra: Partial<LoopInput> = {}): LoopInput {
  return { model, modelName: 'fake-gpt', system: 's', task: 't', maxSteps: 10, signal: new AbortController().signal, events: events(), tools: new ToolRegistry(tools, ['hub:read']), ...extra };
}

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

describe('planner', () => {
  it('groups contiguous read-only calls, runs each mutating call alone, keeps call order', () => {
    expect(planStages([true, true, false, true, false, false, true])).toEqual([[0, 1], [2], [3], [4], [5], [6]]);
    expect(planStages([true, true, true], 2)).toEqual([[0, 1], [2]]);
  });
});

describe('parallel tool calls', () => {
  // All three in flight at once, shown by counting, not by the wall clock: on a busy machine the 300 ms of sleep
  // took 935 ms end to end, though the calls overlapped.
  it('three read-only calls sleeping 300/100/200 ms all run at once, with results in call order', async () => {
    const delays: Record<string, number> = { a: 300, b: 100, c: 200 };
    const finished: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const sleepy = makeTool('sleepy', {
      run: async (args) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        await sleep(delays[String(args.q)]!);
        running -= 1;
        finished.push(String(args.q));
        return { status: 'ok', content: `slept ${String(args.q)}` };
      },
    });
    const model = new FnModel((_r, n) => {
      if (n === 1) return { calls: ['a', 'b', 'c'].map((q) => ({ id: `id_${q}`, name: 'sleepy', arguments: { q } })) };
      return { content: 'done' };
    });
    const ev = events();
    const r = await runLoop(input(model, [sleepy], { events: ev }));
    expect(maxRunning).toBe(3); // none waited for another
    expect(finished).toEqual(['b', 'c', 'a']); // they really overlapped
    expect(r.toolResults.map((t) => t.call.id)).toEqual(['id_a', 'id_b', 'id_c']);
    const next = model.requests[1]!.messages.filter((m) => m.role === 'tool');
    expect(next.map((m) => (m.role === 'tool' ? m.toolCallId : ''))).toEqual(['id_a', 'id_b', 'id_c']);
    expect(ev.events.filter((e) => e.type === 'tool_result').map((e) => (e.type === 'tool_result' ? e.id : ''))).toEqual(['id_a', 'id_b', 'id_c']);
  });

  it('two mutating calls never overlap', async () => {
    let running = 0;
    let maxRunning = 0;
    const write = makeTool('write', {
      readOnly: false,
      run: async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await sleep(50);
        running--;
        return { status: 'ok', content: 'written' };
      },
    });
    const read = makeTool('read');
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'write', arguments: { q: '1' } }, { name: 'read', arguments: {} }, { name: 'write', arguments: { q: '2' } }] } : { content: 'ok' }));
    const r = await runLoop(input(model, [write, read]));
    expect(write.calls).toHaveLength(2);
    expect(maxRunning).toBe(1);
    expect(r.toolResults.map((t) => t.call.name)).toEqual(['write', 'read', 'write']);
  });

  it('over 20 runs with random delays, the next request body sent through the SDK is byte-identical', async () => {
    const prng = new Prng(20261123);
    const bodies = new Set<string>();
    for (let run = 0; run < 20; run++) {
      fake.reset();
      fake.enqueue({ content: null, tool_calls: ['a', 'b', 'c', 'd'].map((q) => ({ id: `call_${q}`, name: 'sleepy', arguments: { q } })), usage: { prompt_tokens: 10, completion_tokens: 5 } }, { content: 'done', usage: { prompt_tokens: 10, completion_tokens: 5 } });
      const sleepy = makeTool('sleepy', {
        run: async (args) => {
          await sleep(prng.int(40));
          return { status: 'ok', content: `result ${String(args.q)}` };
        },
      });
      const model = new OpenAIChatModel({ baseURL: fake.url, apiKey: 'sk-test', maxRetries: 0 });
      const r = await runLoop(input(model, [sleepy]));
      expect(r.termination).toBe('final');
      bodies.add(fake.requests[1]!.rawBody);
    }
    expect(bodies.size).toBe(1);
    expect([...bodies][0]).toContain('"tool_call_id":"call_a"');
  });
});

describe('every call gets exactly one result', () => {
  it('a tool past its timeout gives timed_out and the loop goes on', async () => {
    const hang = makeTool('hang', { timeoutMs: 100, run: () => new Promise(() => undefined) });
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'hang', arguments: {} }] } : { content: 'carried on' }));
    const r = await runLoop(input(model, [hang]));
    expect(r.toolResults[0]?.status).toBe('timed_out');
    expect(r).toMatchObject({ termination: 'final', text: 'carried on' });
  });

  it('a tool that throws gives an error result the model sees', async () => {
    const bad = makeTool('bad', {
      run: () => {
        throw new Error('kaput');
      },
    });
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'bad', arguments: {} }] } : { content: 'ok' }));
    const r = await runLoop(input(model, [bad]));
    expect(r.toolResults[0]).toMatchObject({ status: 'error' });
    expect(JSON.stringify(model.requests[1]!.messages)).toContain('kaput');
  });

  it('a tool without its grant gives a denied result and never runs', async () => {
    const post = makeTool('post', { readOnly: false, grant: 'hub:write' });
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'post', arguments: { q: 'hi' } }] } : { content: 'ok' }));
    const r = await runLoop(input(model, [post]));
    expect(post.calls).toHaveLength(0);
    expect(r.toolResults[0]?.status).toBe('denied');
    // Not offered either.
    expect(model.requests[0]!.tools ?? []).toEqual([]);
  });
});

describe('registry', () => {
  it('a name offered twice keeps the first tool and warns, instead of failing the run', async () => {
    const first = makeTool('dup', { run: () => ({ status: 'ok', content: 'first' }) });
    const second = makeTool('dup', { run: () => ({ status: 'ok', content: 'second' }) });
    const ev = events();
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'dup', arguments: {} }] } : { content: 'ok' }));
    const r = await runLoop(input(model, [first, second], { events: ev }));
    expect(r.toolResults[0]?.content).toBe('first');
    expect(model.requests[0]!.tools?.map((t) => t.name)).toEqual(['dup']);
    expect(ev.events.some((e) => e.type === 'loop_warning' && e.message.includes('offered twice'))).toBe(true);
  });
});

describe('output cap', () => {
  it('a 1 MB result reaches the next request at no more than the cap, with a notice', async () => {
    const huge = makeTool('huge', { run: () => ({ status: 'ok', content: 'x'.repeat(1_000_000) + 'TAIL' }) });
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'huge', arguments: {} }] } : { content: 'ok' }));
    const ev = events();
    const r = await runLoop({ ...input(model, [huge]), events: ev });
    const sent = model.requests[1]!.messages.find((m) => m.role === 'tool')!.content;
    expect(ev.events.find((e) => e.type === 'tool_result')).toMatchObject({ name: 'huge', full_length: 1_000_004 });
    expect(sent.length).toBeLessThanOrEqual(16_000);
    expect(sent).toContain('output capped at 16000 characters');
    expect(sent.endsWith('TAIL')).toBe(true);
    expect(r.toolResults[0]?.fullLength).toBe(1_000_004);
  });

  it('capOutput leaves short text alone and respects small caps', () => {
    expect(capOutput('short', 100)).toBe('short');
    expect(capOutput('y'.repeat(5000), 200).length).toBeLessThanOrEqual(200);
  });
});

describe('tool output and secrets', () => {
  it('a secret a tool returns is redacted before the model sees it (and before the result is kept)', async () => {
    const secret = 'tool-canary-51f0c3a9e2';
    const leaky = makeTool('leaky', { readOnly: true, run: () => ({ status: 'ok', content: `env: TOKEN=${secret}` }) });
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'leaky', arguments: {} }] } : { content: 'done' }));
    const r = await runLoop(input(model, [leaky], { redact: (t) => t.split(secret).join('[REDACTED]') }));
    expect(r.termination).toBe('final');
    expect(JSON.stringify(model.requests[1])).toContain('TOKEN=[REDACTED]');
    expect(JSON.stringify(model.requests)).not.toContain(secret);
    expect(JSON.stringify(r.toolResults)).not.toContain(secret);
  });
});
