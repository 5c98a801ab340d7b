// Loop guards (agent-loop.md R2): repeats, the error breaker, empty tool-call finishes.
import { describe, expect, it } from 'vitest';
import { noActionTool, taskCompleteTool } from '../agent-loop/builtin-tools.ts';
import { canonicalJson, fingerprint, LoopGuard } from '../agent-loop/loop-guard.ts';
import { runLoop, type LoopInput } from '../agent-loop/loop.ts';
import { ToolRegistry, type Tool } from '../agent-loop/tools.ts';
import { events, FnModel, makeTool } from './support/loop-kit.ts';

function input(model: FnModel, tools: Tool[], extra: Partial<LoopInput> = {}): LoopInput {
  return { model, modelName: 'm', system: 's', task: 't', maxSteps: 10, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([...tools, taskCompleteTool, noActionTool], []), ...extra };
}

describe('fingerprints', () => {
  it('are the name plus canonical JSON: key order does not matter, values do', () => {
    expect(fingerprint({ name: 'a', arguments: { x: 1, y: { b: 2, a: [1, { d: 1, c: 2 }] } } })).toBe(fingerprint({ name: 'a', arguments: { y: { a: [1, { c: 2, d: 1 }], b: 2 }, x: 1 } }));
    expect(fingerprint({ name: 'a', arguments: { x: 1 } })).not.toBe(fingerprint({ name: 'a', arguments: { x: 2 } }));
    expect(canonicalJson({ b: 1, a: undefined })).toBe('{"b":1}');
  });
});

describe('repeated calls', () => {
  it('one identical call repeated forever ends within 4 model calls with loop_detected, after a nudge', async () => {
    const lookup = makeTool('lookup');
    const ev = events();
    const model = new FnModel(() => ({ calls: [{ name: 'lookup', arguments: { q: 'same' } }] }));
    const r = await runLoop(input(model, [lookup], { events: ev }));
    expect(r.termination).toBe('loop_detected');
    expect(r.text).toBe('');
    expect(model.requests.length).toBeLessThanOrEqual(4);
    expect(lookup.calls).toHaveLength(3); // the 4th is rejected, not run
    expect(r.toolResults.at(-1)?.status).toBe('rejected');
    const warnings = ev.events.filter((e) => e.type === 'loop_warning' && e.kind === 'repeat');
    expect(warnings).toHaveLength(2); // the nudge at the 3rd, the stop at the 4th
    // The nudge reached the model before the 4th call.
    expect(JSON.stringify(model.requests[3]!.messages)).toContain('You are repeating the call lookup');
  });

  it('argument order does not hide a repeat', async () => {
    let n = 0;
    const model = new FnModel(() => ({ calls: [{ name: 'lookup', arguments: ++n % 2 ? { a: 1, b: 2 } : { b: 2, a: 1 } }] }));
    const r = await runLoop(input(model, [makeTool('lookup', { parameters: { type: 'object' } })]));
    expect(r.termination).toBe('loop_detected');
  });

  it('two alternating, distinct, successful calls are not flagged within 10 steps', async () => {
    const ev = events();
    const model = new FnModel((_req, n) => ({ calls: [{ name: 'lookup', arguments: { q: n % 2 ? 'a' : 'b' } }] }));
    const r = await runLoop(input(model, [makeTool('lookup')], { events: ev, maxSteps: 10 }));
    expect(r.termination).toBe('max_steps');
    expect(r.steps).toBe(10);
    expect(ev.events.filter((e) => e.type === 'loop_warning' && e.kind === 'repeat')).toHaveLength(0);
  });

  it('repeats outside the 5-step window do not count', () => {
    const g = new LoopGuard();
    const call = { id: 'x', name: 't', arguments: {} };
    expect(g.beforeCalls(1, [call]).kind).toBe('ok');
    expect(g.beforeCalls(2, [call]).kind).toBe('ok');
    expect(g.beforeCalls(8, [call]).kind).toBe('ok');
    expect(g.beforeCalls(9, [call]).kind).toBe('ok');
    expect(g.beforeCalls(10, [call]).kind).toBe('nudge');
  });
});

describe('error breaker', () => {
  it('three identical consecutive tool errors end the run with circuit_open', async () => {
    const broken = makeTool('broken', { run: () => ({ status: 'error', content: 'disk on fire' }) });
    // The breaker (3 identical errors) trips before the repeat guard (4 identical calls) would.
    const model = new FnModel(() => ({ calls: [{ name: 'broken', arguments: { q: 'x' } }] }));
    const r = await runLoop(input(model, [broken]));
    expect(r.termination).toBe('circuit_open');
    expect(broken.calls).toHaveLength(3);
  });

  it('a success in between resets the breaker', () => {
    const g = new LoopGuard();
    const call = { id: 'x', name: 't', arguments: {} };
    const fail = { call, ok: false, content: 'e' };
    expect(g.afterResults([fail, fail])).toBeUndefined();
    expect(g.afterResults([{ call, ok: true, content: 'fine' }])).toBeUndefined();
    expect(g.afterResults([fail, fail])).toBeUndefined();
    expect(g.afterResults([fail])).toMatch(/failed 3 times/);
  });
});

describe('empty finishes', () => {
  it('a "tool_calls" finish with no calls makes exactly 1 model call and is final', async () => {
    const model = new FnModel(() => ({ content: 'Here you go.', finishReason: 'tool_calls' }));
    const r = await runLoop(input(model, [makeTool('lookup')]));
    expect(r).toMatchObject({ termination: 'final', text: 'Here you go.', modelCalls: 1 });
  });

  it('an empty reply is final with a format warning, nothing to post', async () => {
    const ev = events();
    const model = new FnModel(() => ({ content: '' }));
    const r = await runLoop(input(model, [], { events: ev }));
    expect(r).toMatchObject({ termination: 'final', text: '' });
    expect(ev.events.some((e) => e.type === 'loop_warning' && e.kind === 'format')).toBe(true);
  });

  it('a sentinel reply counts as no_action', async () => {
    const r = await runLoop(input(new FnModel(() => ({ content: 'NO_ACTION' })), []));
    expect(r.termination).toBe('no_action');
  });
});
