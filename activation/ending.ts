// How an activation ends, as a value (pure). Each step of an activation (activation/activation.ts) returns what it
// came to: it did its work (and how that ended), nothing ran (skipped), or it left work undone (a failure). One
// function, endingOf, combines the steps into the activation's ending; the precedence between them is written
// here as code, and test/activation-ending.test.ts shows it as a table.
import { addUsage, ZERO_USAGE, type TokenUsage } from '../agent-loop/messages.ts';
import { assertNever, outcomeReason, type FailureOutcome, type Outcome } from '../executors/run-outcome.ts';

export type UsageWithCost = TokenUsage & { costUsd: number };

export const NO_USAGE: UsageWithCost = Object.freeze({ ...ZERO_USAGE, costUsd: 0 });

export function plusUsage(a: UsageWithCost, b: TokenUsage & { costUsd?: number }): UsageWithCost {
  return { ...addUsage(a, b), costUsd: a.costUsd + (b.costUsd ?? 0) };
}

/** What an activation is working on, for error posts. */
export interface TaskRef {
  notificationId?: string;
  postId?: string;
  /** The comment that mentioned the agent, when the mention was one (a reply in the thread goes under it). */
  commentId?: string;
  from?: string;
  excerpt?: string;
  /** A task from the task inbox (scheduler/task-inbox.ts): its id and where it came from. */
  taskId?: string;
  source?: string;
}

/** What stopped a run, for the short guard and limit posts. */
export interface StopDetail {
  tool?: string;
  steps: number;
}

/** The endings of a step that did its work. */
export type WorkOutcome = Extract<Outcome, { kind: 'answered' | 'posted_by_tool' | 'no_action' | 'awaiting_approval' }>;

/** The endings of an activation that did not fail. */
export type EndedOutcome = Exclude<Outcome, FailureOutcome>;

/** A step that left work undone, with what the error post and the record need to say about it. */
export interface StepFailure {
  outcome: FailureOutcome;
  /** What the step cost (model calls before the failure). */
  usage: UsageWithCost;
  task?: TaskRef;
  stop?: StopDetail;
  /** The class of the error met (e.g. ModelError), when known. */
  errorName?: string;
  cause?: unknown;
}

export type Step =
  /** Nothing ran: the agent is no longer defined, or the budget says no. */
  | { kind: 'skipped'; reason: string }
  /**
   * The step did its work. `ending`: how it ended, and who decided it (the agent, or the pipeline: a reply refused
   * by the agent's limits, an empty feed); absent when the step changes nothing about the ending (a follow read).
   */
  | { kind: 'done'; ending?: { outcome: WorkOutcome; by: 'agent' | 'pipeline' }; handled: readonly string[]; replies: number; posts: number; usage: UsageWithCost }
  | { kind: 'failed'; failure: StepFailure };

export type Ending =
  | { kind: 'ended'; outcome: EndedOutcome; reason: string; handled: string[]; replies: number; posts: number; usage: UsageWithCost }
  /** `failure.usage` is the whole activation's, the failing step's included. */
  | { kind: 'failed'; failure: StepFailure };

/** An activation with no work step ends here: nothing to do (an empty inbox). */
const NOTHING_TO_DO: EndedOutcome = { kind: 'no_action', reason: 'nothing_to_do' };

/**
 * The activation's ending from its steps, in the order they ran. The precedence:
 * 1. The first failure ends the activation as failed, whatever came before it: the notifications already answered
 *    stay answered and read, but the failure policy must see the failure (its notification is still unread).
 * 2. The first skip ends it as skipped (nothing ran).
 * 3. Otherwise each step's ending replaces the one before (the activation ended as its last work did), except that
 *    the agent deciding not to answer one notification does not undo an answer or a post made for an earlier one.
 * Usage, handled notifications, replies and posts add up over the steps that ran.
 */
export function endingOf(steps: readonly Step[]): Ending {
  let outcome = NOTHING_TO_DO;
  let usage = NO_USAGE;
  const handled: string[] = [];
  let replies = 0;
  let posts = 0;
  for (const s of steps) {
    switch (s.kind) {
      case 'failed':
        return { kind: 'failed', failure: { ...s.failure, usage: plusUsage(usage, s.failure.usage) } };
      case 'skipped': {
        const skipped: EndedOutcome = { kind: 'skipped', reason: s.reason };
        return { kind: 'ended', outcome: skipped, reason: outcomeReason(skipped), handled, replies, posts, usage };
      }
      case 'done':
        usage = plusUsage(usage, s.usage);
        handled.push(...s.handled);
        replies += s.replies;
        posts += s.posts;
        if (s.ending && replaces(s.ending, outcome)) outcome = s.ending.outcome;
        break;
      default:
        return assertNever(s);
    }
  }
  return { kind: 'ended', outcome, reason: outcomeReason(outcome), handled, replies, posts, usage };
}

/** Rule 3: whether a step's ending replaces the activation's ending so far. */
function replaces(next: { outcome: WorkOutcome; by: 'agent' | 'pipeline' }, current: EndedOutcome): boolean {
  if (next.by === 'agent' && next.outcome.kind === 'no_action') return current.kind === 'no_action';
  return true;
}
