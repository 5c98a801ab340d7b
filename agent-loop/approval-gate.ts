// Calls that wait for a person's yes (README "Approvals"). A step whose pending calls include one the agent's
// `approvals.tools` name stops before any of them runs: the run ends `awaiting_approval` with its state, which is
// kept until someone decides. The run then goes on from that state (resumeLoop) with the decision: an approved
// call runs, a denied one is answered with the operator's note and the loop goes on. Pure.
import type { LoopState, PendingStep } from './loop-state.ts';
import type { ToolCall } from './messages.ts';

export type ApprovalDecision = { kind: 'approved' } | { kind: 'denied'; note: string };

export interface ApprovalGate {
  /** Whether calls of this tool (its registry name) wait for approval. */
  needs(toolName: string): boolean;
  /** Decisions on calls of the state the run goes on from, by call id. */
  decisions?: Readonly<Record<string, ApprovalDecision>>;
}

/** The calls of a pending step that wait: calls that would run, of tools that need approval, not decided yet. */
export function callsAwaiting(pending: PendingStep, gate: ApprovalGate | undefined): ToolCall[] {
  // A step the repeat guard rejects runs none of its calls: nothing to approve.
  if (!gate || pending.verdict.kind === 'loop_detected') return [];
  return pending.calls.filter((c) => c.kind === 'ready' && gate.needs(c.call.name) && gate.decisions?.[c.call.id] === undefined).map((c) => c.call);
}

/** The result a denied call gets: the operator's note, said as the operator's. */
export function deniedMessage(name: string, note: string): string {
  const said = note.trim();
  return `Not run: a person denied this call to ${name}.${said ? ` Their note: ${said}` : ''} Do not call it again with the same arguments; go on without it.`;
}

/** A run stopped for approval: the state to go on from, and the calls that wait. */
export interface ApprovalPause {
  state: LoopState;
  calls: readonly ToolCall[];
}
