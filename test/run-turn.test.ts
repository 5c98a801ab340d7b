// One agent turn (activation/run-turn.ts) on its unit-test seam: an in-memory hub, a stub executor, a real SQLite
// memory. What the turn puts in the context, what it leaves to the caller, and a delegate's turn through the hook.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EventLog } from '../agent-loop/events.ts';
import { runTurn } from '../activation/run-turn.ts';
import { PhaseTimer } from '../activation/phase-timer.ts';
import type { ExecutorResult } from '../executors/executor.ts';
import { AgentMemory } from '../memory/agent-memory.ts';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';
import { MEMORY_HEADING } from '../prompts/memories.ts';
import { REDACTED, Redactor } from '../services/redact.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { MemoryHub } from './support/memory-hub.ts';
import { StubExecutor } from './support/stub-executor.ts';

const keeper: AgentDefinition = {
  name: 'keeper',
  config: AgentConfigSchema.parse({ name: 'keeper', type: 'llm', brain: { model: 'm' }, capabilities: { grants: ['hub:read'] }, behavior: { limits: { max_daily_posts: 3, max_daily_comments: 5 } }, memory: { enabled: true, retrieval: { strategy: 'keyword' } } }),
  systemPrompt: 'You are {{name}}.',
  files: { config: 'config.yaml', prompt: 'system-prompt.md' },
};

async function services(): Promise<{ hub: MemoryHub; memory: AgentMemory; usedToday: (agent: string) => Promise<{ posts: number; comments: number }>; redact: (text: string) => string }> {
  const store = new SqliteMemoryStore(':memory:');
  await store.write('keeper', [{ key: 'k', kind: 'note', text: 'the deploy codeword is PELICAN-42', createdAt: Date.UTC(2026, 0, 1) }]);
  const memory = new AgentMemory({ store, redact: (t) => t, logger: pino({ level: 'silent' }) });
  return { hub: new MemoryHub(), memory, usedToday: () => Promise.resolve({ posts: 1, comments: 1 }), redact: (text) => text };
}

const signal = new AbortController().signal;

describe('one turn', () => {
  it('recalls what fits the task, reads the budget and today\'s counters, runs the executor and reads the outcome', async () => {
    const s = await services();
    const executor = new StubExecutor([{ termination: 'final', text: ' PELICAN-42 ' }]);
    const timer = new PhaseTimer();
    const turn = await runTurn(s, keeper, { kind: 'prompt', text: 'what is the deploy codeword?' }, signal, { id: 'act-1', events: new EventLog('act-1'), executor, timer });
    expect(turn.outcome).toEqual({ kind: 'answered', text: 'PELICAN-42', partial: false });
    const { system } = executor.inputs[0]!.context;
    expect(system).toContain(MEMORY_HEADING);
    expect(system).toContain('PELICAN-42');
    expect(system).toContain('**Left today:** 2 posts, 4 comments');
    expect(executor.inputs[0]!.hub).toBe(s.hub);
    expect(Object.keys(timer.timings).sort()).toEqual(['context', 'executor', 'memory']);
  });

  it('takes the pieces the caller read already, and says which it could not read when it reads them itself', async () => {
    const s = await services();
    const warnings: string[] = [];
    // The hub does not answer the budget: the turn runs without it.
    s.hub.budgetHealth = () => Promise.reject(new Error('hub down'));
    const executor = new StubExecutor([{ termination: 'no_action' }, { termination: 'no_action' }]);
    await runTurn({ ...s, onWarning: (what) => warnings.push(what) }, keeper, { kind: 'prompt', text: 'hi' }, signal, { id: 'a', events: new EventLog('a'), executor });
    expect(warnings).toEqual(['budget health unavailable']);
    await runTurn({ ...s, onWarning: (what) => warnings.push(what) }, keeper, { kind: 'prompt', text: 'hi' }, signal, { id: 'b', events: new EventLog('b'), executor, pieces: { budget: undefined, remaining: { posts: 9, comments: 9 } } });
    expect(executor.inputs[1]!.context.system).not.toContain('Left today');
    expect(warnings).toHaveLength(1);
  });

  it('an executor\'s failure is an outcome, not a throw', async () => {
    const s = await services();
    const executor = new StubExecutor([{ termination: 'error', error: { message: 'HTTP 500', retryable: true } }]);
    const turn = await runTurn(s, keeper, { kind: 'prompt', text: 'hi' }, signal, { id: 'a', events: new EventLog('a'), executor, recall: false });
    expect(turn.outcome).toMatchObject({ kind: 'retryable_failure', source: 'agent' });
  });

  it('gives the run a delegate hook: the delegate\'s own turn, with its own pieces, its own events, and no recall', async () => {
    const s = await services();
    const parent = new StubExecutor([{ termination: 'final', text: 'done' }]);
    await runTurn(s, keeper, { kind: 'prompt', text: 'codeword?' }, signal, { id: 'act-p', events: new EventLog('act-p'), executor: parent });
    const delegate = parent.inputs[0]!.delegate!;
    const child = new StubExecutor([{ termination: 'final', text: 'child answer' }]);
    const events = new EventLog('act-p/keeper');
    const result: ExecutorResult = await delegate(keeper, 'what is the deploy codeword?', { id: events.activationId, events, run: (input) => child.run(input) }, signal);
    expect(result.text).toBe('child answer');
    const input = child.inputs[0]!;
    expect(input).toMatchObject({ id: 'act-p/keeper', events, hub: s.hub });
    expect(input.context.task).toBe('what is the deploy codeword?');
    expect(input.context.system).toContain('**Left today:** 2 posts, 4 comments');
    expect(input.context.system).not.toContain(MEMORY_HEADING);
    // The child's runs may delegate in turn, through the same hook.
    expect(input.delegate).toBeTypeOf('function');
  });

  it('every piece of the context passes the redaction: recalled memory, the task\'s text and a delegate\'s task', async () => {
    const s = await services();
    const canary = 'wcanary_5f1e9a0c3b7d2e4f6a8b1c0d';
    // Memory written before the key was known (or by another process) holds it; the turn's redaction knows it now.
    await s.memory.store.write('keeper', [{ key: 'k2', kind: 'note', text: `the deploy key is ${canary}`, createdAt: Date.UTC(2026, 0, 2) }]);
    const redactor = new Redactor([canary]);
    const parent = new StubExecutor([{ termination: 'final', text: 'done' }]);
    await runTurn({ ...s, redact: (t) => redactor.redact(t) }, keeper, { kind: 'prompt', text: `what is the deploy key? (it is ${canary})` }, signal, { id: 'act-r', events: new EventLog('act-r'), executor: parent });
    const { system, task } = parent.inputs[0]!.context;
    expect(system).toContain(MEMORY_HEADING);
    expect(system).toContain(`the deploy key is ${REDACTED}`);
    expect(task).toBe(`what is the deploy key? (it is ${REDACTED})`);
    const child = new StubExecutor([{ termination: 'final', text: 'ok' }]);
    const events = new EventLog('act-r/keeper');
    await parent.inputs[0]!.delegate!(keeper, `use ${canary}`, { id: events.activationId, events, run: (input) => child.run(input) }, signal);
    expect(child.inputs[0]!.context.task).toBe(`use ${REDACTED}`);
    expect(JSON.stringify([parent.inputs[0]!.context, child.inputs[0]!.context])).not.toContain(canary);
  });
  it('lets the task go once the context is built: the executor runs (a model call long) without the turn holding it', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const s = await services();
    const stub = new StubExecutor([{ termination: 'final', text: 'ok' }]);
    // Made where the test keeps no reference of its own: only the WeakRef and the turn see it.
    let held: WeakRef<object> | undefined;
    const task = (): { kind: 'prompt'; text: string } => {
      const t = { kind: 'prompt' as const, text: 'a thread of many comments' };
      held = new WeakRef(t);
      return t;
    };
    let collected: boolean | undefined;
    const executor = {
      run: async (input: Parameters<StubExecutor['run']>[0]) => {
        await new Promise((r) => setTimeout(r, 0)); // past the job that made the WeakRef (which keeps its target till then)
        gc();
        collected = held?.deref() === undefined;
        return stub.run(input);
      },
    };
    const turn = runTurn(s, keeper, task(), signal, { id: 'a', events: new EventLog('a'), executor });
    expect((await turn).outcome.kind).toBe('answered');
    expect(stub.inputs[0]!.context.task).toContain('a thread of many comments');
    expect(collected).toBe(true);
  });
});
