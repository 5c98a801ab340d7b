// An activation whose run stopped for approval (README "Approvals"): the run's state, its system prompt and what it
// was answering are kept as an approval request (scheduler/approval-store.ts), and whoever listens is told
// (`onApprovalRequested`: the outbound events subscribe here). The request's id comes from the activation and the
// step, so a retried activation that pauses at the same step keeps the first request.
import type { ExecutorResult } from '../executors/executor.ts';
import { NotRetryableError } from '../agent-loop/retryable-error.ts';
import { approvalIdOf, shownArguments, type ApprovalOrigin, type ApprovalRequest, type ApprovalStore } from '../scheduler/approval-store.ts';
import type { AgentDefinition } from '../store/definition.ts';

/** Where paused runs are kept, and who hears of a new request. */
export interface ApprovalKeeping {
  store: ApprovalStore;
  /** Called once per request written (not for a retried activation's second write of it). */
  onApprovalRequested?: (request: ApprovalRequest) => void;
}

/** Approvals are configured but this process keeps no paused runs (`warren run`, a test without Redis). */
export class ApprovalsUnavailable extends NotRetryableError {
  override readonly name = 'ApprovalsUnavailable';
  constructor(agent: string) {
    super(`agent ${agent}: a call waits for approval, but this process keeps no approval requests (they live in Redis: run it in the daemon)`);
  }
}

/** The request a paused run becomes (pure): its calls shown redacted, its deadline from approvals.timeout. */
export function pausedRunRequest(def: AgentDefinition, activationId: string, paused: NonNullable<ExecutorResult['paused']>, origin: ApprovalOrigin, redact: (text: string) => string, now: number): ApprovalRequest {
  const approvals = def.config.approvals;
  return {
    id: approvalIdOf({ activationId, step: paused.state.step }),
    agent: def.name,
    createdAt: now,
    expiresAt: now + (approvals?.timeout ?? 86_400_000),
    approvers: approvals?.approvers ?? ['operator', 'admin'],
    calls: paused.calls.map((c) => ({ id: c.id, name: c.name, arguments: shownArguments(c.arguments, redact) })),
    // The state is the conversation as the model saw it (its context was redacted); redacted again as a whole.
    work: { kind: 'loop', activationId, system: redact(paused.system), state: redact(JSON.stringify(paused.state)), origin },
  };
}

/** Keeps a paused run; returns its request. */
export async function keepPausedRun(keeping: ApprovalKeeping | undefined, def: AgentDefinition, activationId: string, result: ExecutorResult, origin: ApprovalOrigin, redact: (text: string) => string): Promise<ApprovalRequest> {
  if (!keeping || !result.paused) throw new ApprovalsUnavailable(def.name);
  const request = pausedRunRequest(def, activationId, result.paused, origin, redact, Date.now());
  if ((await keeping.store.create(request)) === 'created') keeping.onApprovalRequested?.(request);
  return request;
}
