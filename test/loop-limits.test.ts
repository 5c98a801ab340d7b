// Limits with a graceful end (docs/agent-loop.md R1, R9, R10): step limit, token budget, deadline, typed endings.
import { describe, expect, it } from 'vitest';
import { noActionTool, taskCompleteTool } from '../agent-loop/builtin-tools.ts';
import { toolChars } from '../agent-loop/limits.ts';
import type { ToolDefinition } from '../agent-loop/model.ts';
import { runLoop, type LoopInput } from '../agent-loop/loop.ts';
import { ToolRegistry, type Tool } from '../agent-loop/tools.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import { events, FnModel, makeTool, type Turn } from './support/loop-kit.ts';

function input(model: FnModel, tools: Tool[], extra: Partial<LoopInput> = {}): LoopInput {
  return {
    model,
    modelName: 'm',
    system: 'You are a test agent.',
    task: 'Do the task.',
    maxSteps: 10,
    signal: new AbortController().signal,
    events: events(),
    tools: new ToolRegistry([...tools, taskCompleteTool, noActionTool], []),
    ...extra,
  };
}

describe('step limit', () => {
  it("an agent's limits default to Botburrow's (seed 003) and SwiftAgentKit's 10 iterations (seed 004): 10 steps, 100,000 tokens, 5 minutes", () => {
    const { behavior } = AgentConfigSchema.parse({ name: 'defaults', type: 'llm', brain: { provider: 'scripted', model: 'm', responses: ['x'] }, capabilities: {} });
    expect(behavior).toMatchObject({ max_iterations: 10, max_tokens: 100_000, max_duration: 300_000 });
  });

  it('a model that always calls a tool with max_iterations 3: 3 tool rounds + 1 wrap-up, max_steps, partial answer', async () => {
    const lookup = makeTool('lookup');
    let n = 0;
    const model = new FnModel((req) => (req.toolChoice === 'none' ? { content: 'Best so far: the answer is probably 42.' } : { content: `thinking ${++n}`, calls: [{ name: 'lookup', arguments: { q: `x${n}` } }] }));
    const r = await runLoop(input(model, [lookup], { maxSteps: 3 }));
    expect(r.termination).toBe('max_steps');
    expect(r.partial).toBe(true);
    expect(r.text).toBe('Best so far: the answer is probably 42.');
    expect(lookup.calls).toHaveLength(3);
    expect(model.requests).toHaveLength(4);
    expect(r.modelCalls).toBe(4);
    expect(r.steps).toBe(3);
    // The wrap-up keeps the tools (same prefix) but forbids calling them.
    expect(model.requests[3]!.toolChoice).toBe('none');
    expect(model.requests.slice(0, 3).every((q) => q.toolChoice === undefined)).toBe(true);
  });

  it('the model sees "step n of N" on every call', async () => {
    const model = new FnModel((_req, n) => (n < 3 ? { calls: [{ name: 'lookup', arguments: { q: String(n) } }] } : { content: 'done' }));
    await runLoop(input(model, [makeTool('lookup')], { maxSteps: 5 }));
    expect(model.requests.map((q) => q.messages.at(-1)?.content)).toEqual(['[step 1 of 5]', '[step 2 of 5]', '[step 3 of 5]']);
  });

  it('task_complete at step 2 under a limit of 10: exactly 2 model calls, stop_tool, its result is the answer', async () => {
    const model = new FnModel((_req, n): Turn => (n === 1 ? { calls: [{ name: 'lookup', arguments: { q: 'a' } }] } : { calls: [{ name: 'task_complete', arguments: { result: 'All done.' } }] }));
    const r = await runLoop(input(model, [makeTool('lookup')]));
    expect(r).toMatchObject({ termination: 'stop_tool', text: 'All done.', partial: false, modelCalls: 2 });
  });

  it('task_complete beside another call: that call gets its result first, then stop_tool', async () => {
    const lookup = makeTool('lookup');
    const model = new FnModel(() => ({ calls: [{ name: 'lookup', arguments: { q: 'a' } }, { name: 'task_complete', arguments: { result: 'ok' } }] }));
    const r = await runLoop(input(model, [lookup]));
    expect(r.termination).toBe('stop_tool');
    expect(lookup.calls).toHaveLength(1);
    expect(r.toolResults.map((t) => [t.call.name, t.status])).toEqual([['lookup', 'ok'], ['task_complete', 'ok']]);
  });

  it('no_action at step 1: 1 model call, no_action, nothing to post', async () => {
    const model = new FnModel(() => ({ calls: [{ name: 'no_action', arguments: { reason: 'nothing new' } }] }));
    const r = await runLoop(input(model, []));
    expect(r).toMatchObject({ termination: 'no_action', text: '', modelCalls: 1, posted: false });
  });
});

describe('token budget', () => {
  it('budget 10k with 3k per call: 3 calls sent, the 4th refused before sending, reason budget, ledger adds up', async () => {
    const model = new FnModel((req) =>
      req.toolChoice === 'none' ? { content: 'partial answer', usage: { input: 400, output: 50 } } : { calls: [{ name: 'lookup', arguments: { q: String(req.messages.length) } }], usage: { input: 2800, output: 200 } },
    );
    const ev = events();
    const r = await runLoop(input(model, [makeTool('lookup')], { maxRunTokens: 10_000, maxTokens: 500, events: ev }));
    expect(r.termination).toBe('budget');
    expect(r.partial).toBe(true);
    const regular = model.requests.filter((q) => q.toolChoice !== 'none');
    expect(regular).toHaveLength(3);
    expect(model.requests).toHaveLength(4); // the wrap-up, on the reserved margin
    expect(r.usage.inputTokens + r.usage.outputTokens).toBeLessThanOrEqual(10_000);
    const sum = r.ledger.reduce((a, e) => ({ i: a.i + e.inputTokens, o: a.o + e.outputTokens }), { i: 0, o: 0 });
    expect(sum).toEqual({ i: r.usage.inputTokens, o: r.usage.outputTokens });
    expect(r.ledger.map((e) => e.inputTokens + e.outputTokens)).toEqual([3000, 3000, 3000, 450]);
    expect(ev.events.filter((e) => e.type === 'budget_update')).toHaveLength(4);
    expect(r.costUsd).toBeGreaterThan(0);
  });

  it('a wrap-up that would not fit in what is left is skipped, still a typed budget ending', async () => {
    const model = new FnModel(() => ({ calls: [{ name: 'lookup', arguments: { q: 'z' } }], usage: { input: 4900, output: 100 } }));
    const r = await runLoop(input(model, [makeTool('lookup')], { maxRunTokens: 10_000, maxTokens: 500 }));
    expect(r.termination).toBe('budget');
    expect(model.requests).toHaveLength(2);
  });
});

describe('deadline and abort', () => {
  it('max_duration: a slow tool runs into the deadline, the run ends with deadline and a partial answer', async () => {
    const slow = makeTool('slow', { run: (_a, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve({ status: 'error', content: 'stopped' }))) });
    const model = new FnModel((req) => (req.toolChoice === 'none' ? { content: 'ran out of time; partial' } : { content: 'starting', calls: [{ name: 'slow', arguments: {} }] }));
    const started = Date.now();
    const r = await runLoop(input(model, [slow], { maxDurationMs: 600 }));
    expect(r.termination).toBe('deadline');
    expect(r.partial).toBe(true);
    expect(r.text).toBe('ran out of time; partial');
    expect(r.toolResults[0]?.status).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('an abort ends with aborted, every call answered, no exception', async () => {
    const ac = new AbortController();
    const slow = makeTool('slow', { run: () => new Promise(() => undefined) }); // ignores its signal entirely
    const model = new FnModel(() => ({ calls: [{ name: 'slow', arguments: {} }, { name: 'slow', arguments: { q: 'b' } }] }));
    setTimeout(() => ac.abort(), 100);
    const r = await runLoop(input(model, [slow], { signal: ac.signal }));
    expect(r.termination).toBe('aborted');
    expect(r.toolResults.map((t) => t.status)).toEqual(['cancelled', 'cancelled']);
  });

  it('a non-retryable model failure ends with error and the message, not an exception', async () => {
    const model = new FnModel(() => {
      throw new Error('boom');
    });
    const r = await runLoop(input(model, []));
    expect(r.termination).toBe('error');
    expect(r.error?.message).toContain('boom');
  });
});

describe('prompt estimate', () => {
  // The size of the tools offered is measured per definition (most are constants offered to every run), and must
  // still be exactly the size of the list as sent.
  const a = taskCompleteTool.definition;
  const b = noActionTool.definition;
  const fresh: ToolDefinition = { name: 'lookup', description: 'Looks up "a thing" — once.', parameters: { type: 'object', properties: { q: { type: 'string' } } } };
  it.each([
    ['none', []],
    ['one', [a]],
    ['two', [a, b]],
    ['three, one made now', [a, fresh, b]],
    ['the same definition twice', [b, b]],
  ])('tool size of %s is the JSON size of the list', (_name, tools) => {
    expect(toolChars(tools)).toBe(JSON.stringify(tools).length);
    expect(toolChars([...tools])).toBe(JSON.stringify(tools).length); // a new list of known definitions
  });
});
