// Identical mutating calls run once per activation (docs/agent-loop.md R2, "Duplicates"), and what "in a row"
// means for the guards: a reply is one decision, so identical calls in one reply count once.
import { describe, expect, it } from 'vitest';
import { noActionTool, taskCompleteTool } from '../agent-loop/builtin-tools.ts';
import { runLoop, type LoopInput } from '../agent-loop/loop.ts';
import { ToolRegistry, type Tool } from '../agent-loop/tools.ts';
import { events, FnModel, LoopGuard, makeTool, pairingProblems, type Turn } from './support/loop-kit.ts';

function input(model: FnModel, tools: Tool[], extra: Partial<LoopInput> = {}): LoopInput {
  return { model, modelName: 'm', system: 's', task: 't', maxSteps: 10, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([...tools, taskCompleteTool, noActionTool], []), ...extra };
}

const script = (...turns: Turn[]): FnModel => new FnModel((_r, n) => turns[n - 1] ?? { content: 'done' });
const post = (content: string): { name: string; arguments: Record<string, unknown> } => ({ name: 'hub_post', arguments: { content } });

describe('identical mutating calls', () => {
  it('four identical hub_post calls in one reply post once; the other three are told they were duplicates, each id paired once', async () => {
    const hubPost = makeTool('hub_post', { readOnly: false, parameters: { type: 'object', properties: { content: { type: 'string' } } } });
    const ev = events();
    const model = script({ calls: [post('hi'), post('hi'), post('hi'), post('hi')] });
    const r = await runLoop(input(model, [hubPost], { events: ev }));
    expect(r.termination).toBe('final');
    expect(hubPost.calls).toHaveLength(1);
    expect(r.toolResults.map((t) => t.status)).toEqual(['ok', 'rejected', 'rejected', 'rejected']);
    const first = r.toolResults[0]!.call.id;
    for (const dup of r.toolResults.slice(1)) expect(dup.content).toMatch(new RegExp(`duplicate of call ${first}`));
    expect(pairingProblems(model.requests[1]!.messages)).toEqual([]);
    expect(ev.events.filter((e) => e.type === 'tool_result')).toHaveLength(4);
  });

  it('across steps, the same hub write again is a duplicate until another hub write was made in between', async () => {
    const hubPost = makeTool('hub_post', { readOnly: false, postsToHub: true, parameters: { type: 'object', properties: { content: { type: 'string' } } } });
    const model = script({ calls: [post('x')] }, { calls: [post('x')] }, { calls: [post('y')] }, { calls: [post('x')] });
    const r = await runLoop(input(model, [hubPost]));
    expect(hubPost.calls.map((a) => a.content)).toEqual(['x', 'y', 'x']);
    expect(r.toolResults.map((t) => t.status)).toEqual(['ok', 'rejected', 'ok', 'ok']);
  });

  it('a failed change is not a reason to refuse the next step\'s identical call (a retry)', async () => {
    let n = 0;
    const flaky = makeTool('hub_post', { readOnly: false, postsToHub: true, parameters: { type: 'object' }, run: () => (++n === 1 ? { status: 'error', content: 'hub down' } : { status: 'ok', content: 'posted' }) });
    const r = await runLoop(input(script({ calls: [post('x')] }, { calls: [post('x')] }), [flaky]));
    expect(flaky.calls).toHaveLength(2);
    expect(r.toolResults.map((t) => t.status)).toEqual(['error', 'ok']);
  });

  it('across steps, another mutating tool (an MCP tool without annotations, say) may repeat: it may be a poll', async () => {
    const status = makeTool('jobs__status', { readOnly: false, parameters: { type: 'object' } });
    const r = await runLoop(input(script({ calls: [{ name: 'jobs__status', arguments: {} }] }, { calls: [{ name: 'jobs__status', arguments: {} }] }), [status]));
    expect(status.calls).toHaveLength(2);
    expect(r.toolResults.map((t) => t.status)).toEqual(['ok', 'ok']);
  });

  it('identical read-only calls all run', async () => {
    const lookup = makeTool('lookup');
    const r = await runLoop(input(script({ calls: [{ name: 'lookup', arguments: { q: 'a' } }, { name: 'lookup', arguments: { q: 'a' } }] }), [lookup]));
    expect(lookup.calls).toHaveLength(2);
    expect(r.toolResults.map((t) => t.status)).toEqual(['ok', 'ok']);
  });
});

describe('"in a row" counts replies', () => {
  it('three identical failing calls in one reply are one failure: the run goes on', async () => {
    const broken = makeTool('broken', { run: () => ({ status: 'error', content: 'disk on fire' }) });
    const same = { name: 'broken', arguments: { q: 'x' } };
    const r = await runLoop(input(script({ calls: [same, same, same] }, { content: 'gave up on the disk' }), [broken]));
    expect(broken.calls).toHaveLength(3);
    expect(r).toMatchObject({ termination: 'final', text: 'gave up on the disk' });
  });

  it('the identical-errors breaker trips at the 3rd reply with the failure, however many copies each reply has', () => {
    const g = new LoopGuard();
    const call = { id: 'x', name: 't', arguments: {} };
    const fail = { call, status: 'error' as const, content: 'e' };
    expect(g.afterResults([fail, fail, fail]).kind).toBe('ok');
    expect(g.afterResults([fail, fail]).kind).not.toBe('stop');
    expect(g.afterResults([fail])).toMatchObject({ kind: 'stop', termination: 'circuit_open', message: expect.stringMatching(/failed 3 times in a row, one reply after another/) as string });
  });
});

describe('each guard names itself in its events (issue 28 item 4)', () => {
  const warningKinds = (ev: ReturnType<typeof events>): string[] => ev.events.flatMap((e) => (e.type === 'loop_warning' ? [e.kind] : []));

  it('the identical-errors breaker and the failed-steps breaker warn and stop under their own names', async () => {
    const broken = makeTool('broken', { run: () => ({ status: 'error', content: 'disk on fire' }) });
    const same = new FnModel(() => ({ calls: [{ name: 'broken', arguments: { q: 'x' } }] }));
    const ev1 = events();
    expect((await runLoop(input(same, [broken], { events: ev1 }))).termination).toBe('circuit_open');
    // The failed-steps warning after the 2nd reply, then the identical-errors stop at the 3rd.
    expect(warningKinds(ev1)).toEqual(['failed_steps', 'identical_errors']);

    const varied = new FnModel((_r, n) => ({ calls: [{ name: 'broken', arguments: { q: `q${n}` } }] }));
    const ev2 = events();
    expect((await runLoop(input(varied, [broken], { events: ev2 }))).termination).toBe('circuit_open');
    expect(warningKinds(ev2)).toEqual(['failed_steps', 'failed_steps']);
  });

  it('the repeat guard and the duplicate guard name themselves', async () => {
    const hubPost = makeTool('hub_post', { readOnly: false, parameters: { type: 'object' } });
    const ev = events();
    const r = await runLoop(input(script({ calls: [post('x'), post('x')] }), [hubPost], { events: ev }));
    expect(r.termination).toBe('final');
    expect(warningKinds(ev)).toEqual(['duplicate']);
    const lookup = new FnModel(() => ({ calls: [{ name: 'lookup', arguments: { q: 'same' } }] }));
    const ev2 = events();
    await runLoop(input(lookup, [makeTool('lookup')], { events: ev2 }));
    expect(warningKinds(ev2)).toEqual(['repeat', 'repeat']);
  });
});
