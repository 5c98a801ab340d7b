// Picks the executor for an agent's `type`, and says why an agent cannot run here.
import type { AgentCardCache } from '../agent-loop/a2a-card.ts';
import type { Executor } from '../executors/executor.ts';
import type { CliExecutor } from '../executors/cli/cli-executor.ts';
import type { LlmExecutor } from '../executors/llm/llm-executor.ts';
import type { DistillReply, DistillRequest } from '../memory/distiller.ts';
import { executorTypeOf } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';

export class ExecutorRegistry {
  readonly #llm: LlmExecutor;
  readonly #cli: ReadonlyMap<string, CliExecutor>;
  /** Why no CLI agent may run in this process (services/redis-exposure.ts); undefined: they may. */
  readonly #cliRefused: string | undefined;

  constructor(llm: LlmExecutor, cli: readonly CliExecutor[] = [], cliRefused?: string) {
    this.#llm = llm;
    this.#cli = new Map(cli.map((e) => [e.type, e]));
    this.#cliRefused = cliRefused;
  }

  /** The CLI executors of this build (`warren doctor` checks their binaries and versions). */
  get cli(): readonly CliExecutor[] {
    return [...this.#cli.values()];
  }

  /** The cards of remote (A2A) delegates the LLM executor's calls read (the start's check and doctor read them too). */
  get remoteCards(): AgentCardCache {
    return this.#llm.cards;
  }

  /** A question to the agent's own model, when it has one (an llm agent); undefined for the others. */
  async ask(def: AgentDefinition, question: string, signal?: AbortSignal): Promise<string | undefined> {
    if (executorTypeOf(def.config) !== 'llm' || this.#llm.missingRequirement(def)) return undefined;
    return this.#llm.ask(def, question, signal);
  }

  /** A request to the agent's own model with its usage and cost (memory distillation); undefined for agents without one here. */
  async complete(def: AgentDefinition, req: DistillRequest): Promise<DistillReply | undefined> {
    if (executorTypeOf(def.config) !== 'llm' || this.#llm.missingRequirement(def)) return undefined;
    return this.#llm.complete(def, req);
  }

  /** The executor for this agent, or a reason it has none. */
  resolve(def: AgentDefinition): { executor: Executor } | { unavailable: string } {
    const type = executorTypeOf(def.config);
    const executor = type === 'llm' ? this.#llm : this.#cli.get(type);
    if (!executor) return { unavailable: `executor "${type}" is not available in this build of warren yet` };
    const missing = executor.missingRequirement(def);
    if (missing) return { unavailable: missing };
    // After the agent's own requirements: a CLI that is not installed is said as such, whatever Redis is.
    return type !== 'llm' && this.#cliRefused !== undefined ? { unavailable: this.#cliRefused } : { executor };
  }
}
