// Resuming a stored conversation (docs/agent-loop.md R5): dangling calls are repaired before anything is sent.
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_RESULT, repairHistory } from '../agent-loop/history-repair.ts';
import { runLoop } from '../agent-loop/loop.ts';
import type { ChatMessage } from '../agent-loop/messages.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { Prng } from './support/prng.ts';
import { anthropicPairingProblems, events, FnModel, makeTool, pairingProblems } from './support/loop-kit.ts';

const call = (id: string, name = 'lookup') => ({ id, name, arguments: {} });
const assistant = (...ids: string[]): ChatMessage => ({ role: 'assistant', content: null, toolCalls: ids.map((id) => call(id)) });
const result = (id: string, content = `result ${id}`): ChatMessage => ({ role: 'tool', toolCallId: id, content });
const user = (content: string): ChatMessage => ({ role: 'user', content });

describe('history repair', () => {
  it('gives a call cut off before its result an explicit cancelled result, in place', () => {
    const { messages, repairs } = repairHistory([user('task'), assistant('a', 'b'), result('a'), user('later')]);
    expect(messages).toEqual([user('task'), assistant('a', 'b'), result('a'), { role: 'tool', toolCallId: 'b', name: 'lookup', content: INTERRUPTED_RESULT }, user('later')]);
    expect(repairs).toEqual(['call b (lookup) had no result: marked cancelled']);
  });

  it('drops repeated results, results without a call and repeated call ids', () => {
    const { messages, repairs } = repairHistory([user('task'), result('ghost'), assistant('a'), result('a'), result('a', 'again'), assistant('a', 'c'), result('c')]);
    expect(messages).toEqual([user('task'), assistant('a'), result('a'), { role: 'assistant', content: null, toolCalls: [call('c')] }, result('c')]);
    expect(repairs).toHaveLength(3);
  });

  it('drops a turn left with neither text nor calls once its repeated calls are gone', () => {
    const { messages } = repairHistory([user('task'), assistant('a'), result('a'), assistant('a'), result('a', 'again')]);
    expect(messages).toEqual([user('task'), assistant('a'), result('a')]);
  });

  it('leaves a well-formed history as it is', () => {
    const h = [user('task'), assistant('a'), result('a'), { role: 'assistant' as const, content: 'done' }];
    expect(repairHistory(h)).toEqual({ messages: h, repairs: [] });
  });

  it('1,000 randomly damaged histories all come out paired, for OpenAI and Anthropic alike', () => {
    const rng = new Prng(7);
    for (let run = 0; run < 1_000; run++) {
      const h: ChatMessage[] = [user('task')];
      let n = 0;
      const ids: string[] = [];
      for (let turn = rng.int(6); turn >= 0; turn--) {
        const turnIds = Array.from({ length: 1 + rng.int(3) }, () => (ids.length && rng.chance(0.1) ? rng.pick(ids) : `c${++n}`));
        ids.push(...turnIds);
        h.push(assistant(...turnIds));
        for (const id of turnIds) {
          if (rng.chance(0.2)) continue; // cut off
          h.push(result(id));
          if (rng.chance(0.1)) h.push(result(id, 'twice'));
        }
        if (rng.chance(0.1)) h.push(result(`stray${run}`));
        if (rng.chance(0.3)) h.push(user('more'));
      }
      const { messages } = repairHistory(h);
      expect(pairingProblems(messages), `run ${run}`).toEqual([]);
      expect(anthropicPairingProblems(messages), `run ${run}`).toEqual([]);
      // Nothing but tool traffic changes.
      expect(messages.filter((m) => m.role === 'user')).toEqual(h.filter((m) => m.role === 'user'));
    }
  });
});

describe('a resumed run', () => {
  it('repairs the stored history before its first request and goes on to an answer', async () => {
    const model = new FnModel((_req, n) => (n === 1 ? { calls: [{ name: 'lookup', arguments: { q: 'again' } }] } : { content: 'all done' }));
    const ev = events();
    const stored: ChatMessage[] = [{ role: 'system', content: 'an old prompt' }, user('find it'), { role: 'assistant', content: null, toolCalls: [call('call_text_1'), call('call_synth_2')] }, result('call_text_1')];
    const r = await runLoop({ model, modelName: 'm', system: 'today’s prompt', task: 'ignored when resuming', maxSteps: 5, signal: new AbortController().signal, events: ev, tools: new ToolRegistry([makeTool('lookup', { readOnly: true })], []), resume: stored });
    expect(r).toMatchObject({ termination: 'final', text: 'all done' });
    const first = model.requests[0]!.messages;
    expect(pairingProblems(first)).toEqual([]);
    expect(first[0]).toEqual({ role: 'system', content: 'today’s prompt' });
    expect(first.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'system']);
    expect(first[4]).toMatchObject({ toolCallId: 'call_synth_2', content: INTERRUPTED_RESULT });
    expect(ev.events.filter((e) => e.type === 'loop_warning').map((e) => e.type === 'loop_warning' && e.message)).toEqual(['resumed history: call call_synth_2 (lookup) had no result: marked cancelled']);
    for (const req of model.requests) expect(pairingProblems(req.messages)).toEqual([]);
  });

  it('new calls of a resumed text-mode run never reuse an id of the stored history', async () => {
    const fence = '```tool_call\n{"name": "lookup", "arguments": {}}\n```';
    const model = new FnModel((_req, n) => (n === 1 ? { content: fence } : { content: 'done' }));
    const stored: ChatMessage[] = [user('find it'), assistant('call_text_1', 'call_text_2'), result('call_text_1'), result('call_text_2')];
    const r = await runLoop({ model, modelName: 'm', system: 's', task: '', maxSteps: 5, signal: new AbortController().signal, events: events(), toolMode: 'text', tools: new ToolRegistry([makeTool('lookup', { readOnly: true })], []), resume: stored });
    expect(r.termination).toBe('final');
    expect(r.toolResults.map((t) => t.call.id)).toEqual(['call_text_3']);
  });
});
