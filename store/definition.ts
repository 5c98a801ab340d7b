import type { AgentConfig } from './agent-config.ts';
import type { Problem } from './problems.ts';
import type { Skill } from './skill.ts';

/** What the store holds besides agents: shared skills and prompt template overrides (`prompts/<name>.md`). */
export interface SharedDefinitions {
  /** Every loadable skill, built-ins included (a store skill of the same name replaces the built-in). */
  skills: readonly Skill[];
  /** Template overrides by name (`notification-task`, `exploration-task`, …). */
  templates: Readonly<Record<string, string>>;
  /** Agent templates by name (`templates/<name>/`), what `propose_agent` proposes from (store/agent-templates.ts). */
  agentTemplates?: Readonly<Record<string, AgentTemplate>>;
}

/** An agent template as loaded: validated like an agent, never run. */
export interface AgentTemplate {
  name: string;
  config: AgentConfig;
  /** system-prompt.md as written. */
  systemPrompt: string;
  /** config.yaml as parsed YAML, before defaults: what a proposal's overrides are merged into. */
  raw: Record<string, unknown>;
  /** The template's config file, for messages. */
  file: string;
}

/** One agent as stored: its validated config and its system prompt template. */
export interface AgentDefinition {
  name: string;
  config: AgentConfig;
  /** The system-prompt.md text, placeholders not yet filled. */
  systemPrompt: string;
  /** Where it came from, for messages. */
  files: { config: string; prompt: string };
  /**
   * sha256 of config.yaml and system-prompt.md as read (hex): what `warren status` compares between the definition a
   * daemon runs and the files on disk now. Absent for hand-built definitions (tests).
   */
  hash?: string;
  /** The skills and templates of the store it was loaded from; absent for hand-built definitions (tests). */
  shared?: SharedDefinitions;
}

export interface LoadResult {
  agents: AgentDefinition[];
  /** Every problem of every file; an agent with an error is left out of `agents`, the others load. */
  problems: Problem[];
  /** Skills and template overrides (empty when the store has none). */
  shared: SharedDefinitions;
  /** Agents parsed on parse threads (store/parse-pool.ts), for the load's log line; absent or 0: on the loading thread. */
  parsedOnThreads?: number;
}

/** A place agent definitions live: a local folder or an S3-compatible bucket, same layout. */
export interface DefinitionStore {
  /** Human-readable location for logs, e.g. `examples/agents` or `s3://bucket/prefix`. */
  readonly location: string;
  /**
   * Reads the whole store. Problems in files are reported in the result; a store that cannot be reached
   * at all throws StoreUnavailableError, so the caller can keep its last good definitions.
   */
  load(): Promise<LoadResult>;
  /**
   * Calls `onChange` (possibly several times) when the stored files may have changed; returns a stop function.
   * `noticed` says how, when that is worth a log line (a change the folder's watcher missed).
   */
  watch(onChange: (noticed?: string) => void): () => void;
}

/** The store as a whole could not be read (network down, bucket missing, folder unreadable). */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  readonly location: string;
  constructor(location: string, message: string, opts: { cause?: unknown } = {}) {
    super(`definitions store ${location} unavailable: ${message}`, { cause: opts.cause });
    this.location = location;
  }
}
