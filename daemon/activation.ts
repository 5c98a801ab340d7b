// One activation, start to end: read the inbox, build each notification's context, run the executor,
// post the answer, and only then mark the notification read; finally tell the hub the agent ran.
import type { Logger } from 'pino';
import { EventLog, type ActivationEvent } from '../agent-loop/events.ts';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../agent-loop/messages.ts';
import type { HubAdapter } from '../hub-client/adapter.ts';
import type { Notification } from '../hub-client/types.ts';
import { ExecutorSetupError, type Executor } from '../executors/executor.ts';
import { buildNotificationContext } from '../prompts/context.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { ActivationJob } from '../scheduler/activation-job.ts';
import type { ExecutorRegistry } from './executor-registry.ts';
import { idempotencyKey, readKey } from './idempotency.ts';
import type { ReplyOutbox } from './reply-outbox.ts';
import { partitionInbox } from './inbox-policy.ts';

export interface ActivationDeps {
  hub: HubAdapter;
  agents: { get(name: string): AgentDefinition | undefined };
  executors: ExecutorRegistry;
  outbox: ReplyOutbox;
  logger: Logger;
  /** Most notifications answered in one activation; the rest stay unread and bring the agent back. */
  maxNotificationsPerActivation?: number;
}

export interface ActivationOutcome {
  activationId: string;
  agent: string;
  status: 'replied' | 'idle' | 'skipped';
  /** Notifications marked read by this activation. */
  handled: string[];
  replies: number;
  usage: TokenUsage;
  events: ActivationEvent[];
}

/** The activation could not finish; `retryable` says whether BullMQ should try it again. */
export class ActivationError extends Error {
  override readonly name = 'ActivationError';
  readonly agent: string;
  readonly retryable: boolean;
  constructor(agent: string, message: string, retryable: boolean, cause?: unknown) {
    super(`activation of ${agent} failed: ${message}`, { cause });
    this.agent = agent;
    this.retryable = retryable;
  }
}

export async function runActivation(deps: ActivationDeps, activationId: string, job: ActivationJob, jobSignal: AbortSignal): Promise<ActivationOutcome> {
  const { hub, logger } = deps;
  const log = logger.child({ agent: job.agent, activation: activationId });
  const events = new EventLog(activationId);
  const outcome: ActivationOutcome = { activationId, agent: job.agent, status: 'idle', handled: [], replies: 0, usage: ZERO_USAGE, events: events.events };

  const def = deps.agents.get(job.agent);
  if (!def) {
    log.warn('agent is no longer defined; activation skipped');
    return { ...outcome, status: 'skipped' };
  }
  const resolved = deps.executors.resolve(def);
  if ('unavailable' in resolved) throw new ActivationError(job.agent, resolved.unavailable, false);
  events.emit({ type: 'activation_start', agent: def.name, executor: def.config.type });
  // One signal for the whole activation: the worker's cancel (shutdown) or the agent's max_duration.
  const signal = AbortSignal.any([jobSignal, AbortSignal.timeout(def.config.behavior.max_duration)]);

  try {
    const { notifications } = await hub.listNotifications(def.name, { unreadOnly: true, limit: 50, signal });
    const { actionable, ignorable } = partitionInbox(notifications, def.config.behavior);
    // Notifications the agent is configured not to answer are handled by policy: marking them read
    // keeps the agent from being woken for them again.
    if (ignorable.length) {
      const ids = ignorable.map((n) => n.id);
      await hub.markRead(def.name, ids, { idempotencyKey: readKey(ids), signal });
      outcome.handled.push(...ignorable.map((n) => n.id));
    }
    const batch = actionable.slice(0, deps.maxNotificationsPerActivation ?? 10);
    for (const n of batch) {
      if (signal.aborted) throw new ActivationError(def.name, 'aborted', true);
      const answered = await handleNotification(deps, resolved.executor, def, n, { activationId, events, signal, log });
      outcome.usage = addUsage(outcome.usage, answered.usage);
      outcome.handled.push(n.id);
      if (answered.replied) outcome.replies++;
    }
    outcome.status = outcome.replies > 0 ? 'replied' : 'idle';
    return outcome;
  } catch (err) {
    if (err instanceof ActivationError) throw err;
    if (err instanceof ExecutorSetupError) throw new ActivationError(def.name, err.message, false, err);
    const retryable = (err as { retryable?: unknown }).retryable !== false;
    throw new ActivationError(def.name, err instanceof Error ? err.message : String(err), retryable, err);
  } finally {
    // Success or failure, the hub learns the agent ran, so staleness is reset (hub-api.md §8).
    await hub.markActivated(def.name, { idempotencyKey: idempotencyKey(activationId, 'activated') }).catch((err: unknown) => {
      log.warn({ err }, 'could not report the activation to the hub');
    });
  }
}

async function handleNotification(
  deps: ActivationDeps,
  executor: Executor,
  def: AgentDefinition,
  n: Notification,
  run: { activationId: string; events: EventLog; signal: AbortSignal; log: Logger },
): Promise<{ replied: boolean; usage: TokenUsage }> {
  const { hub, outbox } = deps;
  const { activationId, events, signal, log } = run;
  if (!n.post_id) {
    // Nothing to answer in a thread (e.g. a follow); handled by reading it.
    await hub.markRead(def.name, [n.id], { idempotencyKey: readKey([n.id]), signal });
    return { replied: false, usage: ZERO_USAGE };
  }
  let usage = ZERO_USAGE;
  let text = await outbox.get(def.name, n.id);
  let posted = false;
  if (text === undefined) {
    const post = await hub.getPost(n.post_id, { includeComments: true, signal });
    const context = buildNotificationContext(def, post, n);
    const result = await executor.run({ id: activationId, definition: def, context, events, signal });
    if (result.termination === 'error' || result.termination === 'aborted') {
      throw new ActivationError(def.name, result.error?.message ?? result.termination, result.error?.retryable ?? true);
    }
    usage = result.usage;
    posted = result.posted;
    text = posted ? '' : result.text;
    if (text) await outbox.put(def.name, n.id, text);
    log.info({ notification: n.id, termination: result.termination }, text ? 'answer ready' : 'no reply needed');
  } else {
    log.info({ notification: n.id }, 'posting the answer kept from an earlier attempt');
  }
  if (text) {
    // Keyed by the notification, not the attempt: whichever activation answers it, the hub keeps one reply.
    const comment = await hub.createComment(
      { agent: def.name, postId: n.post_id, content: text, parentId: n.comment_id ?? null },
      { idempotencyKey: `notification:${n.id}:reply`, signal },
    );
    log.info({ notification: n.id, post: n.post_id, comment: comment.id }, 'replied');
  }
  // Only now, with the answer safely on the hub, is the notification read.
  await hub.markRead(def.name, [n.id], { idempotencyKey: readKey([n.id]), signal });
  await outbox.clear(def.name, n.id);
  return { replied: Boolean(text) || posted, usage };
}
