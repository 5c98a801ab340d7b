// The memory tools' grants: implied by memory.enabled, exactly the listed ones when the agent lists any; and
// the tools themselves against a real store (keyed saves, redaction, search).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../agent-loop/tools.ts';
import { Redactor, REDACTED } from '../services/redact.ts';
import { AgentMemory } from '../memory/agent-memory.ts';
import { personAudience, type MemoryAudience } from '../memory/audience.ts';
import { effectiveGrants } from '../memory/memory-grants.ts';
import { memoryTools } from '../memory/memory-tools.ts';
import { recallWarning } from '../memory/recall-strategy.ts';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';
import { hasGrant } from '../store/grants.ts';
import { AgentConfigSchema, type AgentConfigInput } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';

function agent(memory: AgentConfigInput['memory'], grants: string[] = ['hub:read']): AgentDefinition {
  return { name: 'keeper', config: AgentConfigSchema.parse({ name: 'keeper', type: 'llm', brain: { model: 'm' }, capabilities: { grants }, memory }), systemPrompt: '', files: { config: 'c', prompt: 'p' } };
}
const ctx = (key: string) => ({ signal: new AbortController().signal, callId: 'c', idempotencyKey: key, step: 1 });
/** The operator's audience: every entry, notes general (the tools' own behaviour, before audiences). */
const OPERATOR: MemoryAudience = { kind: 'operator' };

describe('memory tools', () => {
  it('grants: implied by memory.enabled; listed memory grants are exactly what the agent gets; none without memory', () => {
    expect(effectiveGrants(agent({ enabled: true }).config)).toEqual(['hub:read', 'memory:read', 'memory:write']);
    const readOnly = effectiveGrants(agent({ enabled: true }, ['hub:read', 'memory:read']).config);
    expect(hasGrant(readOnly, 'memory:read')).toBe(true);
    expect(hasGrant(readOnly, 'memory:write')).toBe(false);
    expect(effectiveGrants(agent(undefined).config)).toEqual(['hub:read']);
    expect(effectiveGrants(agent({ enabled: false }).config)).toEqual(['hub:read']);
  });

  it('are offered only with memory on; a save is keyed by the call, redacted, and found by memory_search', async () => {
    const store = new SqliteMemoryStore(':memory:');
    const memory = new AgentMemory({ store, redact: (t) => new Redactor(['secret-value-123456']).redact(t), logger: pino({ level: 'silent' }) });
    expect(memoryTools(memory, agent(undefined), OPERATOR)).toEqual([]);
    const def = agent({ enabled: true });
    const tools = new ToolRegistry(memoryTools(memory, def, OPERATOR), effectiveGrants(def.config));
    const save = tools.get('memory_save')!;
    expect(await save.execute({ text: 'Standup at 10:00; the token is secret-value-123456' }, ctx('act:1:0'))).toEqual({ status: 'ok', content: 'Saved.' });
    expect(await save.execute({ text: 'Standup at 10:00; the token is secret-value-123456' }, ctx('act:1:0'))).toEqual({ status: 'ok', content: 'Already saved.' });
    expect(await save.execute({ text: '  ' }, ctx('act:1:1'))).toMatchObject({ status: 'error' });
    const found = await tools.get('memory_search')!.execute({ query: 'standup', limit: 5 }, ctx('act:1:2'));
    expect(found.content).toContain('Standup at 10:00');
    expect(found.content).toContain(REDACTED);
    expect(found.content).not.toContain('secret-value-123456');
    expect((await tools.get('memory_search')!.execute({ query: 'lunch' }, ctx('act:1:3'))).content).toBe('Nothing remembered matches.');
    const [entry] = await store.search('keeper', { strategy: 'recent', limit: 1 });
    expect(entry!.entry).toMatchObject({ kind: 'note', recalls: 1 });
    // An agent that recalls by `recent` still searches by its query.
    const recent = agent({ enabled: true, retrieval: { strategy: 'recent' } });
    await memoryTools(memory, recent, OPERATOR)[0]!.execute({ text: 'lunch is at noon' }, ctx('act:2:0'));
    expect((await memoryTools(memory, recent, OPERATOR)[1]!.execute({ query: 'standup' }, ctx('act:2:1'))).content).not.toContain('lunch');
  });

  it("memory_save keeps a note for this conversation's people, or with scope general for everyone; memory_search sees what the run may", async () => {
    const store = new SqliteMemoryStore(':memory:');
    const memory = new AgentMemory({ store, redact: (t) => t, logger: pino({ level: 'silent' }) });
    const def = agent({ enabled: true });
    const forDana = new ToolRegistry(memoryTools(memory, def, personAudience('keeper', 'dana', ['erin'])), effectiveGrants(def.config));
    await forDana.get('memory_save')!.execute({ text: 'dana prefers the blue build' }, ctx('act:3:0'));
    await forDana.get('memory_save')!.execute({ text: 'the blue build ships on Fridays', scope: 'general' }, ctx('act:3:1'));
    const refused = await forDana.get('memory_save')!.execute({ text: 'x', scope: 'everyone' }, ctx('act:3:2'));
    expect(refused.status).toBe('error');
    expect(refused.content).toContain('`scope` is "conversation" or "general"');
    const search = (who: string) => memoryTools(memory, def, personAudience('keeper', who, []))[1]!.execute({ query: 'blue build' }, ctx(`act:4:${who}`));
    expect((await search('dana')).content).toContain('dana prefers the blue build');
    expect((await search('erin')).content).toContain('dana prefers the blue build'); // erin was in that thread
    const fred = (await search('fred')).content;
    expect(fred).not.toContain('dana prefers');
    expect(fred).toContain('ships on Fridays');
  });

  it('doctor warns of embedding_search without an embeddings endpoint, and of nothing else', () => {
    const embedding = agent({ enabled: true, retrieval: { strategy: 'embedding_search' } }).config.memory;
    expect(recallWarning(embedding, false)).toContain('recalls by keyword');
    expect(recallWarning(embedding, true)).toBeUndefined();
    expect(recallWarning(agent({ enabled: true, retrieval: { strategy: 'keyword' } }).config.memory, false)).toBeUndefined();
    expect(recallWarning(agent({ enabled: false, retrieval: { strategy: 'embedding_search' } }).config.memory, false)).toBeUndefined();
  });
});
