// Deterministic repair and validation against the sent schema (docs/agent-loop.md R6), on a corpus of malformed
// calls as models write them; and the text-mode parser (R7).
import { describe, expect, it } from 'vitest';
import { noActionTool, taskCompleteTool } from '../agent-loop/builtin-tools.ts';
import { delegationTools } from '../agent-loop/delegation.ts';
import { parseLenientJson } from '../agent-loop/json-repair.ts';
import { runLoop } from '../agent-loop/loop.ts';
import { parseTextToolCalls } from '../agent-loop/tool-call-parser.ts';
import { prepareCall, repairToolName } from '../agent-loop/tool-repair.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { events, FnModel, makeTool } from './support/loop-kit.ts';

const searchSchema = {
  type: 'object',
  properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1 }, exact: { type: 'boolean' }, score: { type: 'number' } },
  required: ['query'],
  additionalProperties: false,
};
const tools = [makeTool('hub_search', { parameters: searchSchema }), makeTool('hub_get_thread', { parameters: { type: 'object', properties: { post_id: { type: 'string' } }, required: ['post_id'] } })];
const registry = new ToolRegistry([...tools, taskCompleteTool, noActionTool], []);

/** [name as written, arguments as written, expected arguments after repair (undefined: must stay an error)]. */
const CORPUS: Array<[string, unknown, Record<string, unknown> | undefined]> = [
  // JSON text problems
  ['hub_search', '```json\n{"query": "cats"}\n```', { query: 'cats' }],
  ['hub_search', '```\n{"query": "cats"}\n```', { query: 'cats' }],
  ['hub_search', "{'query': 'cats'}", { query: 'cats' }],
  ['hub_search', '{query: "cats"}', { query: 'cats' }],
  ['hub_search', '{"query": "cats",}', { query: 'cats' }],
  ['hub_search', '{"query": "cats"', { query: 'cats' }],
  ['hub_search', '{"query": "cats', { query: 'cats' }],
  ['hub_search', '{"query": "cats", "exact": True}', { query: 'cats', exact: true }],
  ['hub_search', '{"query": "cats", "limit": 5,}', { query: 'cats', limit: 5 }],
  ['hub_search', '{“query”: “cats”}', { query: 'cats' }],
  ['hub_search', '"{\\"query\\": \\"cats\\"}"', { query: 'cats' }],
  ['hub_search', "{'query': \"it's\"}", { query: "it's" }],
  ['hub_search', '  {"query":"cats"}  \n', { query: 'cats' }],
  ['hub_search', '{"query": "a\nb"}', { query: 'a\nb' }],
  ['hub_search', '{query: cats}', { query: 'cats' }],
  ['hub_search', '{"query": "cats", "limit": "5"', { query: 'cats', limit: 5 }],
  ['hub_search', "```json\n{'query': 'dogs', 'limit': '3',}\n```", { query: 'dogs', limit: 3 }],
  ['hub_search', '{"query": "x", "exact": False, "score": "0.5"}', { query: 'x', exact: false, score: 0.5 }],
  ['hub_search', '{"query": "x", "exact": None}', undefined],
  ['hub_search', 'not json at all', undefined],
  // type coercion
  ['hub_search', { query: 'cats', limit: '5' }, { query: 'cats', limit: 5 }],
  ['hub_search', { query: 'cats', limit: ' 7 ' }, { query: 'cats', limit: 7 }],
  ['hub_search', { query: 'cats', exact: 'true' }, { query: 'cats', exact: true }],
  ['hub_search', { query: 'cats', exact: 'false' }, { query: 'cats', exact: false }],
  ['hub_search', { query: 'cats', score: '1.5' }, { query: 'cats', score: 1.5 }],
  ['hub_search', { query: 42 }, { query: '42' }],
  ['hub_search', { query: true }, { query: 'true' }],
  ['hub_search', '{"query": "cats", "limit": "10"}', { query: 'cats', limit: 10 }],
  ['hub_get_thread', { post_id: 123 }, { post_id: '123' }],
  ['hub_search', { query: 'cats', limit: '2.5' }, undefined],
  // names
  ['HUB_SEARCH', { query: 'cats' }, { query: 'cats' }],
  ['Hub_Search', { query: 'cats' }, { query: 'cats' }],
  ['hub_serch', { query: 'cats' }, { query: 'cats' }],
  ['hub_searchh', { query: 'cats' }, { query: 'cats' }],
  ['hub-search', { query: 'cats' }, { query: 'cats' }],
  ['hbu_search', { query: 'cats' }, { query: 'cats' }],
  ['functions.hub_search', { query: 'cats' }, { query: 'cats' }],
  ['hub_get_threads', { post_id: 'p1' }, { post_id: 'p1' }],
  ['hub_get_thred', { post_id: 'p1' }, { post_id: 'p1' }],
  ['Task_Complete', { result: 'done' }, { result: 'done' }],
  ['task_complet', { result: 'done' }, { result: 'done' }],
  ['no-action', { reason: 'none' }, { reason: 'none' }],
  ['NO_ACTION', '{reason: "none"}', { reason: 'none' }],
  ['hub_search ', { query: 'cats' }, { query: 'cats' }],
  // combined
  ['Hub_Search', "{'query': 'cats', 'limit': '2'}", { query: 'cats', limit: 2 }],
  ['hub_serch', '```json\n{"query": "x", "exact": "true",}\n```', { query: 'x', exact: true }],
  ['HUB_GET_THREAD', '{post_id: 99}', { post_id: '99' }],
  ['task_complete', '{"result": "The answer', { result: 'The answer' }],
  ['hub_search', '', undefined],
  ['hub_search', { limit: 5 }, undefined],
  ['hub_search', "{'query': 'a', 'score': '-2'}", { query: 'a', score: -2 }],
  ['hub_search', '{"query": "a", "limit": "1",', { query: 'a', limit: 1 }],
  ['hub_Search', '{"query": "raw\ttab\rinside"}', { query: 'raw\ttab\rinside' }],
  ['hub_get_thread', "```json\n{'post_id': 'p-1'\n```", { post_id: 'p-1' }],
  ['hub_search', '{\n  query: "multi",\n  limit: 3,\n}', { query: 'multi', limit: 3 }],
  ['hub_search', { query: 'ok', exact: 'true' }, { query: 'ok', exact: true }],
];

describe('repair corpus', () => {
  it('≥50 malformed calls: ≥90 % repaired without a model call, the rest become error results, no crash', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(50);
    let repaired = 0;
    for (const [i, [name, args, expected]] of CORPUS.entries()) {
      const p = prepareCall({ id: `c${i}`, name, rawArguments: args }, registry);
      if (expected === undefined) {
        expect(p.kind, `corpus item ${i} (${name} ${JSON.stringify(args)})`).not.toBe('ready');
      } else {
        expect(p.kind, `corpus item ${i} (${name} ${JSON.stringify(args)})`).toBe('ready');
        if (p.kind === 'ready') expect(p.call.arguments, `corpus item ${i}`).toEqual(expected);
        repaired++;
      }
    }
    expect(repaired / CORPUS.length).toBeGreaterThanOrEqual(0.9);
  });

  it('through the loop: unrepairable calls become error results, no unregistered name is ever sent back', async () => {
    const model = new FnModel((_r, n) => (n === 1 ? { calls: CORPUS.map(([name, args], i) => ({ id: `c${i}`, name, arguments: typeof args === 'string' ? args : (args as Record<string, unknown>) })).filter((c) => !['task_complete', 'Task_Complete', 'task_complet', 'no-action', 'NO_ACTION'].includes(c.name)) } : { content: 'done' }));
    const extra = [['totally_made_up', { query: 'x' }], ['hub_searching_everything', {}]] as const;
    const model2 = new FnModel((_r, n) => (n === 1 ? { calls: extra.map(([name, args], i) => ({ id: `x${i}`, name, arguments: args })) } : { content: 'done' }));
    for (const m of [model, model2]) {
      const r = await runLoop({ model: m, modelName: 'm', system: 's', task: 't', maxSteps: 5, signal: new AbortController().signal, events: events(), tools: registry });
      expect(r.termination).toBe('final');
      const second = m.requests[1]!;
      const registered = new Set(registry.names());
      for (const msg of second.messages) if (msg.role === 'assistant') for (const c of msg.toolCalls ?? []) expect(registered.has(c.name)).toBe(true);
    }
    const notes = model2.requests[1]!.messages.filter((m) => m.role === 'user' && m.content.startsWith('Error: call'));
    expect(notes).toHaveLength(2);
    expect(notes[0]!.content).toContain('x0');
    expect(notes[0]!.content).toContain('hub_search');
    expect(JSON.stringify(model2.requests[1]!.messages.filter((m) => m.role !== 'assistant'))).not.toContain('totally_made_up');
  });

  it('name repair takes a unique candidate only', () => {
    expect(repairToolName('tool_a', ['tool_b', 'tool_c'])).toBeUndefined(); // two candidates one edit away
    expect(repairToolName('ToOl_B', ['tool_b', 'tool_c'])).toBe('tool_b');
    expect(repairToolName('xyz', ['tool_b'])).toBeUndefined();
  });

  it('name repair never edits its way to a tool that has a registered neighbour one edit away', () => {
    expect(repairToolName('tool_bx', ['tool_b', 'other'])).toBe('tool_b');
    // tool_b and tool_c are one edit apart: a near miss of one may well have meant the other.
    expect(repairToolName('tool_bx', ['tool_b', 'tool_c'])).toBeUndefined();
    expect(repairToolName('TOOL-B', ['tool_b', 'tool_c'])).toBe('tool_b'); // case and separators are no edit
  });

  it('name repair never turns one delegate into another, nor anything else into a delegate', () => {
    const known = ['delegate_to_agt_c', 'hub_search'];
    expect(repairToolName('delegate_to_agt_b', known)).toBeUndefined();
    expect(repairToolName('delegate_to_agt_cc', known)).toBeUndefined();
    expect(repairToolName('elegate_to_agt_c', known)).toBeUndefined();
    // The same delegate written differently is still that delegate.
    expect(repairToolName('Delegate_To_Agt_C', known)).toBe('delegate_to_agt_c');
    expect(repairToolName('delegate-to-agt-c', known)).toBe('delegate_to_agt_c');
    expect(repairToolName('functions.delegate_to_agt_c', known)).toBe('delegate_to_agt_c');
  });

  it('through the loop: a call to delegate_to_agt_b in an agent whose only delegate is agt_c runs nothing and is an unknown_tool result the model sees', async () => {
    const ev = events();
    const ran: string[] = [];
    const delegates = delegationTools({ delegates: ['agt_c'], chain: ['agt_a'], events: ev, run: (agent) => (ran.push(agent), Promise.resolve({ text: 'c did it', termination: 'final', ledger: [], failed: false })) });
    const model = new FnModel((_r, n) => (n === 1 ? { calls: [{ id: 'd1', name: 'delegate_to_agt_b', arguments: { task: 'do it' } }] } : { content: 'done' }));
    const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 5, signal: new AbortController().signal, events: ev, tools: new ToolRegistry([...delegates, taskCompleteTool], []) });
    expect(ran).toEqual([]);
    expect(r.toolResults.map((t) => [t.call.name, t.status])).toEqual([['delegate_to_agt_b', 'unknown_tool']]);
    expect(ev.events.some((e) => e.type === 'delegation_request')).toBe(false);
    expect(JSON.stringify(model.requests[1]!.messages)).toMatch(/call d1 named a tool that does not exist\. Available tools: delegate_to_agt_c/);
  });

  it('unwraps double-encoded arguments once, never deeper (a bare word parses as a string of itself)', () => {
    const once = JSON.stringify(JSON.stringify({ query: 'cats' }));
    const twice = JSON.stringify(once);
    // [arguments as written, expected kind]
    const table: Array<[string, 'ready' | 'invalid']> = [
      [once, 'ready'],
      [twice, 'invalid'], // three encodings: not a call anyone meant; was unwrapped without bound
      ['NaN', 'invalid'], // 'NaN' repairs to "NaN", which repaired to "NaN" again: recursion until the stack overflowed
      ['str', 'invalid'],
      ['x'.repeat(20), 'invalid'],
    ];
    for (const [args, kind] of table) expect([args, prepareCall({ id: 'c1', name: 'hub_search', rawArguments: args }, registry).kind]).toEqual([args, kind]);
  });

  it('lenient JSON never invents content', () => {
    expect(parseLenientJson('{"a": [1, 2')?.value).toEqual({ a: [1, 2] });
    expect(parseLenientJson('hello')?.value).toBe('hello');
    expect(parseLenientJson('{"a": 1} trailing junk }')).toBeUndefined();
  });
});

describe('text-mode parser', () => {
  const ids = (): (() => string) => {
    let n = 0;
    return () => `t${++n}`;
  };
  const names = ['a', 'b', 'hub_search', 'hub_get_thread'];
  const isTool = (name: string): boolean => repairToolName(name, names) !== undefined;
  it('reads several fenced tool_call blocks, with distinct ids even for the same tool', () => {
    const text = 'Let me look.\n```tool_call\n{"tool": "hub_search", "arguments": {"query": "a"}}\n```\nand\n```tool_call\n{"tool": "hub_search", "arguments": {"query": "b"}}\n```';
    expect(parseTextToolCalls(text, ids(), isTool)).toEqual([
      { id: 't1', name: 'hub_search', rawArguments: { query: 'a' } },
      { id: 't2', name: 'hub_search', rawArguments: { query: 'b' } },
    ]);
  });
  // Issue 28 item 2: only the seeds' formats are calls. These assertions were changed from the old rule (a
  // {"tool_calls"} object in prose or a json fence, the single-call form, and an object naming a registered tool
  // were calls), which ran samples from answers.
  it('reads a reply that is a {"tool_calls": [...]} object (seed 001); in prose, in a json fence or as a single call it is answer text', () => {
    expect(parseTextToolCalls('{"tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}]}', ids(), isTool).map((c) => c.name)).toEqual(['a', 'b']);
    expect(parseTextToolCalls('  {"tool_calls": [{"name": "ghost", "arguments": {}}]}\n', ids(), isTool).map((c) => c.name)).toEqual(['ghost']);
    expect(parseTextToolCalls('Sure: {"tool_calls": [{"name": "a", "arguments": {"x": 1}}]}', ids(), isTool)).toEqual([]);
    expect(parseTextToolCalls('```json\n{"tool_calls": [{"name": "a", "arguments": "{}"}]}\n```', ids(), isTool)).toEqual([]);
    expect(parseTextToolCalls('{"tool": "a", "arguments": {"x": 1}}', ids(), isTool)).toEqual([]);
  });
  it('a plain answer, even one quoting JSON, has no calls', () => {
    expect(parseTextToolCalls('The config is {"retries": 3}.', ids(), isTool)).toEqual([]);
    expect(parseTextToolCalls('Just text.', ids(), isTool)).toEqual([]);
  });
  it('outside the seeds\' formats nothing is a call, whatever registered tool it names', () => {
    expect(parseTextToolCalls('The record: {"name": "Alice", "age": 3}', ids(), isTool)).toEqual([]);
    expect(parseTextToolCalls('```json\n{"name": "Alice", "age": 3}\n```', ids(), isTool)).toEqual([]);
    expect(parseTextToolCalls('For example:\n```json\n{"tool": "hub_search", "arguments": {"query": "x"}}\n```', ids(), isTool)).toEqual([]);
    expect(parseTextToolCalls('In Python:\n```python\ncall({"tool": "hub_search", "arguments": {"query": "x"}})\n```', ids(), isTool)).toEqual([]);
    expect(parseTextToolCalls('I could call no_action with {"name": "no_action", "arguments": {"reason": "x"}}, but here is the answer.', ids(), isTool)).toEqual([]);
    // A tagged block is a call whatever it names: an unknown name becomes an unknown_tool result.
    expect(parseTextToolCalls('```tool_call\n{"tool": "ghost", "arguments": {}}\n```', ids(), isTool)).toEqual([{ id: 't1', name: 'ghost', rawArguments: {} }]);
  });
  it('repairs a broken block', () => {
    expect(parseTextToolCalls("```tool_call\n{'tool': 'a', 'arguments': {'x': 1},}\n```", ids(), isTool)).toEqual([{ id: 't1', name: 'a', rawArguments: { x: 1 } }]);
  });
  it('through the loop: an answer holding JSON data is a final answer, posted as is, with no hidden note', async () => {
    const answer = 'Here is the record you asked for:\n```json\n{"name": "Alice", "age": 3}\n```\nand inline: {"name": "Bob", "age": 5}.';
    const model = new FnModel((_r, n) => ({ content: n === 1 ? answer : 'a second reply' }));
    const r = await runLoop({ model, modelName: 'm', system: 's', task: 't', maxSteps: 5, signal: new AbortController().signal, events: events(), tools: registry, toolMode: 'text' });
    expect(r).toMatchObject({ termination: 'final', text: answer, modelCalls: 1, toolResults: [] });
  });
});

describe('text-mode delegation blocks', () => {
  it('a fenced delegate block is a call of delegate_to_<agent>, in reply order with tool calls', () => {
    let n = 0;
    const text = '```tool_call\n{"tool": "hub_search", "arguments": {"query": "a"}}\n```\n```delegate\n{"agent": "research-agent", "task": "find sources"}\n```';
    expect(parseTextToolCalls(text, () => `t${++n}`, () => false)).toEqual([
      { id: 't1', name: 'hub_search', rawArguments: { query: 'a' } },
      { id: 't2', name: 'delegate_to_research_agent', rawArguments: { task: 'find sources' } },
    ]);
  });
});
