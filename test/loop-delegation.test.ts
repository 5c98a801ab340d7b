// Delegation (docs/agent-loop.md R8): delegate_to_<agent> runs the delegate as its own activation; cycles and depth
// are refused visibly; the child's budget is carved out of the parent's; aborting the parent stops the child.
import { describe, expect, it } from 'vitest';
import { delegationRefusal, delegationTools, MAX_NESTED_EVENTS, nestedEvents } from '../agent-loop/delegation.ts';
import { formatEvents } from '../daemon/ops/logs.ts';
import { EventLog, type ActivationEvent } from '../agent-loop/events.ts';
import { runLoop } from '../agent-loop/loop.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { LlmExecutor } from '../executors/llm/llm-executor.ts';
import { AgentConfigSchema, type ScriptedReply } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { events as newEvents, FnModel } from './support/loop-kit.ts';

function agent(name: string, responses: ScriptedReply[], extra: { delegates?: string[]; maxTokens?: number } = {}): AgentDefinition {
  const config = AgentConfigSchema.parse({
    name,
    type: 'llm',
    brain: { provider: 'scripted', model: `scripted-${name}`, responses, max_tokens: 100 },
    capabilities: { delegates: extra.delegates ?? [] },
    behavior: { max_tokens: extra.maxTokens ?? 100_000 },
  });
  return { name, config, systemPrompt: `You are ${name}.`, files: { config: 'c', prompt: 'p' } };
}

function executorFor(defs: AgentDefinition[]): LlmExecutor {
  const byName = new Map(defs.map((d) => [d.name, d]));
  return new LlmExecutor({ secret: () => undefined, agents: { get: (n) => byName.get(n) } });
}

async function run(ex: LlmExecutor, def: AgentDefinition, signal = new AbortController().signal): Promise<{ result: Awaited<ReturnType<LlmExecutor['run']>>; events: ActivationEvent[] }> {
  const events = new EventLog('act_parent');
  const result = await ex.run({ id: 'act_parent', definition: def, context: { system: 's', task: 'do it' }, events, signal });
  return { result, events: events.events };
}

describe('delegation', () => {
  it('A→B works end to end: B answers as its own activation, A gets the answer and is charged for it', async () => {
    const a = agent('agent-a', [{ tool_calls: [{ name: 'delegate_to_agent_b', arguments: { task: 'say hi' } }], usage: { prompt_tokens: 100, completion_tokens: 10 } }, { content: 'B says hi', usage: { prompt_tokens: 100, completion_tokens: 10 } }], { delegates: ['agent-b'] });
    const b = agent('agent-b', [{ content: 'hi from b', usage: { prompt_tokens: 50, completion_tokens: 5 } }]);
    const { result, events } = await run(executorFor([a, b]), a);
    expect(result).toMatchObject({ termination: 'final', text: 'B says hi' });
    expect(events.find((e) => e.type === 'delegation_request')).toMatchObject({ agent: 'agent-b', task: 'say hi', depth: 1 });
    expect(events.find((e) => e.type === 'delegation_response')).toMatchObject({ agent: 'agent-b', termination: 'final', excerpt: 'hi from b', tokens: 55 });
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ name: 'delegate_to_agent_b', status: 'ok', excerpt: 'hi from b' });
    // The child's model call is on the parent's bill.
    expect(result.usage).toMatchObject({ inputTokens: 250, outputTokens: 25 });
  });

  it('a delegation is reported as progress action "delegate" naming the agent, as seed 001 does (issue 28 item 4)', async () => {
    const a = agent('agent-a', [{ tool_calls: [{ name: 'delegate_to_agent_b', arguments: { task: 'say hi' } }, { name: 'budget_check', arguments: {} }] }, 'done'], { delegates: ['agent-b'] });
    const b = agent('agent-b', ['hi from b']);
    const { events } = await run(executorFor([a, b]), a);
    const progress = events.flatMap((e) => (e.type === 'progress' ? [{ action: e.action, target: e.target }] : []));
    expect(progress[0]).toEqual({ action: 'delegate', target: 'agent-b' });
    expect(progress[1]).toEqual({ action: 'tool_call', target: 'budget_check' });
  });

  it("the delegate's own steps are kept in the parent's record, nested and bounded, and warren logs --events shows them (issue 28 item 4)", async () => {
    const a = agent('agent-a', [{ tool_calls: [{ name: 'delegate_to_agent_b', arguments: { task: 'look it up' } }] }, 'done'], { delegates: ['agent-b'] });
    const b = agent('agent-b', [{ tool_calls: [{ name: 'budget_check', arguments: {} }] }, 'found it']);
    const { events } = await run(executorFor([a, b]), a);
    const response = events.find((e) => e.type === 'delegation_response');
    if (response?.type !== 'delegation_response') throw new Error('no delegation_response');
    const nested = response.events ?? [];
    expect(nested.every((e) => e.activation_id === 'act_parent/agent-b')).toBe(true);
    expect(nested.find((e) => e.type === 'tool_call')).toMatchObject({ name: 'budget_check' });
    expect(nested.find((e) => e.type === 'agent_response')).toMatchObject({ text: 'found it' });
    const lines = formatEvents({ events });
    const at = lines.findIndex((l) => l.includes('delegation_response'));
    expect(lines[at]).not.toContain('"events"');
    expect(lines.slice(at + 1).find((l) => / tool_call \{/.test(l))).toMatch(/^ {8}#\d+ tool_call \{.*"name":"budget_check"/);

    // Bounded: a delegate that runs long keeps its first MAX_NESTED_EVENTS and says how many more there were.
    const many: ActivationEvent[] = Array.from({ length: MAX_NESTED_EVENTS + 7 }, (_, i) => ({ type: 'step_start' as const, step: i + 1, max_steps: 200, seq: i + 1, activation_id: 'x', ts: '' }));
    expect(nestedEvents(many)).toMatchObject({ events_dropped: 7 });
    expect(nestedEvents(many).events).toHaveLength(MAX_NESTED_EVENTS);
  });

  it('A→B→A is refused with an error the model sees', async () => {
    expect(delegationRefusal(['a', 'b'], 'a')).toBe('cycle: a → b → a is refused');
    expect(delegationRefusal(['a', 'b', 'c'], 'd')).toMatch(/depth limit/);
    expect(delegationRefusal(['a', 'b'], 'c')).toBeUndefined();
    // B, running as A's delegate (chain a → b), asks for A: the call fails visibly, nothing runs.
    let started = 0;
    const ev = newEvents('act_b');
    const tools = delegationTools({ delegates: ['a'], chain: ['a', 'b'], events: ev, run: () => (started++, Promise.resolve({ text: '', termination: 'final', ledger: [], failed: false })) });
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ name: 'delegate_to_a', arguments: { task: 'loop back' } }] } : { content: 'ok, I will not' }));
    const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 3, signal: new AbortController().signal, events: ev, tools: new ToolRegistry(tools, []) });
    expect(started).toBe(0);
    expect(r.toolResults[0]).toMatchObject({ status: 'error', content: 'Delegation failed: cycle: a → b → a is refused.' });
    expect(JSON.stringify(model.requests[1]!.messages)).toContain('cycle: a → b → a');
    expect(ev.events.some((e) => e.type === 'delegation_error')).toBe(true);
  });

  it('A→B→A end to end through the executor: the cycle never starts A again', async () => {
    const a = agent('agent-a', [{ tool_calls: [{ name: 'delegate_to_agent_b', arguments: { task: 'ask A back' } }] }, 'A done'], { delegates: ['agent-b'] });
    const b = agent('agent-b', [{ tool_calls: [{ name: 'delegate_to_agent_a', arguments: { task: 'cycle' } }] }, 'B gave up on the cycle'], { delegates: ['agent-a'] });
    const { result, events } = await run(executorFor([a, b]), a);
    expect(result).toMatchObject({ termination: 'final', text: 'A done' });
    // Had the cycle run, A's scripted replies would have been consumed twice and a request for A would show up here.
    expect(events.filter((e) => e.type === 'delegation_request').map((e) => (e.type === 'delegation_request' ? e.agent : ''))).toEqual(['agent-b']);
    expect(events.find((e) => e.type === 'delegation_response')).toMatchObject({ excerpt: 'B gave up on the cycle' });
  });

  // B's first call spends 500 tokens; its second would take 5 s.
  const slowB = () => agent('agent-b', [{ tool_calls: [{ name: 'no_such_tool', arguments: {} }], usage: { prompt_tokens: 400, completion_tokens: 100 } }, { content: 'too late', delay_ms: 5_000 }]);
  const waitingA = () => agent('agent-a', [{ tool_calls: [{ name: 'delegate_to_agent_b', arguments: { task: 'dig' } }], usage: { prompt_tokens: 100, completion_tokens: 10 } }, { content: 'A went on', usage: { prompt_tokens: 100, completion_tokens: 10 } }], { delegates: ['agent-b'] });

  it('under a step limit the delegate gets only what the step has left, wraps up in time, and is charged', async () => {
    const [a, b] = [waitingA(), slowB()];
    const byName = new Map([a, b].map((d) => [d.name, d]));
    const ex = new LlmExecutor({ secret: () => undefined, agents: { get: (n) => byName.get(n) }, stepTimeoutMs: 600 });
    const started = Date.now();
    const { result, events } = await run(ex, a);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(events.find((e) => e.type === 'delegation_request')).toMatchObject({ max_duration_ms: expect.any(Number) as number });
    expect((events.find((e) => e.type === 'delegation_request') as { max_duration_ms: number }).max_duration_ms).toBeLessThanOrEqual(600);
    expect(result).toMatchObject({ termination: 'final', text: 'A went on' });
    expect(result.usage.inputTokens).toBeGreaterThanOrEqual(600); // A's two calls and B's first (and B's wrap-up, if any)
  });

  it('a delegate cancelled with its parent is still charged for what it spent', async () => {
    const [a, b] = [waitingA(), slowB()];
    const byName = new Map([a, b].map((d) => [d.name, d]));
    const ex = new LlmExecutor({ secret: () => undefined, agents: { get: (n) => byName.get(n) } });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const { result, events } = await run(ex, a, ac.signal);
    expect(result.termination).toBe('aborted');
    expect(events.find((e) => e.type === 'tool_result')).toMatchObject({ name: 'delegate_to_agent_b', status: 'cancelled' });
    expect(result.usage).toMatchObject({ inputTokens: 500, outputTokens: 110 }); // A's first call and B's first
  });

  it('the child cannot exceed its carved budget', async () => {
    const spend = { tool_calls: [{ name: 'no_such_tool', arguments: {} }], usage: { prompt_tokens: 800, completion_tokens: 100 } };
    const a = agent('agent-a', [{ tool_calls: [{ name: 'delegate_to_agent_b', arguments: { task: 'spend' } }], usage: { prompt_tokens: 1000, completion_tokens: 0 } }, { content: 'ok', usage: { prompt_tokens: 10, completion_tokens: 1 } }], { delegates: ['agent-b'], maxTokens: 3500 });
    // B on its own has 100k tokens and would go on to its third reply; carved, it is stopped before.
    const b = agent('agent-b', [spend, spend, { content: 'best so far', usage: { prompt_tokens: 60, completion_tokens: 20 } }, spend, spend]);
    const { events } = await run(executorFor([a, b]), a);
    const req = events.find((e) => e.type === 'delegation_request');
    const res = events.find((e) => e.type === 'delegation_response');
    if (req?.type !== 'delegation_request' || res?.type !== 'delegation_response') throw new Error('no delegation');
    expect(req.max_tokens).toBe(3500 - 350 - 1000);
    expect(res.termination).toBe('budget');
    expect(res.tokens).toBeLessThanOrEqual(req.max_tokens);
  });

  it('aborting the parent cancels the child within 500 ms', async () => {
    const a = agent('agent-a', [{ tool_calls: [{ name: 'delegate_to_agent_b', arguments: { task: 'slow' } }] }, 'never'], { delegates: ['agent-b'] });
    const b = agent('agent-b', [{ content: 'late', delay_ms: 10_000 }]);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const started = Date.now();
    const { result } = await run(executorFor([a, b]), a, ac.signal);
    expect(result.termination).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(600);
  });
});
