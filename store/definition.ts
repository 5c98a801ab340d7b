import type { AgentConfig } from './agent-config.ts';
import type { Problem } from './problems.ts';

/** One agent as stored: its validated config and its system prompt template. */
export interface AgentDefinition {
  name: string;
  config: AgentConfig;
  /** The system-prompt.md text, placeholders not yet filled. */
  systemPrompt: string;
  /** Where it came from, for messages. */
  files: { config: string; prompt: string };
}

export interface LoadResult {
  agents: AgentDefinition[];
  /** Every problem of every file; an agent with an error is left out of `agents`, the others load. */
  problems: Problem[];
}

/** A place agent definitions live: a local folder or an S3-compatible bucket, same layout. */
export interface DefinitionStore {
  /** Human-readable location for logs, e.g. `examples/agents` or `s3://bucket/prefix`. */
  readonly location: string;
  load(): Promise<LoadResult>;
}
