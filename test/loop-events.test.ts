// The event stream (docs/agent-loop.md R13): the sequence of a scripted run is frozen here, so a change to what a
// run reports is a visible diff.
import { describe, expect, it } from 'vitest';
import { taskCompleteTool } from '../agent-loop/builtin-tools.ts';
import { runLoop } from '../agent-loop/loop.ts';
import { resolveToolMode } from '../agent-loop/tool-modes.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { events, FnModel, makeTool } from './support/loop-kit.ts';

const GOLDEN = [
  'user_message {"text":"t","chars":1}',
  'step_start {"step":1,"max_steps":4}',
  'model_call {"model":"m","attempt":1}',
  'model_result {"usage":{"inputTokens":10,"outputTokens":5,"cachedTokens":0},"finish_reason":"tool_calls"}',
  'budget_update {"used_tokens":15,"max_tokens":100000,"cost_usd":0.000105}',
  'progress {"step":1,"max_steps":4,"action":"tool_call","target":"lookup"}',
  'tool_call {"id":"a1","name":"lookup","arguments":{"q":"x"}}',
  'progress {"step":1,"max_steps":4,"action":"tool_call","target":"lookup"}',
  'tool_call {"id":"a2","name":"lookup","arguments":{"q":"y"}}',
  'tool_result {"id":"a1","name":"lookup","status":"ok","excerpt":"lookup result for {\\"q\\":\\"x\\"}"}',
  'tool_result {"id":"a2","name":"lookup","status":"ok","excerpt":"lookup result for {\\"q\\":\\"y\\"}"}',
  'step_start {"step":2,"max_steps":4}',
  'model_call {"model":"m","attempt":1}',
  'model_result {"usage":{"inputTokens":10,"outputTokens":5,"cachedTokens":0},"finish_reason":"tool_calls"}',
  'budget_update {"used_tokens":30,"max_tokens":100000,"cost_usd":0.00021}',
  'progress {"step":2,"max_steps":4,"action":"tool_call","target":"task_complete"}',
  'tool_call {"id":"a3","name":"task_complete","arguments":{"result":"done"}}',
  'tool_result {"id":"a3","name":"task_complete","status":"ok","excerpt":"Task marked complete."}',
  'agent_response {"text":"done","partial":false}',
  'activation_end {"termination":"stop_tool","partial":false,"usage":{"inputTokens":20,"outputTokens":10,"cachedTokens":0}}',
];

describe('event stream', () => {
  it('a scripted run gives the frozen sequence, numbered from 1, all with the activation id', async () => {
    const model = new FnModel((_r, n) =>
      n === 1 ? { calls: [{ id: 'a1', name: 'lookup', arguments: { q: 'x' } }, { id: 'a2', name: 'lookup', arguments: { q: 'y' } }] } : { calls: [{ id: 'a3', name: 'task_complete', arguments: { result: 'done' } }] },
    );
    const ev = events('act_golden');
    await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 4, signal: new AbortController().signal, events: ev, tools: new ToolRegistry([makeTool('lookup'), taskCompleteTool], []) });
    const lines = ev.events.map(({ type, seq: _s, activation_id: _a, ts: _t, ...rest }) => `${type} ${JSON.stringify(rest)}`);
    expect(lines).toEqual(GOLDEN);
    expect(ev.events.map((e) => e.seq)).toEqual(GOLDEN.map((_, i) => i + 1));
    expect(new Set(ev.events.map((e) => e.activation_id))).toEqual(new Set(['act_golden']));
  });

  it('auto tool mode is native unless the model is known to lack tools', () => {
    expect(resolveToolMode('auto')).toBe('native');
    expect(resolveToolMode('auto', true)).toBe('text');
    expect(resolveToolMode('text')).toBe('text');
  });
});
