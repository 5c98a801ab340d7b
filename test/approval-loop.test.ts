// The loop's side of approvals (agent-loop/approval-gate.ts): a call of a tool that needs approval is not made; the
// run ends `awaiting_approval` with its state, which survives JSON; resumed with an approval the call runs once,
// under the paused activation's idempotency key, before any model call; resumed with a denial the model reads the
// note as the call's result and the loop goes on. The pure rule of which names need approval is a table.
import { describe, expect, it } from 'vitest';
import { approvalRule } from '../agent-loop/approval-rule.ts';
import { callsAwaiting } from '../agent-loop/approval-gate.ts';
import { parseLoopState } from '../agent-loop/loop-state.ts';
import { resumeLoop, runLoop, type LoopInput } from '../agent-loop/loop.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { toolCallKey } from '../policy/idempotency-keys.ts';
import { events, FnModel, makeTool } from './support/loop-kit.ts';

describe('approvalRule', () => {
  const rows: Array<[string[], string, boolean]> = [
    [['hub_post'], 'hub_post', true],
    [['hub_post'], 'hub_reply', false],
    [['hub_*'], 'hub_reply', true],
    [['mcp:github:*'], 'github__create_issue', true],
    [['mcp:github:*'], 'gitlab__create_issue', false],
    [['mcp:github:create_issue'], 'github__create_issue', true],
    [['mcp:github:create_issue'], 'github__list_issues', false],
    [['mcp:my.server:*'], 'my_server__x', true],
    [[], 'hub_post', false],
  ];
  it.each(rows)('%j against %s → %s', (patterns, name, expected) => {
    expect(approvalRule(patterns)(name)).toBe(expected);
  });
  it('does not treat a name\'s dots or brackets as a pattern', () => {
    expect(approvalRule(['a.b'])('axb')).toBe(false);
  });
});

describe('callsAwaiting', () => {
  const call = (id: string, name: string) => ({ id, name, arguments: {} });
  const needs = (n: string) => n === 'post';
  it('lists ready calls of gated tools without a decision', () => {
    const pending = { calls: [{ kind: 'ready' as const, call: call('a', 'post') }, { kind: 'ready' as const, call: call('b', 'read') }, { kind: 'duplicate' as const, call: call('c', 'post'), message: 'dup' }], verdict: { kind: 'ok' as const } };
    expect(callsAwaiting(pending, { needs }).map((c) => c.id)).toEqual(['a']);
    expect(callsAwaiting(pending, { needs, decisions: { a: { kind: 'approved' } } })).toEqual([]);
    expect(callsAwaiting(pending, undefined)).toEqual([]);
    expect(callsAwaiting({ ...pending, verdict: { kind: 'loop_detected', message: 'x' } }, { needs })).toEqual([]);
  });
});

function setup() {
  const keys: string[] = [];
  const post = makeTool('hub_post', { readOnly: false, postsToHub: true, run: (_a, ctx) => (keys.push(ctx.idempotencyKey), { status: 'ok', content: '{"id":"p1"}' }) });
  const search = makeTool('hub_search');
  const model = new FnModel((req, n) => {
    if (n === 1) return { calls: [{ id: 'c1', name: 'hub_search', arguments: { q: 'x' } }] };
    if (n === 2) return { content: 'posting now', calls: [{ id: 'c2', name: 'hub_post', arguments: { q: 'hello' } }] };
    const last = req.messages.at(-2);
    return { content: `done after: ${last?.role === 'tool' ? last.content : '?'}` };
  });
  const input = (id: string): Omit<LoopInput, 'task' | 'resume'> => ({ model, modelName: 'm', system: 'sys', maxSteps: 10, signal: new AbortController().signal, events: events(id), tools: new ToolRegistry([post, search, makeTool('task_complete')], []), approval: { needs: approvalRule(['hub_post']) } });
  return { keys, post, search, model, input };
}

describe('a run that waits for approval', () => {
  it('stops before the gated call, with a state that survives JSON and names the call', async () => {
    const { post, search, model, input } = setup();
    const r = await runLoop({ ...input('act_paused'), task: 'do it' });
    expect(r.termination).toBe('awaiting_approval');
    expect(post.calls).toEqual([]); // no call made
    expect(search.calls).toEqual([{ q: 'x' }]); // the earlier step ran
    expect(model.requests).toHaveLength(2);
    expect(r.paused?.calls.map((c) => [c.id, c.name])).toEqual([['c2', 'hub_post']]);
    const state = parseLoopState(JSON.stringify(r.paused!.state));
    expect(state).toEqual(r.paused!.state);
    expect(state.pending?.calls.map((c) => c.call.id)).toEqual(['c2']);
  });

  it('approved, runs the call once under the paused activation\'s key before asking the model again', async () => {
    const { keys, post, model, input } = setup();
    const r = await runLoop({ ...input('act_paused'), task: 'do it' });
    const state = parseLoopState(JSON.stringify(r.paused!.state));
    const resumed = await resumeLoop(state, { ...input('act_resume'), keyRoot: 'act_paused', approval: { needs: approvalRule(['hub_post']), decisions: { c2: { kind: 'approved' } } } });
    expect(post.calls).toEqual([{ q: 'hello' }]);
    // step 2, first call of its reply: the key the call would have had in the paused activation
    expect(keys).toEqual([toolCallKey('act_paused', 2, 1)]);
    expect(resumed.termination).toBe('final');
    expect(resumed.text).toBe('done after: {"id":"p1"}');
    expect(resumed.posted).toBe(true);
    expect(model.requests).toHaveLength(3);
  });

  it('denied, gives the model the note as the call\'s result and goes on', async () => {
    const { post, input } = setup();
    const r = await runLoop({ ...input('act_paused'), task: 'do it' });
    const resumed = await resumeLoop(r.paused!.state, { ...input('act_resume'), keyRoot: 'act_paused', approval: { needs: approvalRule(['hub_post']), decisions: { c2: { kind: 'denied', note: 'not today' } } } });
    expect(post.calls).toEqual([]);
    expect(resumed.termination).toBe('final');
    expect(resumed.text).toContain('Their note: not today');
    expect(resumed.toolResults.find((t) => t.call.id === 'c2')?.status).toBe('denied');
    expect(resumed.posted).toBe(false);
  });

  it('a second gated call later in the resumed run waits again', async () => {
    const { post, input } = setup();
    const model = new FnModel((_req, n) => (n === 1 ? { calls: [{ id: 'c1', name: 'hub_post', arguments: { q: 'one' } }] } : n === 2 ? { calls: [{ id: 'c9', name: 'hub_post', arguments: { q: 'two' } }] } : { content: 'ok' }));
    const first = await runLoop({ ...input('a1'), model, task: 't' });
    const second = await resumeLoop(first.paused!.state, { ...input('a2'), model, keyRoot: 'a1', approval: { needs: approvalRule(['hub_post']), decisions: { c1: { kind: 'approved' } } } });
    expect(second.termination).toBe('awaiting_approval');
    expect(second.paused?.calls.map((c) => c.id)).toEqual(['c9']);
    expect(post.calls).toEqual([{ q: 'one' }]);
  });
});
