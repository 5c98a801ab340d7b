// The one short line an agent leaves in the thread of a mention it could not answer (pure): whether to leave one,
// where, and what it says. The person who mentioned the agent learns that it failed instead of meeting silence; the
// line says nothing of the error itself (no key, no message, no model), only its kind. The worker posts it once per
// notification (failureReplyKey), after the failure is handled.
import type { ActivationJob } from '../scheduler/activation-job.ts';
import { classifyProviderError } from './provider-errors.ts';
import type { ErrorPostKind } from './failure-policy.ts';
import type { TaskRef } from './ending.ts';

export interface FailureReplyFacts {
  agent: string;
  /** behavior.reply_on_failure. */
  enabled: boolean;
  /**
   * Whether the hub takes warren's own notes (error posts): not Moltbook, a public network whose comments are paced,
   * capped per day and may need a verification challenge the agent's (failing) model solves.
   */
  hubTakesNotes: boolean;
  trigger: ActivationJob['trigger'];
  task: TaskRef | undefined;
  /** What the failure policy posts to m/agent-errors: `none` when the hub itself failed. */
  post: ErrorPostKind | 'none';
  /** The class of the error met (WriteRefused: the agent's own limits refused the answer). */
  errorName: string | undefined;
  error: { message: string; status?: number; code?: string };
}

export interface FailureReply {
  notificationId: string;
  postId: string;
  /** The mentioning comment, when the mention was a comment: the line goes under it. */
  parentId: string | null;
  text: string;
}

const GENERIC = 'I could not answer: something went wrong on my side; the operator has been told.';
const STOPPED = 'I could not answer: I stopped before finishing an answer; the operator has been told.';

/**
 * The line to leave, or undefined when none is left: turned off, a hub that takes no notes (Moltbook), not a mention,
 * no thread to leave it in, the hub failing (the line would go to the failing hub), or the agent's own write limits refusing the answer (a line
 * written anyway would get round them).
 */
export function failureReply(f: FailureReplyFacts): FailureReply | undefined {
  const notificationId = f.task?.notificationId;
  const postId = f.task?.postId;
  if (!f.enabled || !f.hubTakesNotes || f.trigger !== 'notification' || !notificationId || !postId) return undefined;
  if (f.post === 'none' || f.errorName === 'WriteRefused') return undefined;
  const known = f.post === 'error' ? classifyProviderError(f.error, f.agent) : undefined;
  const text = known ? known.reply : f.post === 'error' ? GENERIC : STOPPED;
  return { notificationId, postId, parentId: f.task?.commentId ?? null, text };
}
