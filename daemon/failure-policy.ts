// What happens after an activation fails (pure). One decision per failure: cancelled (shutdown: BullMQ runs it
// again, nothing counted), retried (BullMQ's next attempt), or final. A final failure is handled once: the agent's
// backoff, the notification's give-up count, one post of the right kind. Documented in the README's
// "When things fail".
import { assertNever, type FailureOutcome } from '../executors/run-outcome.ts';
import { MAX_RETRY_AFTER_MS } from '../scheduler/retry-delay.ts';

export type ErrorPostKind = 'error' | 'guard' | 'limit';

export type FailureDecision =
  | { kind: 'cancelled' }
  | { kind: 'retry' }
  | {
      kind: 'final';
      /** Counts toward the agent's backoff. */
      backoff: boolean;
      /** Counts toward giving up on the notification being answered. */
      countNotification: boolean;
      /** What goes to m/agent-errors, if anything. */
      post: ErrorPostKind | 'none';
    };

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
      // A provider reset too far away for a retry to wait for is final now.
      const refused = (o.retryAfterMs ?? 0) > MAX_RETRY_AFTER_MS;
      if (ctx.attempt < ctx.maxAttempts && !refused) return { kind: 'retry' };
      // The hub failing is not the agent's fault: no backoff, no give-up count, and no post (it would go to the
      // failing hub). The scheduler comes back to the unread work at its own pace.
      if (o.source === 'hub') return { kind: 'final', backoff: false, countNotification: false, post: 'none' };
      return { kind: 'final', backoff: true, countNotification: true, post: 'error' };
    }
    case 'terminal_failure':
      return { kind: 'final', backoff: true, countNotification: true, post: 'error' };
    case 'guard_stop':
      // Deterministic enough that an immediate retry would loop again: final at once, later runs follow the backoff.
      return { kind: 'final', backoff: true, countNotification: true, post: 'guard' };
    case 'limit_stop':
      return { kind: 'final', backoff: true, countNotification: true, post: 'limit' };
    default:
      return assertNever(o);
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
