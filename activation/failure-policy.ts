// What happens after an activation fails (pure). One decision per failure: cancelled (shutdown: BullMQ runs it
// again, nothing counted), retried (BullMQ's next attempt), or final. A final failure is handled once: the agent's
// backoff, the notification's give-up count, one post of the right kind. Documented in the README's
// "When things fail".
import { assertNever, type FailureOutcome, type Outcome } from '../executors/run-outcome.ts';
import { retryRefused } from '../scheduler/retry-delay.ts';
import type { WriteLimit } from '../scheduler/write-allowance.ts';

export type ErrorPostKind = 'error' | 'guard' | 'limit';

export type FailureDecision =
  | { kind: 'cancelled' }
  | { kind: 'retry' }
  | {
      kind: 'final';
      /**
       * `count`: one more failure for the agent's doubling backoff, ending no sooner than `notBeforeMs` from now
       * when set; `pause`: hold the agent back `pauseMs` without counting (the hub failed, not the agent).
       */
      backoff: { kind: 'count'; notBeforeMs?: number } | { kind: 'pause'; pauseMs: number };
      /** Counts toward giving up on the notification being answered. */
      countNotification: boolean;
      /** Give up on the notification now, whatever its count (marked read unanswered, recorded): trying again cannot help. */
      giveUpNow?: true;
      /** What goes to m/agent-errors, if anything. */
      post: ErrorPostKind | 'none';
    };

/** How long an agent is held back after the hub kept failing its activation (no post, no doubling). */
export const HUB_FAILURE_PAUSE_MS = 15_000;

export interface AttemptContext {
  /** Counts from 1. */
  attempt: number;
  maxAttempts: number;
}

export function decideFailure(o: FailureOutcome, ctx: AttemptContext): FailureDecision {
  switch (o.kind) {
    case 'aborted':
      return { kind: 'cancelled' };
    case 'retryable_failure': {
      // A provider reset too far away for a retry to wait for: final now, and the agent waits for the reset
      // itself; the notification is not to blame, so it does not count toward giving up on it.
      if (retryRefused(o)) return { kind: 'final', backoff: { kind: 'count', notBeforeMs: o.retryAfterMs }, countNotification: false, post: 'error' };
      if (ctx.attempt < ctx.maxAttempts) return { kind: 'retry' };
      // The hub failing is not the agent's fault: a short pause instead of the doubling backoff, and no post (it
      // would go to the failing hub). It still counts against the notification, so a thread the hub can never
      // serve is given up on instead of being tried every few seconds for ever.
      if (o.source === 'hub') return { kind: 'final', backoff: { kind: 'pause', pauseMs: HUB_FAILURE_PAUSE_MS }, countNotification: true, post: 'none' };
      return { kind: 'final', backoff: { kind: 'count' }, countNotification: true, post: 'error' };
    }
    case 'terminal_failure':
      return { kind: 'final', backoff: { kind: 'count' }, countNotification: true, post: 'error' };
    case 'oversized':
      // The same thread would get the same wall of output, paid for again: the notification is settled now.
      return { kind: 'final', backoff: { kind: 'count' }, countNotification: true, giveUpNow: true, post: 'error' };
    case 'guard_stop':
      // Deterministic enough that an immediate retry would loop again: final at once, later runs follow the backoff.
      return { kind: 'final', backoff: { kind: 'count' }, countNotification: true, post: 'guard' };
    case 'limit_stop':
      return { kind: 'final', backoff: { kind: 'count' }, countNotification: true, post: 'limit' };
    default:
      return assertNever(o);
  }
}

/**
 * Whether a finished activation ends the agent's backoff: only when its executor really ran and the run ended
 * well. Nothing to do, an empty feed or a skip proves nothing about the failing agent.
 */
export function resetsBackoff(o: Outcome): boolean {
  switch (o.kind) {
    case 'answered':
    case 'posted_by_tool':
    case 'awaiting_approval':
      return true;
    case 'no_action':
      return o.reason !== 'nothing_to_do' && o.reason !== 'empty_feed';
    case 'skipped':
    case 'guard_stop':
    case 'limit_stop':
    case 'retryable_failure':
    case 'terminal_failure':
    case 'oversized':
    case 'aborted':
      return false;
    default:
      return assertNever(o);
  }
}

/**
 * A pipeline reply refused by the agent's own limits (scheduler/write-allowance.ts): `handled` when the thread
 * has had all the answers the agent may give (the notification is read, nothing posted, no failure); otherwise a
 * failure that comes back when the limit allows: after the interval, or on the next UTC day.
 */
export function outcomeOfRefusal(limit: WriteLimit, message: string, retryAfterMs: number | undefined, now: Date = new Date()): { kind: 'handled' } | FailureOutcome {
  switch (limit) {
    case 'max_responses_per_thread':
      return { kind: 'handled' };
    case 'min_interval_seconds':
      return { kind: 'retryable_failure', message, source: 'agent', retryAfterMs: retryAfterMs ?? 1_000 };
    case 'max_daily_posts':
    case 'max_daily_comments':
      return { kind: 'retryable_failure', message, source: 'agent', retryAfterMs: Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime() };
    case 'can_create_posts':
      return { kind: 'terminal_failure', message, source: 'agent' };
    default:
      return assertNever(limit);
  }
}

/** After this many terminal failures on one notification it is given up on (marked read, recorded). */
export const DEFAULT_GIVE_UP_AFTER = 3;

export function shouldGiveUp(terminalFailures: number, giveUpAfter: number = DEFAULT_GIVE_UP_AFTER): boolean {
  return terminalFailures >= giveUpAfter;
}

/**
 * What makes two failures "the same" for error posts: the class and the message with ids, paths and numbers
 * normalised, so the same fault in another activation or on another notification is recognised.
 */
export function errorFingerprint(kind: string, message: string): string {
  const normalised = message
    .toLowerCase()
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>')
    .replace(/\b(?:act|run|call|n|p|c|job)[-_][\w-]+/g, '<id>')
    .replace(/\b[0-9a-f]{6,}\b/g, '<hex>')
    .replace(/\d+(?:\.\d+)?/g, '<n>')
    .replace(/\s+/g, ' ')
    .trim();
  return `${kind}:${normalised}`;
}
