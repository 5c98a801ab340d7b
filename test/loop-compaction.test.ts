// Context-window management (docs/agent-loop.md R11): a long session never exceeds the window, the head and the
// newest turns stay verbatim, and pairing holds after every compaction.
import { describe, expect, it } from 'vitest';
import { compactHistory, SUMMARY_PREFIX } from '../agent-loop/compaction.ts';
import { estimatePromptTokens } from '../agent-loop/limits.ts';
import { runLoop } from '../agent-loop/loop.ts';
import type { ChatMessage } from '../agent-loop/messages.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { anthropicPairingProblems, events, FnModel, makeTool, pairingProblems } from './support/loop-kit.ts';

describe('compaction', () => {
  it('a 300-turn session never exceeds the window; head and newest turns verbatim; pairing holds', async () => {
    const window = 6000;
    const lookup = makeTool('lookup', { run: (a) => ({ status: 'ok', content: `page ${String(a.q)}: ${'lorem ipsum '.repeat(150)}` }) });
    const model = new FnModel((_r, n) => (n <= 300 ? { content: `step ${n}`, calls: [{ id: `c${n}a`, name: 'lookup', arguments: { q: `${n}a` } }, { id: `c${n}b`, name: 'lookup', arguments: { q: `${n}b` } }] } : { content: 'done' }));
    const ev = events();
    const r = await runLoop({ model, modelName: 'm', system: 'SYSTEM PROMPT', task: 'THE TASK', maxSteps: 301, maxRunTokens: 1e9, maxTokens: 500, signal: new AbortController().signal, events: ev, tools: new ToolRegistry([lookup], []), contextWindowTokens: window });
    expect(r.termination).toBe('final');
    expect(model.requests).toHaveLength(301);
    for (const [i, req] of model.requests.entries()) {
      expect(estimatePromptTokens(req.messages, req.tools ?? []) + 500, `request ${i + 1}`).toBeLessThanOrEqual(window);
      expect(pairingProblems(req.messages), `request ${i + 1}`).toEqual([]);
      expect(anthropicPairingProblems(req.messages), `request ${i + 1}`).toEqual([]);
      expect(req.messages.slice(0, 2)).toEqual([{ role: 'system', content: 'SYSTEM PROMPT' }, { role: 'user', content: 'THE TASK' }]);
    }
    const last = model.requests.at(-1)!.messages;
    expect(last[2]?.content).toContain(SUMMARY_PREFIX);
    // The newest turn is there in full.
    expect(last.some((m) => m.role === 'tool' && m.toolCallId === 'c300b' && m.content.includes('lorem ipsum lorem'))).toBe(true);
    expect(ev.events.filter((e) => e.type === 'compaction').length).toBeGreaterThan(10);
  });

  it('leaves a history that fits alone, and never splits a call from its result', () => {
    const head: ChatMessage[] = [{ role: 'system', content: 's' }, { role: 'user', content: 't' }];
    expect(compactHistory(head, [], { windowTokens: 1000, replyTokens: 100 })).toBeUndefined();
    const turn = (n: number): ChatMessage[] => [
      { role: 'assistant', content: null, toolCalls: [{ id: `x${n}`, name: 'f', arguments: { n } }, { id: `y${n}`, name: 'g', arguments: {} }] },
      { role: 'tool', toolCallId: `x${n}`, content: 'r'.repeat(400) },
      { role: 'tool', toolCallId: `y${n}`, content: 'q'.repeat(400) },
    ];
    const history = [...head, ...Array.from({ length: 10 }, (_, i) => turn(i)).flat()];
    const c = compactHistory(history, [], { windowTokens: 1200, replyTokens: 100, keepTurns: 3 })!;
    expect(c.droppedTurns).toBeGreaterThan(0);
    expect(pairingProblems(c.messages)).toEqual([]);
    expect(c.messages[2]?.content).toContain('called f({"n":0})');
    // Compacting again folds the old summary in rather than stacking summaries.
    const again = compactHistory([...c.messages, ...turn(10), ...turn(11)], [], { windowTokens: 1200, replyTokens: 100, keepTurns: 2 })!;
    expect(again.messages.filter((m) => m.content?.startsWith(SUMMARY_PREFIX))).toHaveLength(1);
    expect(again.messages[2]?.content).toContain('called f({"n":0})');
  });
});
