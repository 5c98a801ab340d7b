// Call/result pairing (docs/agent-loop.md R5) as a property: over 1,000 seeded random runs with aborts, timeouts,
// rejections, failures, unknown names and broken arguments injected, no request the model receives holds an
// unpaired or doubly answered tool call id, in OpenAI's pairing rules or Anthropic's.
import { describe, expect, it } from 'vitest';
import { noActionTool, taskCompleteTool } from '../agent-loop/builtin-tools.ts';
import { runLoop } from '../agent-loop/loop.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { anthropicPairingProblems, events, FnModel, makeTool, pairingProblems, sleep, type Turn } from './support/loop-kit.ts';
import { Prng } from './support/prng.ts';

const NAMES = ['read', 'read2', 'write', 'slow', 'fail', 'hang', 'denied', 'task_complete', 'invented_tool', 'READ'];

async function randomRun(seed: number): Promise<{ problems: string[]; termination: string; requests: number }> {
  const prng = new Prng(seed);
  const tools = [
    makeTool('read', { run: async () => (await sleep(prng.int(3)), { status: 'ok', content: 'r' }) }),
    makeTool('read2', { run: async () => (await sleep(prng.int(3)), { status: 'ok', content: 'r2' }) }),
    makeTool('write', { readOnly: false, run: async () => (await sleep(prng.int(3)), { status: 'ok', content: 'w' }) }),
    makeTool('slow', { timeoutMs: 5 + prng.int(10), run: (_a, ctx) => sleep(30, ctx.signal).then(() => ({ status: 'ok' as const, content: 's' })) }),
    makeTool('fail', { run: () => (prng.chance(0.5) ? { status: 'error', content: 'failed' } : Promise.reject(new Error('threw'))) }),
    makeTool('hang', { timeoutMs: 10, run: () => new Promise(() => undefined) }),
    makeTool('denied', { readOnly: false, grant: 'secret:write' }),
  ];
  const ac = new AbortController();
  if (prng.chance(0.3)) setTimeout(() => ac.abort(), prng.int(25));
  const model = new FnModel((): Turn => {
    if (prng.chance(0.15)) return { content: 'final answer' };
    const n = 1 + prng.int(4);
    const sameId = prng.chance(0.05);
    return {
      delayMs: prng.int(2),
      calls: Array.from({ length: n }, (_, i) => {
        const name = prng.pick(NAMES);
        const args = prng.chance(0.1) ? '{"q": "broken' : prng.chance(0.1) ? { q: 5, extra: true } : name === 'task_complete' ? { result: 'done' } : { q: String(prng.int(2)) };
        return { id: sameId ? 'dup' : prng.chance(0.05) ? '' : `c${i}_${prng.int(1e6)}`, name, arguments: args };
      }),
    };
  });
  const r = await runLoop({
    model,
    modelName: 'm',
    system: 's',
    task: 't',
    maxSteps: 1 + prng.int(8),
    maxRunTokens: 1000 + prng.int(3000),
    maxTokens: 100,
    signal: ac.signal,
    events: events(`act_${seed}`),
    tools: new ToolRegistry([...tools, taskCompleteTool, noActionTool], []),
    toolMode: prng.chance(0.2) ? 'text' : 'native',
  });
  const problems: string[] = [];
  for (const [i, req] of model.requests.entries()) {
    const msgs = req.messages;
    for (const p of [...pairingProblems(msgs), ...anthropicPairingProblems(msgs)]) problems.push(`seed ${seed} request ${i + 1}: ${p}`);
    for (const m of msgs) {
      if (m.role !== 'assistant') continue;
      for (const c of m.toolCalls ?? []) if (!tools.some((t) => t.definition.name === c.name) && !['task_complete', 'no_action'].includes(c.name)) problems.push(`seed ${seed}: unregistered name ${c.name} sent back`);
    }
  }
  return { problems, termination: r.termination, requests: model.requests.length };
}

describe('tool-call pairing property', () => {
  it('1,000 random runs: no unpaired or doubly answered call id in any request', async () => {
    const problems: string[] = [];
    const terminations = new Map<string, number>();
    let requests = 0;
    for (let batch = 0; batch < 20; batch++) {
      const runs = await Promise.all(Array.from({ length: 50 }, (_, i) => randomRun(1000 + batch * 50 + i)));
      for (const r of runs) {
        problems.push(...r.problems);
        terminations.set(r.termination, (terminations.get(r.termination) ?? 0) + 1);
        requests += r.requests;
      }
    }
    expect(problems.slice(0, 10)).toEqual([]);
    // The injected faults really happened: the runs ended in many different ways.
    expect([...terminations.keys()].sort()).toEqual(expect.arrayContaining(['aborted', 'final', 'max_steps', 'stop_tool']));
    expect(requests).toBeGreaterThan(2000);
  }, 60_000);

  it('the checker itself finds a missing, a doubled and an orphan result', () => {
    const call = { id: 'a', name: 'read', arguments: {} };
    expect(pairingProblems([{ role: 'assistant', content: null, toolCalls: [call] }, { role: 'user', content: 'x' }])).not.toEqual([]);
    expect(pairingProblems([{ role: 'assistant', content: null, toolCalls: [call] }, { role: 'tool', toolCallId: 'a', content: '1' }, { role: 'tool', toolCallId: 'a', content: '2' }])).not.toEqual([]);
    expect(pairingProblems([{ role: 'tool', toolCallId: 'z', content: '1' }])).not.toEqual([]);
    expect(anthropicPairingProblems([{ role: 'assistant', content: null, toolCalls: [call] }, { role: 'system', content: 'x' }, { role: 'tool', toolCallId: 'a', content: '1' }])).not.toEqual([]);
  });
});
