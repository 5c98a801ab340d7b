// What one coding-agent CLI contributes to the shared CLI executor: its binary, how to invoke it (pure), and
// how to read its output (a parser fed line by line, then asked for the result once the process is gone).
import type { ActivationEvent } from '../../agent-loop/events.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import type { ExecutorResult } from '../executor.ts';
import type { McpServerSpec } from './mcp.ts';
import type { SupervisedExit } from './supervisor.ts';

export type CliType = 'claude-code' | 'goose' | 'aider' | 'opencode';

/** Everything an adapter needs to build one invocation; no I/O happens in the adapter. */
export interface InvocationContext {
  activationId: string;
  definition: AgentDefinition;
  context: { system: string; task: string };
  /** The agent's workspace (the child's cwd). */
  workspace: string;
  /** A private folder for this activation's prompt and config files; removed afterwards. */
  scratch: string;
  /** The agent's own CLI state (config dir, sessions), kept between activations. */
  stateDir: string;
  /** The agent's key, already looked up by the name it declared; undefined for keyless providers. */
  apiKey: string | undefined;
  mcpServers: readonly McpServerSpec[];
}

export interface Invocation {
  args: string[];
  /** Written to stdin, which is then closed; undefined means stdin is /dev/null. */
  stdin?: string;
  /** Variables set for the child (on top of the base allow-list). */
  env: Record<string, string | undefined>;
  /** Files written before the run, by absolute path (prompt files, configs). */
  files: Record<string, string>;
}

/** Something the parser noticed, recorded in the activation's event log. */
export interface CliNote {
  event: string;
  detail?: string;
}

export interface OutputParser {
  /** One stdout line. Never throws on bad input: a line that does not parse is a diagnostic. */
  line(line: string): void;
  /** The result, once the process (group) is gone. */
  finish(exit: SupervisedExit): ExecutorResult;
  /** Notes gathered so far (drained by the executor into the event log). */
  drainNotes(): CliNote[];
}

export interface ParserContext {
  /** Hub tools whose successful call means the agent already posted. */
  postingTools: readonly string[];
  /** The agent's behavior.max_iterations, for CLIs whose stream shows the limit only by step count. */
  maxSteps: number;
}

export interface CliAdapter {
  readonly type: CliType;
  /** Default executable name looked up on PATH. */
  readonly binary: string;
  /** Variables copied from the daemon's environment when set (never secrets). */
  readonly inheritEnv?: readonly string[];
  /** Why this agent cannot run with this CLI (beyond the key check), or undefined. */
  missingRequirement?(def: AgentDefinition): string | undefined;
  invocation(ctx: InvocationContext): Invocation;
  parser(ctx: ParserContext): OutputParser;
}

export type { ActivationEvent };
