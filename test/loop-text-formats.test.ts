// Text mode takes calls only from the seeds' formats (docs/agent-loop.md R7, "Seed conformance"): KAOS's fenced
// tool_call and delegate blocks (seed 000), a reply that is a {"tool_calls"} object (seed 001), Forge's <tool>
// block (seed 002). Everything else is answer text, whatever tools it names.
import { describe, expect, it } from 'vitest';
import { noActionTool, taskCompleteTool } from '../agent-loop/builtin-tools.ts';
import { runLoop, type LoopInput } from '../agent-loop/loop.ts';
import { ToolRegistry, type Tool } from '../agent-loop/tools.ts';
import { events, FnModel, makeTool } from './support/loop-kit.ts';

function textRun(model: FnModel, tools: Tool[] = [], extra: Partial<LoopInput> = {}): ReturnType<typeof runLoop> {
  return runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 5, signal: new AbortController().signal, events: events(), tools: new ToolRegistry([...tools, taskCompleteTool, noActionTool], []), toolMode: 'text', ...extra });
}

const replies = (...contents: string[]): FnModel => new FnModel((_r, n) => ({ content: contents[n - 1] ?? 'unexpected extra call' }));

describe('samples are answer text (issue 28 item 2)', () => {
  it('a task_complete call shown in a json fence is part of the answer, not the end of the run with the sample\'s result', async () => {
    const answer = 'To finish, the agent writes:\n```json\n{"tool": "task_complete", "arguments": {"result": "SAMPLE"}}\n```\nThat is all.';
    const r = await textRun(replies(answer));
    expect(r).toMatchObject({ termination: 'final', text: answer, toolResults: [] });
  });

  it('a call in a python fence runs nothing', async () => {
    const search = makeTool('hub_search', { parameters: { type: 'object' } });
    const answer = 'Like this:\n```python\nclient.call({"name": "hub_search", "arguments": {"query": "cats"}})\n```';
    const r = await textRun(replies(answer), [search]);
    expect(r).toMatchObject({ termination: 'final', text: answer });
    expect(search.calls).toEqual([]);
  });

  it('prose naming no_action keeps the real answer', async () => {
    const answer = 'No need for {"name": "no_action", "arguments": {"reason": "nothing"}} here: the answer is 42.';
    const r = await textRun(replies(answer));
    expect(r).toMatchObject({ termination: 'final', text: answer });
  });

  it('a KAOS tool_call fence and a seed-001 tool_calls reply are calls', async () => {
    const echo = makeTool('echo', { parameters: { type: 'object' } });
    const r = await textRun(replies('I will use echo.\n\n```tool_call\n{"tool": "echo", "arguments": {"text": "hello"}}\n```', '{"tool_calls": [{"id": "call_1", "name": "echo", "arguments": {"text": "again"}}]}', 'The echo returned: hello'), [echo]);
    expect(r).toMatchObject({ termination: 'final', text: 'The echo returned: hello' });
    expect(echo.calls).toEqual([{ text: 'hello' }, { text: 'again' }]);
  });
});

describe("Forge's <tool> block (issue 28 item 3)", () => {
  it('server_name "local" is a built-in: task_complete ends the run with its result', async () => {
    const reply = 'Done thinking.\n<tool>\n{\n  "server_name": "local",\n  "tool_name": "task_complete",\n  "arguments": {"result": "345"}\n}\n</tool>';
    const r = await textRun(replies(reply));
    expect(r).toMatchObject({ termination: 'stop_tool', text: '345' });
  });

  it('another server_name is that MCP server\'s tool; an unknown server with a built-in tool name is the built-in', async () => {
    const add = makeTool('calc__multiply', { parameters: { type: 'object' } });
    const r = await textRun(
      replies('<tool>{"server_name": "calc", "tool_name": "multiply", "arguments": {"a": 15, "b": 23}}</tool>', '<tool>{"server_name": "nowhere", "tool_name": "task_complete", "arguments": {"result": "done"}}</tool>'),
      [add],
    );
    expect(add.calls).toEqual([{ a: 15, b: 23 }]);
    expect(r).toMatchObject({ termination: 'stop_tool', text: 'done' });
  });

  it('a <tool> block quoted in a fence is a sample', async () => {
    const answer = 'Forge writes calls like:\n```xml\n<tool>{"server_name": "local", "tool_name": "task_complete", "arguments": {"result": "x"}}</tool>\n```';
    const r = await textRun(replies(answer));
    expect(r).toMatchObject({ termination: 'final', text: answer });
  });
});
