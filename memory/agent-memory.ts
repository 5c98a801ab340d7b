// An agent's memory as the pipeline uses it: remember what an activation did, recall what fits the next task.
// The thin shell around a MemoryStore: it redacts before anything is stored, embeds when the agent recalls by
// embedding_search, keeps each agent under max_size_mb, and never fails an activation (memory is best effort:
// a store that is down is logged, the activation runs without it).
import type { Logger } from 'pino';
import type { AgentDefinition } from '../store/definition.ts';
import type { MemoryConfig } from '../store/agent-config.ts';
import { peopleOf, visibilityOf, type MemoryAudience } from './audience.ts';
import { DISTILLED_KINDS, Distiller, type DistillBudget, type DistillCost, type DistillModel } from './distiller.ts';
import type { Embedder } from './embeddings-client.ts';
import type { MemoryEntry, MemoryQuery, MemoryStore, NewMemory, Recalled } from './memory-store.ts';
import { recallStrategy, type RecallStrategy } from './recall-strategy.ts';
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
  /** The agents' own models, for `memory.distill`; absent: nothing is distilled. */
  distillModel?: DistillModel;
}

export interface MemoryUsage {
  entries: number;
  bytes: number;
}

const BYTES_PER_MB = 1024 * 1024;
/** Facts the distiller is shown: the best matches for the exchange, and the newest (a change may share no word with its fact). */
const RELATED_FACTS = 15;
const NEWEST_FACTS = 10;
const SHOWN_FACTS = 20;

/** The agent's memory settings when it has memory on; undefined otherwise. */
export function memoryOf(def: AgentDefinition): MemoryConfig | undefined {
  const m = def.config.memory;
  return m?.enabled ? m : undefined;
}

export class AgentMemory {
  readonly #o: AgentMemoryOptions;
  /** Agents already told (in the log) that their embedding_search runs as keyword. */
  readonly #fallbackLogged = new Set<string>();
  readonly #distiller: Distiller | undefined;

  constructor(opts: AgentMemoryOptions) {
    this.#o = opts;
    this.#distiller = opts.distillModel
      ? new Distiller({
          store: opts.store,
          model: opts.distillModel,
          redact: opts.redact,
          logger: opts.logger,
          related: (def, settings, text, people, signal) => this.#relatedFacts(def, settings, text, people, signal),
          embedded: (def, settings, entries) => this.#embedded(def, settings, entries),
          now: () => this.#now(),
        })
      : undefined;
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

  /** Whether remember() would do anything for this agent (its memory is on). */
  remembers(def: AgentDefinition): boolean {
    return memoryOf(def) !== undefined;
  }

  /**
   * Stores what the activation did, per the agent's `remember` switches; with `memory.distill` and a `budget`
   * (what the activation's turn left), distils the exchange into facts and returns what that cost.
   */
  async remember(def: AgentDefinition, what: ActivationMemory, budget?: DistillBudget): Promise<DistillCost | undefined> {
    const settings = memoryOf(def);
    if (!settings) return undefined;
    const entries = memoriesOf(settings, what, this.#now());
    await this.#write(def, settings, entries);
    if (!budget || !settings.distill || !this.#distiller || this.readOnly) return undefined;
    const keys = entries.filter((e) => DISTILLED_KINDS.has(e.kind)).map((e) => e.key);
    if (keys.length === 0) return undefined;
    const cost = await this.#distiller.distil(def, settings, keys, budget);
    await this.#evict(def, settings).catch((err: unknown) => void this.#o.logger.warn({ agent: def.name, err }, 'could not evict memory entries'));
    return cost;
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
    return this.#query(def, strategy, text, { limit, threshold, ...visibleTo }, signal);
  }

  async #query(def: AgentDefinition, strategy: RecallStrategy, text: string, q: Pick<MemoryQuery, 'visibleTo' | 'facts'> & { limit: number; threshold?: number }, signal?: AbortSignal): Promise<Recalled[]> {
    const { threshold, ...rest } = q;
    let query: MemoryQuery;
    if (strategy === 'embedding') {
      const [embedding] = await this.#o.embedder!.embed([this.#o.redact(text)], signal);
      query = { strategy: 'embedding', embedding: embedding!, threshold, ...rest };
    } else if (strategy === 'keyword') {
      query = { strategy: 'keyword', text, threshold, ...rest };
    } else {
      query = { strategy: 'recent', ...rest };
    }
    return this.#o.store.search(def.name, query);
  }

  /**
   * The current facts the distiller may see and change for an exchange with `people`: under `memory.scope: person`
   * only facts of exactly those people (general ones for an exchange with none), so one audience's facts are never
   * shown to, or changed by, another's exchange; under `agent`, every fact. Matched by the agent's strategy (no
   * threshold: the model judges), and the newest.
   */
  async #relatedFacts(def: AgentDefinition, settings: MemoryConfig, text: string, people: readonly string[], signal?: AbortSignal): Promise<MemoryEntry[]> {
    const facts = settings.scope === 'agent' ? {} : { people };
    const { strategy } = recallStrategy(settings, this.#o.embedder !== undefined);
    const [matched, newest] = await Promise.all([
      strategy === 'recent' ? [] : this.#query(def, strategy, text, { limit: RELATED_FACTS, facts }, signal),
      this.#query(def, 'recent', '', { limit: NEWEST_FACTS, facts }, signal),
    ]);
    const byId = new Map([...matched, ...newest].map((h) => [h.entry.id, h.entry]));
    return [...byId.values()].slice(0, SHOWN_FACTS);
  }

  async #write(def: AgentDefinition, settings: MemoryConfig, entries: NewMemory[]): Promise<number> {
    if (entries.length === 0 || this.readOnly) return 0;
    const log = this.#o.logger;
    try {
      const redacted = entries.map((e) => ({ ...e, text: this.#o.redact(e.text), ...(e.who ? { who: this.#o.redact(e.who) } : {}) }));
      const withVectors = await this.#embedded(def, settings, redacted);
      const written = await this.#o.store.write(def.name, withVectors);
      if (written > 0) await this.#evict(def, settings);
      return written;
    } catch (err) {
      log.warn({ agent: def.name, err }, 'could not store memory entries');
      return 0;
    }
  }

  async #evict(def: AgentDefinition, settings: MemoryConfig): Promise<void> {
    const evicted = await this.#o.store.evict(def.name, settings.max_size_mb * BYTES_PER_MB);
    if (evicted > 0) {
      this.#o.logger.info({ agent: def.name, evicted, max_size_mb: settings.max_size_mb }, 'memory over max_size_mb: retired, least recalled, oldest entries evicted');
      this.#o.onEvicted?.(def.name, evicted);
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
