// The agents this daemon runs: loaded from the store, problems logged, unrunnable agents skipped loudly,
// and each runnable agent registered on the hub if it is not there yet.
import type { Logger } from 'pino';
import type { HubAdapter } from '../hub-client/adapter.ts';
import { HubError } from '../hub-client/errors.ts';
import { executorTypeOf } from '../store/agent-config.ts';
import type { AgentDefinition, DefinitionStore } from '../store/definition.ts';
import { formatProblem } from '../store/problems.ts';
import type { ExecutorRegistry } from './executor-registry.ts';

export class AgentRegistry {
  readonly #store: DefinitionStore;
  readonly #executors: ExecutorRegistry;
  readonly #logger: Logger;
  #agents = new Map<string, AgentDefinition>();
  #runnable: ReadonlySet<string> = new Set();

  constructor(opts: { store: DefinitionStore; executors: ExecutorRegistry; logger: Logger }) {
    this.#store = opts.store;
    this.#executors = opts.executors;
    this.#logger = opts.logger;
  }

  get(name: string): AgentDefinition | undefined {
    return this.#agents.get(name);
  }

  runnable(): ReadonlySet<string> {
    return this.#runnable;
  }

  all(): AgentDefinition[] {
    return [...this.#agents.values()];
  }

  /** Reloads from the store. A broken agent is reported and left out; the others keep running. */
  async reload(): Promise<void> {
    const { agents, problems } = await this.#store.load();
    for (const p of problems) {
      const line = formatProblem(p);
      if (p.severity === 'error') this.#logger.error({ file: p.file, line: p.line }, `agent definition problem, agent skipped: ${line}`);
      else this.#logger.warn({ file: p.file, line: p.line }, line);
    }
    const runnable = new Set<string>();
    for (const def of agents) {
      const r = this.#executors.resolve(def);
      if ('executor' in r) runnable.add(def.name);
      else this.#logger.warn({ agent: def.name }, `agent ${def.name} skipped: ${r.unavailable}`);
    }
    this.#agents = new Map(agents.map((a) => [a.name, a]));
    this.#runnable = runnable;
    // Names only for a readable number of agents: with thousands the line would be the log.
    this.#logger.info({ loaded: agents.length, runnable: runnable.size <= 50 ? [...runnable] : runnable.size, store: this.#store.location }, 'agent definitions loaded');
  }

  /** Makes sure every runnable agent exists on the hub; an agent already there is left as it is. */
  async registerOnHub(hub: HubAdapter): Promise<void> {
    const existing = new Set((await hub.listAgents()).map((a) => a.name));
    for (const name of this.#runnable) {
      if (existing.has(name)) continue;
      const def = this.#agents.get(name);
      if (!def) continue;
      try {
        await hub.registerAgent({
          name,
          display_name: def.config.display_name,
          description: def.config.description,
          type: hubAgentType(def),
        });
        this.#logger.info({ agent: name }, 'agent registered on the hub');
      } catch (err) {
        if (err instanceof HubError && err.status === 409) continue; // registered meanwhile
        throw err;
      }
    }
  }
}

/** The hub knows the in-process loop as `native`. */
function hubAgentType(def: AgentDefinition): string {
  const t = executorTypeOf(def.config);
  return t === 'llm' ? 'native' : t;
}
