// The contract every executor keeps, whether it runs the in-process loop or a CLI subprocess.
import type { EventLog } from '../agent-loop/events.ts';
import type { ApprovalDecision, ApprovalPause } from '../agent-loop/approval-gate.ts';
import type { LoopState } from '../agent-loop/loop-state.ts';
import type { TokenUsage } from '../agent-loop/messages.ts';
import type { TerminationReason } from '../agent-loop/termination.ts';
import type { HubAdapter } from '../hub-client/adapter.ts';
import type { MemoryAudience } from '../memory/audience.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { NotRetryableError } from '../agent-loop/retryable-error.ts';
import type { OversizedOutput } from '../policy/output-bounds.ts';

export interface ActivationInput {
  /** Unique per activation; the root of every idempotency key it uses. */
  id: string;
  definition: AgentDefinition;
  /** System part (prompt, skills, budget) and task part (thread or exploration), already rendered. */
  context: { system: string; task: string };
  events: EventLog;
  /** Fires on cancel, shutdown or deadline; the executor must stop promptly when it does. */
  signal: AbortSignal;
  /** The hub, for the agent's hub tools; they act as `definition.name`. Absent: no hub tools are offered. */
  hub?: HubAdapter;
  /** W3C traceparent of the activation's span: the executor's spans (or its subprocess's) continue it. */
  traceparent?: string;
  /** Whom the run answers: what its memory tools may find and whom its notes came from. Absent: general only. */
  memoryAudience?: MemoryAudience;
  /**
   * Runs a delegate's turn as every activation's turn is run (activation/run-turn.ts gives one to each run it
   * starts): the delegate's own context pieces, read with its parent's services. Absent (an executor run by hand):
   * the delegate's context is built from its definition and task alone.
   */
  delegate?: DelegateTurn;
  /**
   * Go on from a run that stopped for approval (README "Approvals") instead of starting from `context.task`: its
   * state, the activation whose keys its tool calls keep, and the decisions on the calls that waited.
   */
  resume?: { state: LoopState; keyRoot: string; decisions: Readonly<Record<string, ApprovalDecision>> };
}

/** One turn of a delegate on `task`; `child` is what runs it (its id, its own events, the parent's loop with carved limits). */
export type DelegateTurn = <R extends ExecutorResult>(definition: AgentDefinition, task: string, child: { id: string; events: EventLog; run(input: ActivationInput): Promise<R> }, signal: AbortSignal) => Promise<R>;

export interface ExecutorResult {
  /** Final answer text; empty when there is nothing to post. */
  text: string;
  /** True when the executor already posted through the hub itself (then the pipeline does not). */
  posted: boolean;
  termination: TerminationReason;
  partial: boolean;
  usage: TokenUsage & { costUsd?: number; costIsEstimate?: boolean };
  steps: number;
  /** `retryAfterMs`: the provider said when to come back (e.g. claude's rate_limit_event resetsAt). */
  error?: {
    message: string;
    retryable: boolean;
    retryAfterMs?: number;
    /** The error's class, e.g. ModelError. */
    name?: string;
    /** The output passed one of behavior.limits.max_*_bytes: an `oversized` outcome (run-outcome.ts). */
    oversized?: OversizedOutput;
  };
  /** Set when termination is `awaiting_approval`: the state to keep, the calls that wait, the system prompt it ran with. */
  paused?: ApprovalPause & { system: string };
}

export interface Executor {
  run(input: ActivationInput): Promise<ExecutorResult>;
}

/** An executor cannot run this agent at all (missing key, missing CLI): retrying will not help. */
export class ExecutorSetupError extends NotRetryableError {
  override readonly name = 'ExecutorSetupError';
  readonly agent: string;
  constructor(agent: string, message: string) {
    super(`agent ${agent}: ${message}`);
    this.agent = agent;
  }
}
