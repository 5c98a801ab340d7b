// What an agent remembers, and the one interface both stores (SQLite, PostgreSQL) implement. The decisions they
// share (query words, scores, entry size, eviction order) live in memory/ as pure functions; a store only keeps
// rows and runs its own full-text ranking.

/**
 * Which `remember` switch wrote an entry, the agent itself through memory_save, or a short fact the agent's model
 * distilled from exchanges (`memory.distill`, memory/distiller.ts).
 */
export type MemoryKind = 'conversation' | 'project' | 'decision' | 'feedback' | 'note' | 'fact';

export interface NewMemory {
  /** Unique per agent: writing the same key again is a no-op (a retried activation does not remember twice). */
  key: string;
  kind: MemoryKind;
  text: string;
  /** Who the exchange was with, where it happened. */
  who?: string;
  /**
   * The people the entry came from (the thread's authors, whoever wrote to the agent): under `memory.scope:
   * person` only their runs recall it. Absent or empty: general knowledge, recalled for everyone.
   */
  people?: readonly string[];
  postId?: string;
  community?: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** Present when the agent recalls by embedding_search. */
  embedding?: readonly number[];
}

export interface MemoryEntry extends Omit<NewMemory, 'embedding'> {
  id: string;
  agent: string;
  /** How often the entry was placed in a context or found by memory_search: evicted last when high. */
  recalls: number;
  /** Bytes the entry counts against `max_size_mb` (entrySize). */
  bytes: number;
}

/**
 * Retired entries (a fact updated or deleted by a later distillation, an exchange distilled into facts) stay
 * stored until evicted (first), but no query returns them.
 */
export type MemoryQuery = (
  | { strategy: 'recent'; limit: number }
  /** Full-text ranking over the query's words; scores normalised to the best hit (1) and cut at `threshold`. */
  | { strategy: 'keyword'; text: string; limit: number; threshold?: number }
  /** Cosine similarity to `embedding`, cut at `threshold`. */
  | { strategy: 'embedding'; embedding: readonly number[]; limit: number; threshold?: number }
) & {
  /** Absent: every entry. Otherwise general entries, and `person`'s when given (memory/audience.ts). */
  visibleTo?: { person?: string };
  /** Facts only; with `people`, only those whose people are exactly these ([] = general): the distiller's view. */
  facts?: { people?: readonly string[] };
};

export interface Recalled {
  entry: MemoryEntry;
  /** 1 for `recent`; the normalised keyword score or the cosine otherwise. */
  score: number;
}

/** One distillation, applied at once or not at all (memory/distiller.ts). */
export interface Distillation {
  /** The exchange's entries the facts were distilled from: retired. */
  sources: readonly string[];
  /** New facts (an update's new version included). */
  add: readonly NewMemory[];
  /** Facts the distillation updated or deleted: retired. */
  retire: readonly string[];
  /** Epoch ms: when they were retired. */
  at: number;
}

export interface MemoryStore {
  /** Writes the entries whose keys are new for the agent; returns how many were. */
  write(agent: string, entries: readonly NewMemory[]): Promise<number>;
  /** Best first (`recent`: newest first). */
  search(agent: string, query: MemoryQuery): Promise<Recalled[]>;
  /** The agent's current (not retired) entries with these keys. */
  current(agent: string, keys: readonly string[]): Promise<MemoryEntry[]>;
  /**
   * Applies a distillation in one transaction: false, and nothing changed, when a source or a fact to retire was
   * retired already (another attempt distilled the exchange, or changed the fact, first).
   */
  distil(agent: string, d: Distillation): Promise<boolean>;
  /** Counts a recall of each entry (eviction spares what is recalled). */
  markRecalled(agent: string, ids: readonly string[]): Promise<void>;
  /** Bytes held for the agent (the sum of its entries' `bytes`). */
  size(agent: string): Promise<number>;
  count(agent: string): Promise<number>;
  /** Deletes retired, then least-recalled, then oldest, entries until the agent holds at most `maxBytes`; returns how many went. */
  evict(agent: string, maxBytes: number): Promise<number>;
  forget(agent: string, id: string): Promise<boolean>;
  /** Erases everything the agent remembers; returns how many entries went. */
  forgetAll(agent: string): Promise<number>;
  /** Erases every entry of the agent that came from `person` (alone or with others); returns how many went. */
  forgetPerson(agent: string, person: string): Promise<number>;
  close(): Promise<void>;
}

/** What an entry counts against `max_size_mb`: its text and fields as UTF-8, and 4 bytes per vector component. */
export function entrySize(e: NewMemory): number {
  const fields = [e.key, e.kind, e.text, e.who ?? '', e.postId ?? '', e.community ?? '', peopleColumn(e.people) ?? ''].join('');
  return Buffer.byteLength(fields, 'utf8') + 4 * (e.embedding?.length ?? 0) + 16;
}

/** The entries to delete so the agent holds at most `maxBytes`, given them in eviction order (retired, least recalled, oldest). */
export function toEvict(inOrder: ReadonlyArray<{ id: string; bytes: number }>, total: number, maxBytes: number): string[] {
  const ids: string[] = [];
  let left = total;
  for (const e of inOrder) {
    if (left <= maxBytes) break;
    ids.push(e.id);
    left -= e.bytes;
  }
  return ids;
}

/** Scores relative to the best hit (1), cut at the threshold: full-text ranks differ by store, their order does not. */
export function normaliseScores<T extends { score: number }>(hits: readonly T[], threshold = 0): T[] {
  const best = hits.reduce((m, h) => Math.max(m, h.score), 0);
  if (best <= 0) return [];
  return hits.map((h) => ({ ...h, score: h.score / best })).filter((h) => h.score >= threshold);
}

/**
 * The people column both stores keep: `|alice|bob|`, so one person is found with a plain substring test
 * (`|name|`); NULL for general knowledge. Hub names hold no `|`; one that did would be dropped, not matched.
 */
export function peopleColumn(people: readonly string[] | undefined): string | null {
  const names = [...new Set((people ?? []).filter((p) => p.length > 0 && !p.includes('|')))].sort();
  return names.length ? `|${names.join('|')}|` : null;
}

/** The people of a stored column (the inverse of peopleColumn). */
export function peopleOfColumn(column: string | null): string[] {
  return column ? column.split('|').filter(Boolean) : [];
}

/** The substring a person's entries hold in the people column. */
export function personNeedle(person: string): string {
  return `|${person}|`;
}
