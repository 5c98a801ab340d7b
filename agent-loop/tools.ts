// What a tool is to the loop, and the registry of one activation's tools. A tool declares its effects so the
// runner can plan (docs/agent-loop.md R4) and the grant it needs so the runner can refuse it at call time (R14).
import type { ToolResultStatus } from './events.ts';
import { hasGrant } from '../store/grants.ts';
import type { ToolDefinition } from './model.ts';
import type { LedgerEntry } from './usage-ledger.ts';

export interface ToolContext {
  signal: AbortSignal;
  callId: string;
  /** Stable across retries of the activation: `<activationId>:<step>:<n>`. */
  idempotencyKey: string;
  step: number;
  /** What is left of the run's budget when the call starts (delegations carve theirs out of it). */
  remaining?: { tokens: number; ms: number };
  /** The call's W3C traceparent, when it is traced (a delegate continues the trace from it). */
  traceparent?: string;
}

export interface ToolOutcome {
  status: Extract<ToolResultStatus, 'ok' | 'error'>;
  content: string;
  /** Model calls the tool made on the run's behalf (a delegate's), charged to the run's ledger. */
  ledger?: readonly LedgerEntry[];
}

/** Freezes a definition and everything in it: one object shared by every activation must not be changed by one. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export interface Tool {
  definition: ToolDefinition;
  /** No side effects: may run concurrently with other read-only calls. Unknown effects count as mutating. */
  readOnly: boolean;
  /** Grant needed at call time (checked by the runner, not by the tool). */
  grant?: string;
  /** A call ends the run after its reply's other calls are answered (R3). */
  loopBreaking?: 'stop_tool' | 'no_action';
  timeoutMs?: number;
  /**
   * The tool makes model calls of its own (a delegate) and reports them in its outcome's ledger. Interrupted,
   * it is given a moment to settle, so what it spent is still charged to the run.
   */
  reportsUsage?: boolean;
  /** The agent a call hands its task to (a delegation): progress reports it as `delegate` to that agent (R13). */
  delegatesTo?: string;
  /** A successful call wrote to the hub as the agent (so the pipeline must not post the answer again). */
  postsToHub?: boolean;
  execute(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome>;
}

export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  readonly grants: readonly string[];
  /** Names offered twice (e.g. two MCP servers of one name): the first wins, the others are left out. */
  readonly duplicates: string[] = [];

  constructor(tools: readonly Tool[], grants: readonly string[]) {
    for (const t of tools) {
      if (this.#tools.has(t.definition.name)) this.duplicates.push(t.definition.name);
      else this.#tools.set(t.definition.name, t);
    }
    this.grants = grants;
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  allowed(tool: Tool): boolean {
    return tool.grant === undefined || hasGrant(this.grants, tool.grant);
  }

  /** What the model is offered: only tools it may call, in registration order (stable, for prompt caching). */
  definitions(): ToolDefinition[] {
    return [...this.#tools.values()].filter((t) => this.allowed(t)).map((t) => t.definition);
  }
}
