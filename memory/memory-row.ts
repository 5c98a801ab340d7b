// A stored entry as both stores read it back (one row shape, snake_case columns), and the entry it stands for.
import { peopleOfColumn, type MemoryEntry, type MemoryKind } from './memory-store.ts';

export interface MemoryRow {
  id: string;
  agent: string;
  key: string;
  kind: string;
  text: string;
  who: string | null;
  post_id: string | null;
  community: string | null;
  /** `|alice|bob|` (memory-store.ts peopleColumn), NULL for general knowledge. */
  people: string | null;
  /** Epoch ms; PostgreSQL hands a bigint back as a string. */
  created_at: number | string;
  recalls: number;
  bytes: number;
}

export function entryOfRow(r: MemoryRow): MemoryEntry {
  return {
    id: r.id,
    agent: r.agent,
    key: r.key,
    kind: r.kind as MemoryKind,
    text: r.text,
    ...(r.who !== null ? { who: r.who } : {}),
    ...(r.post_id !== null ? { postId: r.post_id } : {}),
    ...(r.community !== null ? { community: r.community } : {}),
    ...(r.people !== null ? { people: peopleOfColumn(r.people) } : {}),
    createdAt: Number(r.created_at),
    recalls: Number(r.recalls),
    bytes: Number(r.bytes),
  };
}
