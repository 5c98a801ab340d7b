// A store opened on first use: a daemon whose agents never remember creates no file and opens no connection.
// A failed open is retried on the next call (the database may come up later).
import type { Distillation, MemoryEntry, MemoryQuery, MemoryStore, NewMemory, Recalled } from './memory-store.ts';

export class LazyMemoryStore implements MemoryStore {
  readonly #open: () => Promise<MemoryStore>;
  #store: Promise<MemoryStore> | undefined;

  constructor(open: () => Promise<MemoryStore>) {
    this.#open = open;
  }

  #get(): Promise<MemoryStore> {
    this.#store ??= this.#open().catch((err: unknown) => {
      this.#store = undefined;
      throw err;
    });
    return this.#store;
  }

  async write(agent: string, entries: readonly NewMemory[]): Promise<number> {
    return (await this.#get()).write(agent, entries);
  }
  async search(agent: string, query: MemoryQuery): Promise<Recalled[]> {
    return (await this.#get()).search(agent, query);
  }
  async current(agent: string, keys: readonly string[]): Promise<MemoryEntry[]> {
    return (await this.#get()).current(agent, keys);
  }
  async distil(agent: string, d: Distillation): Promise<boolean> {
    return (await this.#get()).distil(agent, d);
  }
  async markRecalled(agent: string, ids: readonly string[]): Promise<void> {
    return (await this.#get()).markRecalled(agent, ids);
  }
  async size(agent: string): Promise<number> {
    return (await this.#get()).size(agent);
  }
  async count(agent: string): Promise<number> {
    return (await this.#get()).count(agent);
  }
  async evict(agent: string, maxBytes: number): Promise<number> {
    return (await this.#get()).evict(agent, maxBytes);
  }
  async forget(agent: string, id: string): Promise<boolean> {
    return (await this.#get()).forget(agent, id);
  }
  async forgetAll(agent: string): Promise<number> {
    return (await this.#get()).forgetAll(agent);
  }
  async forgetPerson(agent: string, person: string): Promise<number> {
    return (await this.#get()).forgetPerson(agent, person);
  }
  async close(): Promise<void> {
    const opened = this.#store;
    this.#store = undefined;
    if (opened) await (await opened.catch(() => undefined))?.close();
  }
}
