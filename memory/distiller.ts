// Memory that distils (memory.distill): after a run that remembered an exchange, the agent's own model (its
// brain.exploration_model when set) turns the exchange into short facts, adding, updating or retiring the facts
// it holds on the subject (memory/distill-prompt.ts, memory/distill-answer.ts), as mem0 does. The thin shell:
// it reads the exchange and the related facts, asks within the activation's token budget, and applies the answer
// in one transaction (memory-store.ts distil), which retires the exchange's raw entries, so recall finds the
// current facts instead. Facts keep the people of their exchange (memory/audience.ts), and the model is shown only
// facts of that same audience, so one person's facts never reach, or change, another's. Best effort: a model that
// fails, answers out of shape or has no budget left is logged and the raw entries are kept.
import type { Logger } from 'pino';
import { estimatePromptTokens } from '../agent-loop/limits.ts';
import type { ChatMessage, TokenUsage } from '../agent-loop/messages.ts';
import type { MemoryConfig } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { readDistillAnswer } from './distill-answer.ts';
import { distillAllowance } from './distill-budget.ts';
import { distillPrompt } from './distill-prompt.ts';
import type { MemoryEntry, MemoryKind, MemoryStore, NewMemory } from './memory-store.ts';

export interface DistillRequest {
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  signal?: AbortSignal;
}

export interface DistillReply {
  content: string | null;
  usage: TokenUsage;
  costUsd: number;
}

/** One request to the agent's own model; undefined when it has none in this process (a CLI agent). */
export type DistillModel = (def: AgentDefinition, request: DistillRequest) => Promise<DistillReply | undefined>;

/** What a distillation cost: charged to the activation that remembered the exchange. */
export type DistillCost = TokenUsage & { costUsd: number };

/** What the activation leaves for the distillation: the tokens its turn spent of behavior.max_tokens; its signal. */
export interface DistillBudget {
  spent: number;
  signal?: AbortSignal;
}

/** The entries an exchange is distilled from: what people said to the agent (not its thread pointers, decisions or notes). */
export const DISTILLED_KINDS: ReadonlySet<MemoryKind> = new Set<MemoryKind>(['conversation', 'feedback']);

export interface DistillerOptions {
  store: MemoryStore;
  model: DistillModel;
  redact: (text: string) => string;
  logger: Logger;
  /** The current facts of the exchange's audience on its subject, best first (AgentMemory's search). */
  related: (def: AgentDefinition, settings: MemoryConfig, text: string, people: readonly string[], signal?: AbortSignal) => Promise<MemoryEntry[]>;
  /** The facts with their vectors when the agent recalls by embedding (AgentMemory's). */
  embedded: (def: AgentDefinition, settings: MemoryConfig, entries: NewMemory[]) => Promise<NewMemory[]>;
  now: () => number;
}

export class Distiller {
  readonly #o: DistillerOptions;
  /** Agents already told (in the log) that they have no model here to distil with. */
  readonly #noModelLogged = new Set<string>();

  constructor(opts: DistillerOptions) {
    this.#o = opts;
  }

  /** Distils the current entries under `keys`; what it cost (undefined: no model was asked). Never throws. */
  async distil(def: AgentDefinition, settings: MemoryConfig, keys: readonly string[], budget: DistillBudget): Promise<DistillCost | undefined> {
    const log = this.#o.logger.child({ agent: def.name });
    let cost: DistillCost | undefined;
    try {
      // Current only: a retried activation whose first attempt distilled the exchange asks nothing again.
      const sources = await this.#o.store.current(def.name, keys);
      if (sources.length === 0) return undefined;
      const people = sources[0]!.people ?? [];
      const text = sources.map((s) => s.text).join('\n');
      const facts = await this.#o.related(def, settings, text, people, budget.signal);
      const prompt = distillPrompt(def.name, sources, facts);
      const allowed = distillAllowance(def.config.behavior.max_tokens, budget.spent, estimatePromptTokens(prompt.messages), def.config.brain.max_tokens);
      if (!allowed.ok) {
        log.warn({ why: allowed.why }, 'memory not distilled: the activation has no token budget left for it; the raw entries are kept');
        return undefined;
      }
      const model = def.config.brain.exploration_model ?? def.config.brain.model;
      const reply = await this.#o.model(def, { model, messages: prompt.messages, maxTokens: allowed.maxTokens, signal: budget.signal });
      if (!reply) {
        if (!this.#noModelLogged.has(def.name)) {
          this.#noModelLogged.add(def.name);
          log.warn('memory.distill needs the agent\'s model in this process (an llm agent); its raw entries are kept');
        }
        return undefined;
      }
      cost = { ...reply.usage, costUsd: reply.costUsd };
      const verdict = readDistillAnswer(reply.content, prompt.ids);
      if (!verdict.ok) {
        log.warn({ why: verdict.why }, 'memory not distilled: the model\'s answer was refused; the raw entries are kept');
        return cost;
      }
      const at = this.#o.now();
      const first = sources[0]!;
      const added: NewMemory[] = verdict.changes.add.map((t, i) => ({
        // One distillation per exchange (its sources are retired with it): the exchange's key and the fact's place name it.
        key: `fact:${first.key}:${i}`,
        kind: 'fact',
        text: this.#o.redact(t),
        createdAt: at,
        ...(first.who ? { who: first.who } : {}),
        ...(people.length ? { people } : {}),
        ...(first.postId ? { postId: first.postId } : {}),
        ...(first.community ? { community: first.community } : {}),
      }));
      const applied = await this.#o.store.distil(def.name, { sources: sources.map((s) => s.id), add: await this.#o.embedded(def, settings, added), retire: verdict.changes.retire, at });
      if (applied) log.info({ facts_added: added.length, facts_retired: verdict.changes.retire.length, entries_distilled: sources.length }, 'memory distilled');
      else log.info('memory not distilled: its entries or facts changed meanwhile (another attempt was first); nothing changed');
      return cost;
    } catch (err) {
      log.warn({ err }, 'memory distillation failed; the raw entries are kept');
      return cost;
    }
  }
}
