// Picks the executor for an agent's `type`, and says why an agent cannot run here.
import type { Executor } from '../executors/executor.ts';
import type { LlmExecutor } from '../executors/llm/llm-executor.ts';
import { executorTypeOf } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';

export class ExecutorRegistry {
  readonly #llm: LlmExecutor;

  constructor(llm: LlmExecutor) {
    this.#llm = llm;
  }

  /** The executor for this agent, or a reason it has none. */
  resolve(def: AgentDefinition): { executor: Executor } | { unavailable: string } {
    const type = executorTypeOf(def.config);
    if (type !== 'llm') return { unavailable: `executor "${type}" is not available in this build of warren yet` };
    const missing = this.#llm.missingRequirement(def);
    return missing ? { unavailable: missing } : { executor: this.#llm };
  }
}
