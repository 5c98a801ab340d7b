// memory_save and memory_search, the built-in tools of agents with memory on: a note kept on purpose, and a
// search of what the agent remembers (by its configured strategy). LLM agents call them in process; CLI agents
// through `warren mcp hub`, whose server reaches the daemon's gateway (services/hub-gateway.ts). Either way the
// work is done by one backend over AgentMemory (`agentMemoryBackend`): it bounds the text and the limit,
// redacts, and keys a save by the tool call, so a retried activation does not save twice.
import type { Tool } from '../agent-loop/tools.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { memoryOf, type AgentMemory } from './agent-memory.ts';
import type { MemoryAudience } from './audience.ts';
import { MEMORY_READ, MEMORY_WRITE } from './memory-grants.ts';
import { excerpt, MAX_ENTRY_CHARS } from './remember.ts';

export const SEARCH_MAX = 20;

/** Whom a saved note is recalled for: the run's people (the default), or everyone (general knowledge). */
export type NoteScope = 'conversation' | 'general';
export const NOTE_SCOPES: readonly NoteScope[] = ['conversation', 'general'];

/** What the tools do, wherever the memory is: in process, or behind the gateway. */
export interface MemoryToolBackend {
  /** True when the note is new (false: the same call saved it already). Absent: memory is read-only here. */
  save?(key: string, text: string, scope: NoteScope, signal?: AbortSignal): Promise<boolean>;
  /** The hits as dated lines, best first; '' when nothing matches. `limit` absent: the agent's max_context_items. */
  search(query: string, limit: number | undefined, signal?: AbortSignal): Promise<string>;
}

/** The backend over an agent's own memory, for a run answering `audience`; undefined for an agent without memory. */
export function agentMemoryBackend(memory: AgentMemory, def: AgentDefinition, audience: MemoryAudience): MemoryToolBackend | undefined {
  const settings = memoryOf(def);
  if (!settings) return undefined;
  // A search has a query: an agent that recalls by `recent` searches by keyword.
  const by = settings.retrieval.strategy === 'recent' ? { ...settings, retrieval: { ...settings.retrieval, strategy: 'keyword' as const } } : settings;
  return {
    ...(memory.readOnly ? {} : { save: (key: string, text: string, scope: NoteScope) => memory.save(def, `tool:${key}`, excerpt(text, MAX_ENTRY_CHARS), audience, scope) }),
    async search(query, limit, signal) {
      const n = limit === undefined ? settings.retrieval.max_context_items : Math.min(Math.max(Math.trunc(limit), 1), SEARCH_MAX);
      const hits = await memory.search(def, by, query, n, audience, signal);
      if (hits.length === 0) return '';
      await memory.markRecalled(def.name, hits.map((h) => h.entry.id));
      return hits.map((h) => `- [${new Date(h.entry.createdAt).toISOString().slice(0, 10)}] ${h.entry.text}`).join('\n');
    },
  };
}

/** The two tools over a backend (memory_search only, when it cannot save). */
export function memoryToolsOver(backend: MemoryToolBackend): Tool[] {
  const store = backend.save?.bind(backend);
  const save: Tool = {
    definition: {
      name: 'memory_save',
      description: `Keep a note for your later activations (a fact, a promise, a correction). At most ${MAX_ENTRY_CHARS} characters; never store secrets. By default the note is recalled only when you answer the people of this conversation; scope "general" recalls it for everyone (use it only for what anyone may know).`,
      parameters: {
        type: 'object',
        properties: {
          text: { type: 'string', description: 'the note' },
          scope: { type: 'string', enum: [...NOTE_SCOPES], description: 'conversation (default): for the people of this conversation; general: for everyone' },
        },
        required: ['text'],
        additionalProperties: false,
      },
    },
    readOnly: false,
    grant: MEMORY_WRITE,
    async execute(args, ctx) {
      const text = typeof args.text === 'string' ? args.text.trim() : '';
      if (!text) return { status: 'error', content: 'memory_save needs a non-empty `text`.' };
      const scope = args.scope ?? 'conversation';
      if (!isNoteScope(scope)) return { status: 'error', content: `memory_save: \`scope\` is "conversation" or "general", not ${JSON.stringify(scope)}.` };
      const saved = await store!(ctx.idempotencyKey, text, scope, ctx.signal);
      return { status: 'ok', content: saved ? 'Saved.' : 'Already saved.' };
    },
  };
  const search: Tool = {
    definition: {
      name: 'memory_search',
      description: 'Search what you remember from earlier activations. Returns dated notes, best match first.',
      parameters: {
        type: 'object',
        properties: { query: { type: 'string', description: 'what to look for' }, limit: { type: 'integer', minimum: 1, maximum: SEARCH_MAX, description: 'how many (default: your max_context_items)' } },
        required: ['query'],
        additionalProperties: false,
      },
    },
    readOnly: true,
    grant: MEMORY_READ,
    async execute(args, ctx) {
      const query = typeof args.query === 'string' ? args.query : '';
      const limit = typeof args.limit === 'number' && Number.isFinite(args.limit) ? args.limit : undefined;
      const found = await backend.search(query, limit, ctx.signal);
      return { status: 'ok', content: found || 'Nothing remembered matches.' };
    },
  };
  return store ? [save, search] : [search];
}

/** The tools of an LLM agent with memory on (none without), for a run answering `audience`. */
export function memoryTools(memory: AgentMemory, def: AgentDefinition, audience: MemoryAudience): Tool[] {
  const backend = agentMemoryBackend(memory, def, audience);
  return backend ? memoryToolsOver(backend) : [];
}

export function isNoteScope(v: unknown): v is NoteScope {
  return typeof v === 'string' && (NOTE_SCOPES as readonly string[]).includes(v);
}
