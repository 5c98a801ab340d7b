// Loop guards (docs/agent-loop.md R2): repeats, the error breakers, unknown tools, the truth of every warning the
// model is sent, empty tool-call finishes.
import { describe, expect, it } from 'vitest';
import { noActionTool, taskCompleteTool } from '../agent-loop/builtin-tools.ts';
import type { ChatMessage } from '../agent-loop/messages.ts';
import { canonicalJson, fingerprint } from '../agent-loop/loop-guard.ts';
import { runLoop, type LoopInput } from '../agent-loop/loop.ts';
import { ToolRegistry, type Tool } from '../agent-loop/tools.ts';
import { events, FnModel, LoopGuard, makeTool, pairingProblems } from './support/loop-kit.ts';
import { Prng } from './support/prng.ts';

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
    const fail = { call, status: 'error' as const, content: 'e' };
    // One reply, one count: identical failures in a reply are one (docs/agent-loop.md R2, "in a row").
    expect(g.afterResults([fail, fail]).kind).toBe('ok');
    expect(g.afterResults([fail]).kind).not.toBe('stop');
    expect(g.afterResults([{ call, status: 'ok', content: 'fine' }]).kind).toBe('ok');
    expect(g.afterResults([fail]).kind).toBe('ok');
    expect(g.afterResults([fail]).kind).not.toBe('stop');
    expect(g.afterResults([fail])).toMatchObject({ kind: 'stop', termination: 'circuit_open', message: expect.stringMatching(/failed 3 times/) as string });
  });

  it('two different failing calls, alternating, trip the failed-steps breaker at the 3rd failed step', async () => {
    const a = makeTool('fetch_a', { run: () => ({ status: 'error', content: 'a is down' }) });
    const b = makeTool('fetch_b', { run: () => ({ status: 'error', content: 'b is down' }) });
    const ev = events();
    const model = new FnModel((_r, n) => ({ calls: [{ name: n % 2 ? 'fetch_a' : 'fetch_b', arguments: { q: 'x' } }] }));
    const r = await runLoop(input(model, [a, b], { events: ev, maxSteps: 10 }));
    expect(r.termination).toBe('circuit_open');
    expect(model.requests).toHaveLength(3);
    expect([a.calls.length, b.calls.length]).toEqual([2, 1]);
    // Before the step that ended it, the model was told, truly, that one more failed step ends the run.
    expect(lastNotes(model.requests[2]!.messages).some((m) => /ends the run/.test(m))).toBe(true);
    // The stop is told once, under the breaker's name (issue 28 item 4: it was also an `error` event, printed twice).
    expect(ev.events.filter((e) => e.type === 'loop_warning' && /3 steps in a row/.test(e.message)).map((e) => e.type === 'loop_warning' && e.kind)).toEqual(['failed_steps']);
    expect(ev.events.filter((e) => e.type === 'error')).toEqual([]);
  });

  it('a step where one call succeeds is not a failed step', async () => {
    const broken = makeTool('fetch_a', { run: (args) => ({ status: 'error', content: `down for ${String(args.q)}` }) });
    // Odd steps fail outright, even steps fail one call and succeed another: never two failed steps in a row.
    const model = new FnModel((_r, n) => ({ calls: [{ name: 'fetch_a', arguments: { q: `q${n}` } }, ...(n % 2 ? [] : [{ name: 'lookup', arguments: { q: `q${n}` } }])] }));
    const r = await runLoop(input(model, [broken, makeTool('lookup')], { maxSteps: 8 }));
    expect(r.termination).toBe('max_steps');
    expect(r.steps).toBe(8);
  });
});

describe('unknown tools', () => {
  it('five identical calls to a tool that does not exist end with loop_detected well before max_steps, each a real call in the events', async () => {
    const ev = events();
    const model = new FnModel((_r, n) => (n <= 5 ? { calls: [{ name: 'ghost_tool', arguments: { q: 'x' } }] } : { content: 'done' }));
    const r = await runLoop(input(model, [makeTool('lookup')], { events: ev, maxSteps: 10 }));
    expect(r.termination).toBe('loop_detected');
    expect(model.requests.length).toBeLessThanOrEqual(3);
    const calls = ev.events.filter((e) => e.type === 'tool_call');
    const results = ev.events.filter((e) => e.type === 'tool_result');
    expect(calls.map((e) => e.type === 'tool_call' && e.name)).toEqual(Array(model.requests.length).fill('ghost_tool'));
    expect(results.map((e) => e.type === 'tool_result' && e.status)).toEqual(Array(model.requests.length).fill('unknown_tool'));
    expect(r.toolResults.map((t) => t.status)).toEqual(Array(model.requests.length).fill('unknown_tool'));
    // The invented name is never echoed as an assistant tool call, and every request is valid for the API.
    for (const req of model.requests) {
      expect(pairingProblems(req.messages)).toEqual([]);
      for (const m of req.messages) if (m.role === 'assistant') expect(m.toolCalls ?? []).toEqual([]);
    }
    expect(lastNotes(model.requests[1]!.messages).join('\n')).toMatch(/does not exist\. Available tools: lookup/);
  });

  it('different unknown tools, one per step, trip the failed-steps breaker', async () => {
    const model = new FnModel((_r, n) => ({ calls: [{ name: `ghost_${n}_tool`, arguments: {} }] }));
    const r = await runLoop(input(model, [makeTool('lookup')], { maxSteps: 10 }));
    expect(r.termination).toBe('loop_detected');
    expect(model.requests).toHaveLength(3);
  });

  it('an unknown call beside a registered one: results in reply order, only the registered call goes back to the provider', async () => {
    const ev = events();
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ id: 'u1', name: 'ghost_tool', arguments: { q: 'x' } }, { id: 'k1', name: 'lookup', arguments: { q: 'y' } }] } : { content: 'done' }));
    const r = await runLoop(input(model, [makeTool('lookup')], { events: ev }));
    expect(r).toMatchObject({ termination: 'final', text: 'done' });
    expect(r.toolResults.map((t) => [t.call.id, t.status])).toEqual([['u1', 'unknown_tool'], ['k1', 'ok']]);
    const second = model.requests[1]!.messages;
    expect(pairingProblems(second)).toEqual([]);
    expect(second.filter((m) => m.role === 'assistant').flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : []))).toEqual(['k1']);
  });
});

/** The user messages sent after the last assistant message of a request: the notes on the step just run. */
function lastNotes(messages: readonly ChatMessage[]): string[] {
  const from = messages.findLastIndex((m) => m.role === 'assistant');
  return messages.slice(from + 1).flatMap((m) => (m.role === 'user' ? [m.content] : []));
}

describe('warnings are always true', () => {
  // One call per reply from a small alphabet (successes, failures, an unknown tool), often repeating the last
  // one. Every "… ends the run" the model is sent is then checked against what the run did next.
  const CALLS = [
    { name: 'ok_a', arguments: { q: '1' } },
    { name: 'ok_a', arguments: { q: '2' } },
    { name: 'ok_b', arguments: { q: '1' } },
    { name: 'bad_a', arguments: { q: '1' } },
    { name: 'bad_a', arguments: { q: '2' } },
    { name: 'bad_b', arguments: { q: '1' } },
    { name: 'ghost', arguments: { q: '1' } },
  ];
  const fails = (c: { name: string }): boolean => !c.name.startsWith('ok_');
  const same = (a: (typeof CALLS)[number], b: (typeof CALLS)[number]): boolean => fingerprint(a) === fingerprint(b);

  it('over 300 seeded runs, the next identical call or failed step really ends the run whenever the model was told so', async () => {
    const tools = [makeTool('ok_a'), makeTool('ok_b'), makeTool('bad_a', { run: () => ({ status: 'error', content: 'broken' }) }), makeTool('bad_b', { run: () => ({ status: 'error', content: 'broken' }) })];
    // Claims made, and claims put to the test (the model did what it was warned about).
    const claims = { repeat: 0, repeatTested: 0, failedTested: 0 };
    for (let seed = 1; seed <= 300; seed++) {
      const prng = new Prng(seed);
      const seq: Array<(typeof CALLS)[number]> = [];
      for (let i = 0; i < 12; i++) seq.push(i > 0 && prng.chance(0.4) ? seq[i - 1]! : prng.pick(CALLS));
      const model = new FnModel((_r, n) => (n <= seq.length ? { calls: [seq[n - 1]!] } : { content: 'done' }));
      const r = await runLoop(input(model, tools, { maxSteps: 12 }));
      const ended = { steps: r.steps, guardStop: r.termination === 'loop_detected' || r.termination === 'circuit_open' };
      for (let k = 1; k < Math.min(r.steps, model.requests.length); k++) {
        // Request k+1 carries the notes on step k.
        for (const note of lastNotes(model.requests[k]!.messages).filter((m) => /ends the run|the run ends/i.test(m))) {
          const where = `seed ${seed}, after step ${k}: ${note}`;
          if (/repeating/i.test(note)) {
            // "Calling it again with the same arguments ends the run, unless another call succeeds first."
            claims.repeat++;
            for (let t = k + 1; t <= r.steps; t++) {
              if (same(seq[t - 1]!, seq[k - 1]!)) {
                claims.repeatTested++;
                expect(ended, where).toEqual({ steps: t, guardStop: true });
                break;
              }
              if (!fails(seq[t - 1]!)) break;
            }
          } else {
            // "One more step in which every call fails ends the run."
            if (k + 1 <= r.steps && fails(seq[k]!)) {
              claims.failedTested++;
              expect(ended, where).toEqual({ steps: k + 1, guardStop: true });
            }
          }
        }
      }
    }
    expect(claims.repeat).toBeGreaterThan(50);
    expect(claims.repeatTested).toBeGreaterThan(20);
    expect(claims.failedTested).toBeGreaterThan(20);
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
