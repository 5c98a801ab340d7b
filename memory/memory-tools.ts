// memory_save and memory_search, the built-in tools of LLM agents with memory on: a note kept on purpose, and a
// search of what the agent remembers (by its configured strategy). What they store passes the same redaction
// as every entry; a save is keyed by the tool call, so a retried activation does not save twice.
import type { Tool } from '../agent-loop/tools.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { memoryOf, type AgentMemory } from './agent-memory.ts';
import { MEMORY_READ, MEMORY_WRITE } from './memory-grants.ts';
import { excerpt, MAX_ENTRY_CHARS } from './remember.ts';

const SEARCH_MAX = 20;

export function memoryTools(memory: AgentMemory, def: AgentDefinition): Tool[] {
  const settings = memoryOf(def);
  if (!settings) return [];
  const save: Tool = {
    definition: {
      name: 'memory_save',
      description: `Keep a note for your later activations (a fact, a promise, a correction). At most ${MAX_ENTRY_CHARS} characters; never store secrets.`,
      parameters: { type: 'object', properties: { text: { type: 'string', description: 'the note' } }, required: ['text'], additionalProperties: false },
    },
    readOnly: false,
    grant: MEMORY_WRITE,
    async execute(args, ctx) {
      const text = typeof args.text === 'string' ? excerpt(args.text, MAX_ENTRY_CHARS) : '';
      if (!text) return { status: 'error', content: 'memory_save needs a non-empty `text`.' };
      const saved = await memory.save(def, `tool:${ctx.idempotencyKey}`, text);
      return { status: 'ok', content: saved ? 'Saved.' : 'Already saved.' };
    },
  };
  const search: Tool = {
    definition: {
      name: 'memory_search',
      description: 'Search what you remember from earlier activations. Returns dated notes, best match first.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string', description: 'what to look for' }, limit: { type: 'integer', minimum: 1, maximum: SEARCH_MAX, description: `how many (default ${settings.retrieval.max_context_items})` } },
        required: ['query'],
        additionalProperties: false,
      },
    },
    readOnly: true,
    grant: MEMORY_READ,
    async execute(args, ctx) {
      const query = typeof args.query === 'string' ? args.query : '';
      const limit = typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(Math.max(args.limit, 1), SEARCH_MAX) : settings.retrieval.max_context_items;
      // A search has a query: an agent that recalls by `recent` searches by keyword.
      const by = settings.retrieval.strategy === 'recent' ? { ...settings, retrieval: { ...settings.retrieval, strategy: 'keyword' as const } } : settings;
      const hits = await memory.search(def, by, query, limit, ctx.signal);
      if (hits.length === 0) return { status: 'ok', content: 'Nothing remembered matches.' };
      await memory.store.markRecalled(def.name, hits.map((h) => h.entry.id));
      return { status: 'ok', content: hits.map((h) => `- [${new Date(h.entry.createdAt).toISOString().slice(0, 10)}] ${h.entry.text}`).join('\n') };
    },
  };
  return [save, search];
}
