// How an agent recalls: its configured strategy, unless that is embedding_search and no embeddings endpoint is
// configured, in which case keyword (said once in the log, and by `warren validate`/`doctor` when added there).
import type { MemoryConfig } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { Problem } from '../store/problems.ts';

export type RecallStrategy = 'recent' | 'keyword' | 'embedding';

export function recallStrategy(memory: MemoryConfig, hasEmbedder: boolean): { strategy: RecallStrategy; fellBack: boolean } {
  switch (memory.retrieval.strategy) {
    case 'recent':
      return { strategy: 'recent', fellBack: false };
    case 'keyword':
      return { strategy: 'keyword', fellBack: false };
    case 'embedding_search':
      return hasEmbedder ? { strategy: 'embedding', fellBack: false } : { strategy: 'keyword', fellBack: true };
    default: {
      const never: never = memory.retrieval.strategy;
      throw new Error(`unknown recall strategy ${String(never)}`);
    }
  }
}

/** What `warren doctor` says of an agent whose embedding_search has no endpoint; undefined when nothing is wrong. */
export function recallWarning(memory: MemoryConfig | undefined, hasEmbedder: boolean): string | undefined {
  if (!memory?.enabled || !recallStrategy(memory, hasEmbedder).fellBack) return undefined;
  return 'memory.retrieval.strategy is embedding_search but warren.yaml has no memory.embeddings: it recalls by keyword';
}

/** The same, as `warren validate` reports it: a warning at each such agent's config file. */
export function recallWarnings(agents: readonly AgentDefinition[], hasEmbedder: boolean): Problem[] {
  return agents.flatMap((def) => {
    const message = recallWarning(def.config.memory, hasEmbedder);
    return message ? [{ file: def.files.config, message, severity: 'warning' as const }] : [];
  });
}
