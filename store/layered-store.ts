// Several stores read as one (`store.include` beside `store.path`): the demo's example agents from examples/ and
// the operator's own from a folder git ignores, so `warren init agent` never writes into the shipped examples.
// Each agent keeps the skills and templates of the store it came from; a name defined twice is an error on the
// later file (the first is kept), never a silent override.
import type { AgentDefinition, DefinitionStore, LoadResult } from './definition.ts';
import type { Problem } from './problems.ts';

export class LayeredStore implements DefinitionStore {
  readonly location: string;
  /** Each store's location, in load order. */
  readonly locations: readonly string[];
  readonly #stores: ReadonlyArray<DefinitionStore & { close?: () => void }>;

  constructor(stores: ReadonlyArray<DefinitionStore & { close?: () => void }>) {
    if (stores.length === 0) throw new Error('a layered store needs at least one store');
    this.#stores = stores;
    this.locations = stores.map((s) => s.location);
    this.location = this.locations.join(', ');
  }

  /** Every store is read (a store that cannot be reached throws, as a single store would). */
  async load(): Promise<LoadResult> {
    return mergeLoads(await Promise.all(this.#stores.map((s) => s.load())));
  }

  watch(onChange: (noticed?: string) => void): () => void {
    const stops = this.#stores.map((s) => s.watch(onChange));
    return () => {
      for (const stop of stops) stop();
    };
  }

  close(): void {
    for (const s of this.#stores) s.close?.();
  }
}

/** The loads of several stores as one: agents by first definition, every problem, shared definitions layered. */
export function mergeLoads(loads: readonly LoadResult[]): LoadResult {
  const byName = new Map<string, AgentDefinition>();
  const problems: Problem[] = [];
  for (const load of loads) {
    problems.push(...load.problems);
    for (const agent of load.agents) {
      const first = byName.get(agent.name);
      if (first) problems.push({ file: agent.files.config, field: 'name', message: `agent "${agent.name}" is defined in ${first.files.config} already (store.path and store.include must not share agent names); this one is not loaded`, severity: 'error' });
      else byName.set(agent.name, agent);
    }
  }
  // Later stores' skills and templates of the same name replace earlier ones, as a store's own replace built-ins.
  const skills = new Map(loads.flatMap((l) => l.shared.skills.map((s) => [s.name, s] as const)));
  const templates = Object.assign({}, ...loads.map((l) => l.shared.templates)) as Record<string, string>;
  const agentTemplates = Object.assign({}, ...loads.map((l) => l.shared.agentTemplates ?? {})) as NonNullable<LoadResult['shared']['agentTemplates']>;
  const parsedOnThreads = loads.reduce((sum, l) => sum + (l.parsedOnThreads ?? 0), 0);
  return { agents: [...byName.values()], problems, shared: { skills: [...skills.values()], templates, agentTemplates }, parsedOnThreads };
}
