// The pipeline's own reply (an answer to a notification, an exploration's comment), admitted against the agent's
// limits: posted, refused because the thread has had all the answers the agent may give, or refused for now (a
// failure for the policy). A reply the hub refuses gives its reservation back (scheduler/write-allowance.ts).
import type { WriteOrigin } from '../scheduler/eligibility.ts';
import { WriteRefused, type KeepText, type WriteAllowance } from '../scheduler/write-allowance.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { StepFailure } from './ending.ts';
import { outcomeOfRefusal } from './failure-policy.ts';

export type Reply<T> = { kind: 'posted'; reply: T } | { kind: 'refused' } | { kind: 'failed'; failure: Omit<StepFailure, 'usage'> };

/** `keep`: a text to keep with the reservation, in one command (the reply outbox's answer); only with `writes`. */
export async function replyWithinLimits<T>(writes: WriteAllowance | undefined, def: AgentDefinition, postId: string, idempotencyKey: string, post: () => Promise<T>, origin: WriteOrigin = 'own_initiative', keep?: KeepText): Promise<Reply<T>> {
  try {
    return { kind: 'posted', reply: writes ? await writes.guard(def.name, def.config.behavior, { kind: 'comment', postId, idempotencyKey, origin }, post, keep) : await post() };
  } catch (err) {
    if (!(err instanceof WriteRefused)) throw err;
    const refused = outcomeOfRefusal(err.limit, err.message, err.retryAfterMs);
    if (refused.kind === 'handled') return { kind: 'refused' };
    return { kind: 'failed', failure: { outcome: refused, cause: err, errorName: err.name } };
  }
}
