// An agent's memory as the pipeline uses it: remember what an activation did, recall what fits the next task.
// The thin shell around a MemoryStore: it redacts before anything is stored, embeds when the agent recalls by
// embedding_search, keeps each agent under max_size_mb, and never fails an activation (memory is best effort:
// a store that is down is logged, the activation runs without it).
import type { Logger } from 'pino';
import type { AgentDefinition } from '../store/definition.ts';
import type { MemoryConfig } from '../store/agent-config.ts';
import { peopleOf, visibilityOf, type MemoryAudience } from './audience.ts';
import type { Embedder } from './embeddings-client.ts';
import type { MemoryEntry, MemoryQuery, MemoryStore, NewMemory, Recalled } from './memory-store.ts';
import { recallStrategy } from './recall-strategy.ts';
import { memoriesOf, type ActivationMemory } from './remember.ts';

export interface AgentMemoryOptions {
  store: MemoryStore;
  /** The daemon's redaction: no known secret or secret-shaped value is stored. */
  redact: (text: string) => string;
  logger: Logger;
  /** `memory.embeddings` in warren.yaml; absent: embedding_search falls back to keyword. */
  embedder?: Embedder;
  now?: () => number;
  /** Entries evicted for an agent over max_size_mb (metrics). */
  onEvicted?: (agent: string, count: number) => void;
  /** Recall only: nothing is remembered or saved (`warren run` without --post, a trial that changes nothing). */
  readOnly?: boolean;
}

export interface MemoryUsage {
  entries: number;
  bytes: number;
}

const BYTES_PER_MB = 1024 * 1024;

/** The agent's memory settings when it has memory on; undefined otherwise. */
export function memoryOf(def: AgentDefinition): MemoryConfig | undefined {
  const m = def.config.memory;
  return m?.enabled ? m : undefined;
}

export class AgentMemory {
  readonly #o: AgentMemoryOptions;
  /** Agents already told (in the log) that their embedding_search runs as keyword. */
  readonly #fallbackLogged = new Set<string>();

  constructor(opts: AgentMemoryOptions) {
    this.#o = opts;
  }

  get store(): MemoryStore {
    return this.#o.store;
  }

  get readOnly(): boolean {
    return this.#o.readOnly === true;
  }

  /** How much the agent remembers: entries, and bytes against max_size_mb (status, the watch page). */
  async memoryUsage(agent: string): Promise<MemoryUsage> {
    const [entries, bytes] = await Promise.all([this.#o.store.count(agent), this.#o.store.size(agent)]);
    return { entries, bytes };
  }

  /** Stores what the activation did, per the agent's `remember` switches. */
  async remember(def: AgentDefinition, what: ActivationMemory): Promise<void> {
    const settings = memoryOf(def);
    if (!settings) return;
    await this.#write(def, settings, memoriesOf(settings, what, this.#now()));
  }

  /**
   * A note the agent keeps on purpose (memory_save): it came from the run's people unless the agent saves it as
   * general knowledge (`scope: 'general'`).
   */
  async save(def: AgentDefinition, key: string, text: string, audience: MemoryAudience, scope: 'conversation' | 'general' = 'conversation'): Promise<boolean> {
    const settings = memoryOf(def);
    if (!settings) return false;
    const people = peopleOf(audience, scope);
    return (await this.#write(def, settings, [{ key, kind: 'note', text, createdAt: this.#now(), ...(people.length ? { people } : {}) }])) > 0;
  }

  /** Up to max_context_items entries for the task that `audience` may see, best first; counted as recalled. Never throws. */
  async recall(def: AgentDefinition, taskText: string, audience: MemoryAudience, signal?: AbortSignal): Promise<MemoryEntry[]> {
    const settings = memoryOf(def);
    if (!settings) return [];
    try {
      // The agent's own name (its @mention) is in nearly every task and entry: it would rank nothing.
      const query = taskText.replace(new RegExp(`@?\\b${def.name}\\b`, 'gi'), ' ');
      const hits = await this.search(def, settings, query, settings.retrieval.max_context_items, audience, signal);
      await this.markRecalled(def.name, hits.map((h) => h.entry.id));
      return hits.map((h) => h.entry);
    } catch (err) {
      this.#o.logger.warn({ agent: def.name, err }, 'memory recall failed; the activation runs without it');
      return [];
    }
  }

  /** Counts a recall of each entry (eviction spares them); not from a read-only run, which changes nothing. */
  async markRecalled(agent: string, ids: readonly string[]): Promise<void> {
    if (ids.length && !this.readOnly) await this.#o.store.markRecalled(agent, ids);
  }

  /** The agent's entries `audience` may see for a query, by its configured strategy (the context and memory_search). */
  async search(def: AgentDefinition, settings: MemoryConfig, text: string, limit: number, audience: MemoryAudience, signal?: AbortSignal): Promise<Recalled[]> {
    const threshold = settings.retrieval.relevance_threshold;
    const { strategy, fellBack } = recallStrategy(settings, this.#o.embedder !== undefined);
    if (fellBack && !this.#fallbackLogged.has(def.name)) {
      this.#fallbackLogged.add(def.name);
      this.#o.logger.warn({ agent: def.name }, 'memory.retrieval.strategy is embedding_search but warren.yaml has no memory.embeddings; recalling by keyword');
    }
    const seen = visibilityOf(settings, audience);
    const visibleTo = seen.all ? {} : { visibleTo: seen.person === undefined ? {} : { person: seen.person } };
    let query: MemoryQuery;
    if (strategy === 'embedding') {
      const [embedding] = await this.#o.embedder!.embed([this.#o.redact(text)], signal);
      query = { strategy: 'embedding', embedding: embedding!, limit, threshold, ...visibleTo };
    } else if (strategy === 'keyword') {
      query = { strategy: 'keyword', text, limit, threshold, ...visibleTo };
    } else {
      query = { strategy: 'recent', limit, ...visibleTo };
    }
    return this.#o.store.search(def.name, query);
  }

  async #write(def: AgentDefinition, settings: MemoryConfig, entries: NewMemory[]): Promise<number> {
    if (entries.length === 0 || this.readOnly) return 0;
    const log = this.#o.logger;
    try {
      const redacted = entries.map((e) => ({ ...e, text: this.#o.redact(e.text), ...(e.who ? { who: this.#o.redact(e.who) } : {}) }));
      const withVectors = await this.#embedded(def, settings, redacted);
      const written = await this.#o.store.write(def.name, withVectors);
      if (written > 0) {
        const evicted = await this.#o.store.evict(def.name, settings.max_size_mb * BYTES_PER_MB);
        if (evicted > 0) {
          log.info({ agent: def.name, evicted, max_size_mb: settings.max_size_mb }, 'memory over max_size_mb: least recalled, oldest entries evicted');
          this.#o.onEvicted?.(def.name, evicted);
        }
      }
      return written;
    } catch (err) {
      log.warn({ agent: def.name, err }, 'could not store memory entries');
      return 0;
    }
  }

  /** Vectors for agents that recall by embedding; an endpoint that fails leaves them out (keyword still finds them). */
  async #embedded(def: AgentDefinition, settings: MemoryConfig, entries: NewMemory[]): Promise<NewMemory[]> {
    if (recallStrategy(settings, this.#o.embedder !== undefined).strategy !== 'embedding') return entries;
    try {
      const vectors = await this.#o.embedder!.embed(entries.map((e) => e.text));
      return entries.map((e, i) => ({ ...e, embedding: vectors[i] }));
    } catch (err) {
      this.#o.logger.warn({ agent: def.name, err }, 'embeddings unavailable; memory stored without vectors');
      return entries;
    }
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }
}
