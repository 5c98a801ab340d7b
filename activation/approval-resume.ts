// A decided approval carried out (README "Approvals"), by the activation that took its task `approval:<id>` from the
// task inbox, in whichever daemon. A paused run goes on from its stored state: an approved call runs first, under
// the idempotency key it had in the paused activation (the resumed run keeps that activation's keys), a denied one
// is answered with the operator's note; the run's answer then goes where the paused run's would have gone (the
// mention's thread under the notification's reply key, the explored post under the paused exploration's key). A
// held hub write of a CLI agent is made with the key the CLI sent. The request leaves the open set once its work is
// done; a request already done is not carried out again (a task offered again after a crash finds it done).
import type { EventLog } from '../agent-loop/events.ts';
import type { ApprovalDecision } from '../agent-loop/approval-gate.ts';
import { parseLoopState } from '../agent-loop/loop-state.ts';
import type { Executor } from '../executors/executor.ts';
import { assertNever, outcomeOfError, outcomeOfRun, type FailureOutcome } from '../executors/run-outcome.ts';
import type { HubAdapter } from '../hub-client/adapter.ts';
import { explorationReplyKey, notificationReplyKey } from '../policy/idempotency-keys.ts';
import type { ApprovalDecisionRecord, ApprovalEntry, ApprovalOrigin, ApprovalRequest } from '../scheduler/approval-store.ts';
import { WriteRefused, type WriteAllowance } from '../scheduler/write-allowance.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { keepPausedRun, type ApprovalKeeping } from './approval-pause.ts';
import { NO_USAGE, plusUsage, type Step, type TaskRef, type UsageWithCost } from './ending.ts';
import { parseExplorationAnswer } from './exploration-answer.ts';
import { outcomeOfRefusal } from './failure-policy.ts';
import { replyWithinLimits } from './pipeline-reply.ts';
import { carryOutSpawn, type SpawnOutcomes } from './spawn-approval.ts';
import { pausedTask, type TaskEnded, type TaskEndingHandler, type TaskWaitHandler } from './task-source-handlers.ts';
import type { TaskSource } from '../scheduler/task-inbox.ts';
import type { Logger } from 'pino';

export interface ResumeDeps {
  hub: HubAdapter;
  writes?: WriteAllowance;
  redact: (text: string) => string;
  approvals?: ApprovalKeeping;
  /** Where approved proposals of new agents are written (activation/spawn-approval.ts). */
  spawn?: SpawnOutcomes;
  /** A paused task's source hears how it ended, or that it waits again (activation.ts's deps of the same names). */
  taskEndings?: Partial<Record<TaskSource, TaskEndingHandler>>;
  taskWaits?: Partial<Record<TaskSource, TaskWaitHandler>>;
}

export interface ResumeRun {
  def: AgentDefinition;
  executor: Executor;
  activationId: string;
  events: EventLog;
  signal: AbortSignal;
  log: Logger;
}

const done = (reason: string, usage: UsageWithCost = NO_USAGE): Step => ({ kind: 'done', ending: { outcome: { kind: 'no_action', reason }, by: 'pipeline' }, handled: [], replies: 0, posts: 0, usage });

/** The decision on each call of a request (pure): the one decision applies to every call it listed. */
export function decisionsOf(entry: ApprovalEntry): Record<string, ApprovalDecision> {
  const d = entry.decision;
  if (!d) return {};
  const decision: ApprovalDecision = d.kind === 'approved' ? { kind: 'approved' } : { kind: 'denied', note: d.note };
  return Object.fromEntries(entry.request.calls.map((c) => [c.id, decision]));
}

export async function carryOutApproval(deps: ResumeDeps, run: ResumeRun, approvalId: string): Promise<Step> {
  const { def, log } = run;
  const store = deps.approvals?.store;
  if (!store) return done('approvals_unavailable');
  const entry = await store.get(approvalId);
  if (!entry?.decision || !(await store.isOpen(approvalId))) {
    log.info({ approval: approvalId }, 'approval already carried out (or unknown); nothing to do');
    return done('approval_done');
  }
  const { request, decision } = entry;
  const work = request.work;
  const task: TaskRef = { taskId: `approval:${approvalId}`, source: 'approval', excerpt: request.calls.map((c) => c.name).join(', ') };
  if (work.kind === 'spawn') {
    const result = await carryOutSpawn(deps.spawn, store, { ...request, work }, decision, log);
    return done(`spawn_${result}`);
  }
  if (work.kind === 'hub_write') return makeHeldWrite(deps, run, approvalId, { ...work, decision }, task);

  // A paused run: its state, the activation whose keys it keeps, the decisions on its calls.
  const state = parseLoopState(work.state);
  const result = await run.executor.run({ id: run.activationId, definition: def, context: { system: work.system, task: '' }, events: run.events, signal: run.signal, hub: deps.hub, resume: { state, keyRoot: work.activationId, decisions: decisionsOf(entry) } });
  const usage = plusUsage(NO_USAGE, result.usage);
  const outcome = outcomeOfRun(result);
  const origin = work.origin;
  switch (outcome.kind) {
    case 'guard_stop':
    case 'limit_stop':
    case 'retryable_failure':
    case 'terminal_failure':
    case 'oversized':
    case 'aborted':
      // The request stays open: a retry goes on from the same state again (its calls replay under the same keys).
      return { kind: 'failed', failure: { outcome, usage, task, ...(result.error?.name ? { errorName: result.error.name } : {}) } };
    case 'awaiting_approval': {
      // Another call waits: a new request (from the paused activation's key space and the step now), this one done.
      const next = await keepPausedRun(deps.approvals, def, work.activationId, result, origin, deps.redact);
      if (origin.kind === 'task') await deps.taskWaits?.[origin.source]?.(def.name, pausedTask(origin), { approvalId: next.id, tools: next.calls.map((c) => c.name), activationId: work.activationId });
      await store.finish(approvalId);
      log.info({ approval: approvalId, next: next.id }, 'the resumed run waits for approval again');
      return { kind: 'done', ending: { outcome, by: 'agent' }, handled: [], replies: 0, posts: 0, usage };
    }
    case 'posted_by_tool':
    case 'no_action':
      // A task's source hears it answered, with no text (as a task's run that posts by tool is: activation.ts).
      await tellTask(deps, def.name, origin, { kind: 'answered', text: '', activationId: work.activationId });
      await store.finish(approvalId);
      return { kind: 'done', ending: { outcome, by: 'agent' }, handled: [], replies: 0, posts: outcome.kind === 'posted_by_tool' ? 1 : 0, usage };
    case 'answered':
      break;
    default:
      return assertNever(outcome);
  }
  const text = deps.redact(outcome.text);
  let replied = 0;
  switch (origin.kind) {
    case 'notification': {
      // The same key the paused activation would have replied with: one reply, whichever run sends it.
      const r = await replyWithinLimits(deps.writes, def, origin.postId, notificationReplyKey(origin.notificationId), () => deps.hub.createComment({ agent: def.name, postId: origin.postId, content: text, parentId: origin.commentId }, { idempotencyKey: notificationReplyKey(origin.notificationId), signal: run.signal }), 'reply_to_mention');
      if (r.kind === 'failed') return { kind: 'failed', failure: { ...r.failure, usage, task } };
      replied = r.kind === 'posted' ? 1 : 0;
      break;
    }
    case 'exploration': {
      const answer = parseExplorationAnswer(text, new Set(origin.feedPostIds));
      if (answer.kind === 'reply') {
        const key = explorationReplyKey(work.activationId, answer.postId);
        const r = await replyWithinLimits(deps.writes, def, answer.postId, key, () => deps.hub.createComment({ agent: def.name, postId: answer.postId, content: answer.content }, { idempotencyKey: key, signal: run.signal }));
        if (r.kind === 'failed') return { kind: 'failed', failure: { ...r.failure, usage, task } };
        replied = r.kind === 'posted' ? 1 : 0;
      }
      break;
    }
    case 'task':
      // The paused task's source hears the answer now (an A2A caller's task completes with it), before the request
      // is done: a crash in between tells again, and the source keeps the first (the A2A store is forward-only).
      await tellTask(deps, def.name, origin, { kind: 'answered', text, activationId: work.activationId });
      break;
    default:
      return assertNever(origin);
  }
  await store.finish(approvalId);
  log.info({ approval: approvalId, decision: decision.kind, replied }, 'resumed after the decision');
  return { kind: 'done', ending: { outcome, by: 'agent' }, handled: [], replies: replied, posts: 0, usage };
}

type HeldWriteWork = Extract<ApprovalRequest['work'], { kind: 'hub_write' }> & { decision: ApprovalDecisionRecord };

/**
 * A CLI agent's held hub write, decided: approved, it is made as the agent under the key the CLI sent (through the
 * agent's limits), so a task offered again after a crash between the write and `finish` replays it on the hub instead
 * of writing twice; denied (or timed out), nothing is made. What cannot ever be made (a post the agent may not
 * start, a thread that is gone) is given up with the request closed; what may pass later keeps it open for the retry.
 */
async function makeHeldWrite(deps: ResumeDeps, run: ResumeRun, approvalId: string, work: HeldWriteWork, task: TaskRef): Promise<Step> {
  const { def, log } = run;
  const store = deps.approvals!.store;
  const { write: w, idempotencyKey, decision } = work;
  if (decision.kind === 'denied') {
    await store.finish(approvalId);
    log.info({ approval: approvalId, by: decision.by, note: decision.note, write: w.kind }, 'held hub write denied; not made');
    return done('approval_denied');
  }
  const opts = { idempotencyKey, signal: run.signal };
  let failure: FailureOutcome | undefined;
  let cause: unknown;
  let made = 0;
  try {
    if (w.kind === 'post') {
      const write = () => deps.hub.createPost({ agent: def.name, content: w.content, title: w.title ?? undefined, community: w.community ?? undefined }, opts);
      const post = deps.writes ? await deps.writes.guard(def.name, def.config.behavior, { kind: 'post', idempotencyKey }, write) : await write();
      made = 1;
      log.info({ approval: approvalId, post: post.id }, 'held post made after approval');
    } else {
      const reply = await replyWithinLimits(deps.writes, def, w.postId, idempotencyKey, () => deps.hub.createComment({ agent: def.name, postId: w.postId, content: w.content, parentId: w.parentId }, opts));
      if (reply.kind === 'refused') {
        // The thread has had every answer the agent may give (max_responses_per_thread): nothing to make, ever.
        await store.finish(approvalId);
        log.info({ approval: approvalId, post: w.postId }, 'held comment approved but refused by the agent\'s limits; not made');
        return done('approval_write_refused');
      }
      if (reply.kind === 'failed') ({ outcome: failure, cause } = reply.failure);
      else {
        made = 1;
        log.info({ approval: approvalId, comment: reply.reply.id }, 'held comment made after approval');
      }
    }
  } catch (err) {
    cause = err;
    failure = err instanceof WriteRefused ? refusalFailure(err) : outcomeOfError(err, run.signal.aborted);
  }
  if (failure) {
    const later = failure.kind === 'retryable_failure' || failure.kind === 'aborted';
    if (!later) {
      await store.finish(approvalId);
      log.warn({ approval: approvalId, write: w.kind, reason: failure.message }, 'held hub write approved but cannot be made; given up');
    }
    return { kind: 'failed', failure: { outcome: failure, usage: NO_USAGE, task, cause, ...(cause instanceof Error ? { errorName: cause.name } : {}) } };
  }
  await store.finish(approvalId);
  return { kind: 'done', ending: { outcome: { kind: 'posted_by_tool' }, by: 'agent' }, handled: [], replies: w.kind === 'comment' ? made : 0, posts: w.kind === 'post' ? made : 0, usage: NO_USAGE };
}

/** A post the agent's limits refuse, as a failure (a post has no thread whose answers could be "all given"). */
function refusalFailure(err: WriteRefused): FailureOutcome {
  const refused = outcomeOfRefusal(err.limit, err.message, err.retryAfterMs);
  return refused.kind === 'handled' ? { kind: 'terminal_failure', message: err.message, source: 'agent' } : refused;
}

/** Tells a paused task's source how it ended (nothing for a mention or an exploration). */
async function tellTask(deps: ResumeDeps, agent: string, origin: ApprovalOrigin, ended: TaskEnded): Promise<void> {
  if (origin.kind === 'task') await deps.taskEndings?.[origin.source]?.(agent, pausedTask(origin), ended);
}
