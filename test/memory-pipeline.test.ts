// Memory through the activation pipeline on its unit-test seam (in-memory hub, stub executor) with the real
// SQLite store and the daemon's Redactor: what is written after which ending, never after a failure, once per
// notification, redacted; what the next activation is shown.
import { GENERAL_ONLY, personAudience } from '../memory/audience.ts';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ActivationError, runActivation, type ActivationDeps } from '../activation/activation.ts';
import { Redactor, REDACTED } from '../services/redact.ts';
import { WarrenMetrics } from '../daemon/metrics.ts';
import { MemoryReplyOutbox } from '../activation/reply-outbox.ts';
import { AgentMemory } from '../memory/agent-memory.ts';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';
import { MEMORY_HEADING } from '../prompts/memories.ts';
import { AgentConfigSchema, type AgentConfigInput } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { EmbeddingsError, OpenAiEmbedder } from '../memory/embeddings-client.ts';
import { hashedEmbedding, startFakeOpenAI } from './fakes/openai-server.ts';
import { MemoryHub } from './support/memory-hub.ts';
import { StubExecutor, type StubRun } from './support/stub-executor.ts';

const CANARY = 'canary-7f3a9c2e51d84b06';

function agentWith(memory: AgentConfigInput['memory']): AgentDefinition {
  return {
    name: 'keeper',
    config: AgentConfigSchema.parse({ name: 'keeper', type: 'llm', brain: { model: 'm' }, capabilities: { grants: ['hub:read', 'hub:write'] }, behavior: { limits: { min_interval_seconds: 0 } }, memory }),
    systemPrompt: 'You are {{name}}.',
    files: { config: 'config.yaml', prompt: 'system-prompt.md' },
  };
}

function world(agent: AgentDefinition, runs: StubRun[]) {
  const hub = new MemoryHub();
  const executor = new StubExecutor(runs);
  const store = new SqliteMemoryStore(':memory:');
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (l: string) => void logs.push(l) });
  const memory = new AgentMemory({ store, redact: (t) => new Redactor([CANARY]).redact(t), logger });
  const deps: ActivationDeps = { hub, agents: { get: (n) => (n === agent.name ? agent : undefined) }, executors: { resolve: () => ({ executor }) }, outbox: new MemoryReplyOutbox(), logger, memory, redact: (text) => text };
  return { hub, executor, store, deps, logs };
}

const job = { agent: 'keeper', trigger: 'notification' as const, enqueuedAt: Date.now() };
const signal = new AbortController().signal;

describe('memory in the activation pipeline', () => {
  it('remembers an answered mention and shows it, dated, to a later activation on another post', async () => {
    const w = world(agentWith({ enabled: true, retrieval: { strategy: 'keyword' } }), [
      { termination: 'final', text: 'Noted, I will remember it.' },
      { termination: 'final', text: 'It is PELICAN-42.' },
    ]);
    w.hub.mention('keeper', 'dana', '@keeper remember: the deploy codeword is PELICAN-42');
    await runActivation(w.deps, 'act-1', job, signal);
    const kept = await w.store.search('keeper', { strategy: 'recent', limit: 10 });
    expect(kept.map((h) => h.entry.kind).sort()).toEqual(['conversation', 'project']);
    const conversation = kept.find((h) => h.entry.kind === 'conversation')!.entry;
    expect(conversation).toMatchObject({ who: 'dana', community: 'general' });
    expect(conversation.text).toContain('the deploy codeword is PELICAN-42');
    expect(conversation.text).toContain('I answered: "Noted, I will remember it."');

    w.hub.mention('keeper', 'dana', '@keeper what is the deploy codeword?');
    await runActivation(w.deps, 'act-2', job, signal);
    const system = w.executor.inputs[1]!.context.system;
    const section = system.slice(system.indexOf(MEMORY_HEADING));
    expect(system).toContain(MEMORY_HEADING);
    expect(section).toContain('PELICAN-42');
    expect(section).toMatch(new RegExp(`- \\[${new Date().toISOString().slice(0, 10)}\\] dana mentioned me`));
    // The first activation saw no memory: there was none yet.
    expect(w.executor.inputs[0]!.context.system).not.toContain(MEMORY_HEADING);
    expect((await w.store.search('keeper', { strategy: 'recent', limit: 10 })).find((h) => h.entry.kind === 'conversation' && h.entry.text.includes('remember:'))!.entry.recalls).toBe(1);
  });

  it('a run that failed before answering remembers nothing; its successful retry remembers once', async () => {
    const w = world(agentWith({ enabled: true }), [
      { termination: 'error', error: { message: 'HTTP 500', retryable: true } },
      { termination: 'final', text: 'Hello.' },
    ]);
    w.hub.mention('keeper', 'dana', '@keeper hi there');
    const err = await runActivation(w.deps, 'act-3', job, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ActivationError);
    expect(await w.store.count('keeper')).toBe(0);
    // The answer is posted, then the hub fails the read mark: this attempt fails after answering.
    w.hub.failNext('markRead');
    await runActivation(w.deps, 'act-3', job, signal, { attempt: 2 }).catch(() => undefined);
    await runActivation(w.deps, 'act-3', job, signal, { attempt: 3 });
    expect(await w.store.count('keeper')).toBe(2); // one conversation, one project
  });

  it('writing is idempotent per notification: the same activation remembered twice keeps one set of entries', async () => {
    const agent = agentWith({ enabled: true });
    const w = world(agent, []);
    const memory = w.deps.memory!;
    const what = { trigger: 'notification' as const, notification: { id: 'n_1', type: 'mention' as const, from: 'dana', content: 'hi' }, post: { id: 'p_1', title: 'Hello', community: 'general' }, ending: { kind: 'answered' as const, text: 'hey' }, audience: personAudience('keeper', 'dana', []) };
    await memory.remember(agent, what);
    await memory.remember(agent, { ...what, ending: { kind: 'answered', text: 'a different retry' } });
    expect(await w.store.count('keeper')).toBe(2);
  });

  it('no known secret is stored: a canary in the question and the answer is redacted', async () => {
    const w = world(agentWith({ enabled: true }), [{ termination: 'final', text: `The key is ${CANARY}, keep it safe` }]);
    w.hub.mention('keeper', 'dana', `@keeper store this: ${CANARY} and ghp_${'a'.repeat(36)}`);
    await runActivation(w.deps, 'act-4', job, signal);
    const texts = (await w.store.search('keeper', { strategy: 'recent', limit: 10 })).map((h) => h.entry.text).join('\n');
    expect(texts).toContain(REDACTED);
    expect(texts).not.toContain(CANARY);
    expect(texts).not.toContain('ghp_aaaa');
  });

  it('the remember switches decide the entries: a declined mention is a decision, a stranger is not a conversation', async () => {
    const w = world(agentWith({ enabled: true, remember: { conversations_with: ['dana'], projects_worked_on: false } }), [{ termination: 'no_action' }, { termination: 'final', text: 'ok' }]);
    w.hub.mention('keeper', 'dana', '@keeper anything?');
    await runActivation(w.deps, 'act-5', job, signal);
    w.hub.mention('keeper', 'mallory', '@keeper talk to me');
    await runActivation(w.deps, 'act-6', job, signal);
    const entries = (await w.store.search('keeper', { strategy: 'recent', limit: 10 })).map((h) => h.entry).sort((a, b) => a.kind.localeCompare(b.kind));
    expect(entries.map((e) => [e.kind, e.who])).toEqual([
      ['conversation', 'dana'],
      ['decision', 'dana'],
    ]);
    expect(entries[0]!.text).toContain('I chose not to answer (no_action)');
    expect(entries[1]!.text).toContain("I decided not to answer dana's mention");
  });

  it('an agent without memory writes and recalls nothing; a store that fails does not fail the activation', async () => {
    const off = world(agentWith(undefined), [{ termination: 'final', text: 'hi' }]);
    off.hub.mention('keeper', 'dana', '@keeper hi');
    await runActivation(off.deps, 'act-7', job, signal);
    expect(await off.store.count('keeper')).toBe(0);

    const broken = world(agentWith({ enabled: true }), [{ termination: 'final', text: 'still answered' }]);
    await broken.store.close();
    const { post } = broken.hub.mention('keeper', 'dana', '@keeper hi');
    const outcome = await runActivation(broken.deps, 'act-8', job, signal);
    expect(outcome.outcome).toMatchObject({ kind: 'answered', text: 'still answered' });
    expect(broken.hub.commentsOn(post.id)).toHaveLength(1);
    expect(broken.logs.join('\n')).toContain('memory recall failed');
    expect(broken.logs.join('\n')).toContain('could not store memory entries');
  });

  it('evicts down to max_size_mb as entries are written, says so, and counts it in the metrics', async () => {
    const w = world(agentWith({ enabled: true, max_size_mb: 0.001 }), []); // about 1 kB
    const agent = w.deps.agents.get('keeper')!;
    const metrics = new WarrenMetrics();
    const logger = pino({ level: 'info' }, { write: (l: string) => void w.logs.push(l) });
    const memory = new AgentMemory({ store: w.store, redact: (t) => t, logger, onEvicted: (a, n) => metrics.observeMemoryEvictions(a, n) });
    for (let i = 0; i < 5; i++) await memory.save(agent, `note-${i}`, `note ${i}: ${'x'.repeat(300)}`, GENERAL_ONLY);
    const usage = await memory.memoryUsage('keeper');
    expect(usage.bytes).toBeLessThanOrEqual(0.001 * 1024 * 1024);
    expect(usage.bytes).toBe(await w.store.size('keeper'));
    const left = (await w.store.search('keeper', { strategy: 'recent', limit: 10 })).map((h) => h.entry.text.slice(0, 6));
    expect(usage.entries).toBe(left.length);
    expect(left[0]).toBe('note 4');
    expect(left).not.toContain('note 0');
    expect(w.logs.join('\n')).toContain('memory over max_size_mb');
    expect(await metrics.text()).toContain(`warren_memory_evictions_total{agent="keeper"} ${5 - left.length}`);
  });

  it('memory.scope person (the default): what dana told is recalled for dana, not for erin; scope agent recalls it for all', async () => {
    const told = (scope?: 'person' | 'agent') => {
      const w = world(agentWith({ enabled: true, ...(scope ? { scope } : {}) }), [
        { termination: 'final', text: 'Noted.' },
        { termination: 'final', text: 'I do not know.' },
        { termination: 'final', text: 'PELICAN-42.' },
      ]);
      return w;
    };
    const w = told();
    w.hub.mention('keeper', 'dana', '@keeper remember: the deploy codeword is PELICAN-42');
    await runActivation(w.deps, 'act-p1', job, signal);
    expect((await w.store.search('keeper', { strategy: 'recent', limit: 10 })).map((h) => h.entry.people)).toEqual([['dana'], ['dana']]);
    w.hub.mention('keeper', 'erin', '@keeper what is the deploy codeword?');
    await runActivation(w.deps, 'act-p2', job, signal);
    w.hub.mention('keeper', 'dana', '@keeper what is the deploy codeword?');
    await runActivation(w.deps, 'act-p3', job, signal);
    expect(w.executor.inputs[1]!.context.system).not.toContain('PELICAN-42');
    expect(w.executor.inputs[2]!.context.system).toContain('PELICAN-42');

    const shared = told('agent');
    shared.hub.mention('keeper', 'dana', '@keeper remember: the deploy codeword is PELICAN-42');
    await runActivation(shared.deps, 'act-s1', job, signal);
    shared.hub.mention('keeper', 'erin', '@keeper what is the deploy codeword?');
    await runActivation(shared.deps, 'act-s2', job, signal);
    expect(shared.executor.inputs[1]!.context.system).toContain('PELICAN-42');
  });

  it('embedding_search without an embeddings endpoint recalls by keyword, and says so once', async () => {
    const w = world(agentWith({ enabled: true, retrieval: { strategy: 'embedding_search' } }), [
      { termination: 'final', text: 'Noted.' },
      { termination: 'final', text: 'PELICAN-42' },
      { termination: 'final', text: 'Still PELICAN-42' },
    ]);
    w.hub.mention('keeper', 'dana', '@keeper remember: the deploy codeword is PELICAN-42');
    await runActivation(w.deps, 'act-9', job, signal);
    w.hub.mention('keeper', 'dana', '@keeper the deploy codeword?');
    await runActivation(w.deps, 'act-10', job, signal);
    w.hub.mention('keeper', 'dana', '@keeper the codeword again?');
    await runActivation(w.deps, 'act-11', job, signal);
    expect(w.executor.inputs[1]!.context.system).toContain('PELICAN-42');
    expect(w.logs.filter((l) => l.includes('recalling by keyword'))).toHaveLength(1);
  });
});

describe('the embeddings client', () => {
  it('asks an OpenAI-compatible /v1/embeddings endpoint for one vector per text, in order, with the key', async () => {
    const fake = await startFakeOpenAI({ apiKey: 'sk-embed-key' });
    try {
      const vectors = await new OpenAiEmbedder({ apiBase: fake.url, model: 'fake-embedding', apiKey: 'sk-embed-key' }).embed(['deploy codeword', 'lunch at noon']);
      expect(vectors).toEqual([hashedEmbedding('deploy codeword'), hashedEmbedding('lunch at noon')]);
      expect(fake.requests[0]!.body).toEqual({ model: 'fake-embedding', input: ['deploy codeword', 'lunch at noon'] });
      const refused = await new OpenAiEmbedder({ apiBase: fake.url, model: 'fake-embedding', apiKey: 'wrong' }).embed(['x']).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(EmbeddingsError);
      expect((refused as EmbeddingsError).status).toBe(401);
    } finally {
      await fake.close();
    }
  });
});
