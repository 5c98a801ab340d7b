// What the daemon runs, for `warren status`, `warren agents` and the watch page: at each load the daemon writes
// the hash of every definition it loaded (store/parse-definition.ts) and since when it runs that version into
// Redis; a reader compares them with the files on disk now. Status read the folder alone before, so it said
// `ready` for an agent whose daemon ran an older definition (or none).
import { z } from 'zod';
import type { RedisClient } from '../../redis/scripts.ts';
import { keyLayout, type KeySpace } from '../../redis/key-layout.ts';
import type { AgentDefinition } from '../../store/definition.ts';

/** One definition as the daemon runs it. */
export interface LoadedDefinition {
  hash: string;
  /** When the daemon first loaded this version (ISO); a reload of unchanged files keeps it. */
  loaded_at: string;
}

/** What status shows of an agent's definition: what runs, and whether the files on disk now say otherwise. */
export interface DefinitionView extends LoadedDefinition {
  differs_on_disk: boolean;
}

const LoadedSchema = z.object({ hash: z.string().min(1), loaded_at: z.string().min(1) });

/** The daemon's side: remembers since when each version runs, and writes the whole set at each load. */
export class LoadedDefinitionsPublisher {
  readonly #redis: RedisClient;
  readonly #key: string;
  #current = new Map<string, LoadedDefinition>();

  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#key = keyLayout(space).home.loadedDefinitions;
  }

  /** Replaces what Redis says the daemon runs with `defs` (one MULTI: a reader never sees half a set). */
  async publish(defs: readonly AgentDefinition[], now: Date): Promise<void> {
    this.#current = loadedVersions(this.#current, defs, now);
    const m = this.#redis.multi().del(this.#key);
    if (this.#current.size) m.hset(this.#key, Object.fromEntries([...this.#current].map(([name, l]) => [name, JSON.stringify(l)])));
    await m.exec();
  }
}

/** Each definition's hash, with its load time kept from `before` when the hash did not change (pure). */
export function loadedVersions(before: ReadonlyMap<string, LoadedDefinition>, defs: readonly AgentDefinition[], now: Date): Map<string, LoadedDefinition> {
  const out = new Map<string, LoadedDefinition>();
  for (const d of defs) {
    if (d.hash === undefined) continue;
    const prev = before.get(d.name);
    out.set(d.name, prev?.hash === d.hash ? prev : { hash: d.hash, loaded_at: now.toISOString() });
  }
  return out;
}

/** What a daemon last published; undefined when no daemon ever did (or Redis holds something unreadable). */
export async function readLoadedDefinitions(redis: RedisClient, space: KeySpace): Promise<Map<string, LoadedDefinition> | undefined> {
  const raw = await redis.hgetall(keyLayout(space).home.loadedDefinitions);
  const entries = Object.entries(raw).flatMap(([name, text]): Array<[string, LoadedDefinition]> => {
    try {
      const parsed = LoadedSchema.safeParse(JSON.parse(text));
      return parsed.success ? [[name, parsed.data]] : [];
    } catch {
      return [];
    }
  });
  return entries.length ? new Map(entries) : undefined;
}

/**
 * An agent's definition as the daemon runs it against its files now (pure): null when no daemon loaded it; differs
 * when the files hash otherwise, or no longer load (`onDisk` undefined: missing or broken).
 */
export function definitionView(loaded: LoadedDefinition | undefined, onDisk: string | undefined): DefinitionView | null {
  if (!loaded) return null;
  return { ...loaded, differs_on_disk: loaded.hash !== onDisk };
}

/** The line status prints for an agent whose running definition is not the one on disk. */
export function driftNotice(name: string, view: DefinitionView | null, daemonPublished: boolean): string | undefined {
  if (view?.differs_on_disk) return `${name}: its definition on disk differs from what the daemon runs (loaded ${view.loaded_at}): run \`warren reload\` or check the daemon log`;
  if (!view && daemonPublished) return `${name}: not loaded by the daemon (its definition on disk is newer than the daemon's last load): run \`warren reload\` or check the daemon log`;
  return undefined;
}

/** A fleet reading with no daemon's definitions in it (pure): each agent's definition view null, none published. */
export function withoutPublishedDefinitions<F extends { loaded: ReadonlyMap<string, LoadedDefinition> | undefined; agents: ReadonlyArray<{ definition?: DefinitionView | null }> }>(fleet: F): F {
  return { ...fleet, loaded: undefined, agents: fleet.agents.map((a) => (a.definition === undefined ? a : { ...a, definition: null })) };
}
