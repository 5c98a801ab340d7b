// The agents this daemon runs: loaded from the store, problems logged, unrunnable agents skipped loudly,
// and each runnable agent registered on the hub if it is not there yet. An agent whose name on the hub
// belongs to another identity (a human) is not run at all (hub-identity.ts).
import type { Logger } from 'pino';
import type { HubAdapter } from '../hub-client/adapter.ts';
import { HubError } from '../hub-client/errors.ts';
import { executorTypeOf } from '../store/agent-config.ts';
import { StoreUnavailableError, type AgentDefinition, type DefinitionStore } from '../store/definition.ts';
import { formatProblem } from '../store/problems.ts';
import type { ExecutorRegistry } from '../services/executor-registry.ts';
import { identityConflict } from './hub-identity.ts';

export class AgentRegistry {
  readonly #store: DefinitionStore;
  readonly #executors: ExecutorRegistry;
  readonly #logger: Logger;
  #agents = new Map<string, AgentDefinition>();
  /** Agents an executor here can run. */
  #executable: ReadonlySet<string> = new Set();
  /** Of those, the ones whose hub name is another identity's, with why (kept across reloads until resolved). */
  #hubConflicts: ReadonlyMap<string, string> = new Map();
  #runnable: ReadonlySet<string> = new Set();
  /** Loaded agents no executor here can run, with why (a key not set, a CLI not installed). */
  #skipped: ReadonlyMap<string, string> = new Map();
  /** Definition files with errors at the last load (their agents are not loaded at all). */
  #broken = 0;

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

  /** Agents not run because their hub name belongs to another identity, with the reason. */
  hubConflicts(): ReadonlyMap<string, string> {
    return this.#hubConflicts;
  }

  /** Every loaded agent this process does not run, with why: skipped here, or its hub name is taken. */
  notRun(): ReadonlyMap<string, string> {
    return new Map([...this.#skipped, ...this.#hubConflicts]);
  }

  /** Loaded agents no executor here can run, with why. */
  skipped(): ReadonlyMap<string, string> {
    return this.#skipped;
  }

  /** Definition files that had errors at the last load. */
  brokenDefinitions(): number {
    return this.#broken;
  }

  /** Agents whose hub identity was checked by the last registerOnHub (the marks of the others stand). */
  checkedOnHub(): readonly string[] {
    return [...this.#executable];
  }

  /**
   * Reloads from the store. A broken agent is reported and left out; the others keep running. Resolves false
   * when the store could not be reached: the last good definitions stay in use.
   */
  async reload(): Promise<boolean> {
    let loaded;
    try {
      loaded = await this.#store.load();
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      this.#logger.error({ err: err.message, store: this.#store.location, kept: [...this.#agents.keys()] }, 'definitions store unreachable; keeping the last good definitions');
      return false;
    }
    const { agents, problems, parsedOnThreads } = loaded;
    for (const p of problems) {
      const line = formatProblem(p);
      if (p.severity === 'error') this.#logger.error({ file: p.file, line: p.line }, `agent definition problem, agent skipped: ${line}`);
      else this.#logger.warn({ file: p.file, line: p.line }, line);
    }
    const runnable = new Set<string>();
    const skipped = new Map<string, string>();
    for (const def of agents) {
      const r = this.#executors.resolve(def);
      if ('executor' in r) runnable.add(def.name);
      else {
        skipped.set(def.name, r.unavailable);
        this.#logger.warn({ agent: def.name }, `agent ${def.name} skipped: ${r.unavailable}`);
      }
    }
    this.#agents = new Map(agents.map((a) => [a.name, a]));
    this.#executable = runnable;
    this.#skipped = skipped;
    this.#broken = new Set(problems.filter((p) => p.severity === 'error').map((p) => p.file)).size;
    this.#runnable = this.#withoutConflicts();
    // Names only for a readable number of agents: with thousands the line would be the log.
    // parsed_on_threads: 0 for a large store means its parse threads could not start (the load parsed them here).
    this.#logger.info({ loaded: agents.length, runnable: this.#runnable.size <= 50 ? [...this.#runnable] : this.#runnable.size, store: this.#store.location, parsed_on_threads: parsedOnThreads ?? 0 }, 'agent definitions loaded');
    return true;
  }

  /**
   * Makes sure every runnable agent exists on the hub; an agent already there is left as it is. A name the hub
   * gives to a human is not the agent's: that agent is taken out of the runnable ones, loudly, until the name
   * is free again.
   */
  async registerOnHub(hub: HubAdapter): Promise<void> {
    const existing = new Map((await hub.listAgents()).map((a) => [a.name, a]));
    const conflicts = new Map<string, string>();
    for (const name of this.#executable) {
      const def = this.#agents.get(name);
      if (!def) continue;
      let entry = existing.get(name);
      if (!entry) {
        try {
          await hub.registerAgent({
            name,
            display_name: def.config.display_name,
            description: def.config.description,
            type: hubAgentType(def),
          });
          this.#logger.info({ agent: name }, 'agent registered on the hub');
          continue;
        } catch (err) {
          if (!(err instanceof HubError && err.status === 409)) throw err;
          // Taken since the listing: by another daemon registering the same agent, or by someone else.
          entry = await hub.getAgent(name);
        }
      }
      const conflict = identityConflict(name, entry);
      if (conflict) conflicts.set(name, conflict);
    }
    for (const [agent, reason] of conflicts) this.#logger.error({ agent, reason }, `agent ${agent} is NOT RUN: ${reason}`);
    for (const agent of this.#hubConflicts.keys()) {
      if (!conflicts.has(agent) && this.#executable.has(agent)) this.#logger.info({ agent }, `agent ${agent} owns its hub name again and runs`);
    }
    this.#hubConflicts = conflicts;
    this.#runnable = this.#withoutConflicts();
  }

  #withoutConflicts(): ReadonlySet<string> {
    return new Set([...this.#executable].filter((name) => !this.#hubConflicts.has(name)));
  }
}

/** The hub knows the in-process loop as `native`. */
function hubAgentType(def: AgentDefinition): string {
  const t = executorTypeOf(def.config);
  return t === 'llm' ? 'native' : t;
}
