// Where approval decisions become work (README "Approvals"). A decision is written once (approval-store.ts), then
// the agent gets a task `approval:<id>` in its task inbox and an activation is enqueued: the work runs through the
// same queue, limits, budget, quiet hours and failure policy as every other activation, in whichever daemon takes
// it. The sweep, run by every daemon now and then, denies what timed out and hands every decided request whose
// work is not done to the inbox again (adding a task is idempotent by its id), so a decision written by a process
// that died before the task was added, or a task lost with a whole Redis failover, is carried out all the same.
import type { AgentTask, TaskAdded } from './task-inbox.ts';
import type { ApprovalStore, ApprovalDecisionRecord, ApprovalEntry, DecideResult, DecidedBy } from './approval-store.ts';

/** The two things the desk needs of the task inbox and the queue. */
export interface ApprovalWorkSink {
  add(agent: string, task: AgentTask): Promise<TaskAdded>;
  /** Enqueues the agent's 'task' activation (absent where only Redis is open: the scheduler's round enqueues it). */
  enqueue?(agent: string): Promise<unknown>;
}

/** The task id of an approval (pure). */
export function approvalTaskId(approvalId: string): string {
  return `approval:${approvalId}`;
}

/** The task a decided request becomes (pure): its text says what was decided, for records and logs. */
export function approvalTask(entry: ApprovalEntry & { decision: ApprovalDecisionRecord }): AgentTask {
  const { request, decision } = entry;
  const names = request.calls.map((c) => c.name).join(', ');
  return {
    id: approvalTaskId(request.id),
    source: 'approval',
    name: request.id,
    text: `${decision.kind === 'approved' ? 'Approved' : 'Denied'} by ${decision.by}: ${names}`,
    createdAt: decision.at,
    meta: { approval: request.id, decision: decision.kind },
  };
}

/** Timed-out requests to deny (pure): waiting, past their deadline. */
export function timedOut(entries: readonly ApprovalEntry[], now: number): ApprovalEntry[] {
  return entries.filter((e) => e.decision === undefined && e.request.expiresAt <= now);
}

export const TIMEOUT_NOTE = 'nobody decided before the request timed out (approvals.timeout)';

export class ApprovalDesk {
  readonly store: ApprovalStore;
  readonly #sink: ApprovalWorkSink;
  /** Told of each new decision made here (outbound events, logs). */
  readonly #onDecided: ((entry: ApprovalEntry & { decision: ApprovalDecisionRecord }) => void) | undefined;

  constructor(store: ApprovalStore, sink: ApprovalWorkSink, opts: { onDecided?: (entry: ApprovalEntry & { decision: ApprovalDecisionRecord }) => void } = {}) {
    this.store = store;
    this.#sink = sink;
    this.#onDecided = opts.onDecided;
  }

  /** Decides once and hands the work on; a request decided before is handed on again (idempotent) and answered as it was. */
  async decide(id: string, kind: ApprovalDecisionRecord['kind'], opts: { by: DecidedBy; note?: string; now?: number }): Promise<DecideResult> {
    const result = await this.store.decide(id, kind, opts);
    if (result.kind === 'decided') this.#onDecided?.(result.entry);
    await this.#handOn(result.entry);
    return result;
  }

  /** Denies what timed out, then hands every decided open request on; returns how many of each. */
  async sweep(now = Date.now()): Promise<{ timedOut: number; handedOn: number }> {
    const open = await this.store.open();
    let denied = 0;
    for (const e of timedOut(open, now)) {
      const r = await this.store.decide(e.request.id, 'denied', { by: 'timeout', note: TIMEOUT_NOTE, now });
      if (r.kind === 'decided') {
        denied++;
        this.#onDecided?.(r.entry);
      }
      e.decision = r.entry.decision;
    }
    let handedOn = 0;
    for (const e of open) if (e.decision && (await this.#handOn({ ...e, decision: e.decision })) === 'added') handedOn++;
    return { timedOut: denied, handedOn };
  }

  async #handOn(entry: ApprovalEntry & { decision: ApprovalDecisionRecord }): Promise<TaskAdded> {
    const added = await this.#sink.add(entry.request.agent, approvalTask(entry));
    // `full`: the agent has its most tasks waiting; the next sweep hands it on again.
    if (added === 'added') await this.#sink.enqueue?.(entry.request.agent);
    return added;
  }
}
