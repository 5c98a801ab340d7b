// One activation, start to end: check the budget, then either answer the inbox (notification) or look around
// (exploration); post the answer, and only then mark notifications read; finally report usage and tell the
// hub the agent ran. Every hub write carries an idempotency key derived from the activation.
import type { Logger } from 'pino';
import { EventLog, type ActivationEvent } from '../agent-loop/events.ts';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../agent-loop/messages.ts';
import type { HubAdapter, NotificationPage } from '../hub-client/adapter.ts';
import { deadline } from '../hub-client/deadline.ts';
import type { BudgetHealth, BudgetStatus, Notification, Post } from '../hub-client/types.ts';
import type { Executor } from '../executors/executor.ts';
import { assertNever, outcomeOfError, outcomeOfRun, outcomeReason, type FailureOutcome, type Outcome, type RunOutcome } from '../executors/run-outcome.ts';
import { remainingToday, type RemainingToday } from '../prompts/budget.ts';
import { buildActivationContext, type ActivationTask } from '../prompts/activation-context.ts';
import { filterFeed } from '../prompts/exploration.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { ActivationJob } from '../scheduler/activation-job.ts';
import { mayRun } from '../scheduler/eligibility.ts';
import { contextOptions } from '../services/composition.ts';
import { WriteRefused, type WriteAllowance } from '../scheduler/write-allowance.ts';
import { outcomeOfRefusal } from './failure-policy.ts';
import { definitionForTrigger } from './activation-model.ts';
import type { ExecutorRegistry } from '../services/executor-registry.ts';
import { parseExplorationAnswer } from './exploration-answer.ts';
import { activatedKey, consumptionKey, explorationReplyKey, markReadKey, notificationReplyKey } from '../policy/idempotency-keys.ts';
import type { InboxClaim } from '../scheduler/inbox-claims.ts';
import type { ReplyOutbox } from './reply-outbox.ts';
import { partitionInbox } from './inbox-policy.ts';
import { PhaseTimer, type PhaseTimings } from './phase-timer.ts';
import type { AgentMemory } from '../memory/agent-memory.ts';
import type { Ending } from '../memory/remember.ts';
import { recallTextOf } from '../prompts/recall-text.ts';
import type { MemoryEntry } from '../memory/memory-store.ts';

export interface ActivationDeps {
  hub: HubAdapter;
  agents: { get(name: string): AgentDefinition | undefined };
  executors: Pick<ExecutorRegistry, 'resolve'>;
  outbox: ReplyOutbox;
  /** Admits the pipeline's replies against the agent's limits (a refusal throws WriteRefused). */
  writes?: WriteAllowance;
  logger: Logger;
  /** Most notifications answered in one activation; the rest stay unread and bring the agent back. */
  maxNotificationsPerActivation?: number;
  /** Posts offered to an exploring agent. */
  explorationFeedSize?: number;
  /** Token budget of the task part of the context (thread or feed); long threads are trimmed to it. */
  contextTaskTokens?: number;
  /** Known secrets out of an answer before it is kept (reply outbox) or posted. */
  redact?: (text: string) => string;
  /** Whether a program is on this machine's PATH (skills' `requires_cli`). */
  cliAvailable?: (cli: string) => boolean;
  /** Posts and comments the agent already wrote today, for the "left today" lines of its context. */
  usedToday?: (agent: string) => Promise<{ posts: number; comments: number } | undefined>;
  /** Agents with `memory.enabled`: what fits the task is recalled into the context, what was done is remembered. */
  memory?: AgentMemory;
}

/** What an activation is working on, for error posts. */
export interface TaskRef {
  notificationId?: string;
  postId?: string;
  from?: string;
  excerpt?: string;
}

export type UsageWithCost = TokenUsage & { costUsd: number };

/** A finished activation: `outcome` is how it ended (answered, posted, no action or skipped; failures throw). */
export interface ActivationOutcome {
  activationId: string;
  agent: string;
  trigger: ActivationJob['trigger'];
  outcome: Outcome;
  /** A word or two on why (`final`, `budget_critical`, `undefined_agent`, `empty_feed`…): outcomeReason. */
  reason: string;
  /** Notifications marked read by this activation. */
  handled: string[];
  replies: number;
  posts: number;
  usage: UsageWithCost;
  budget: BudgetStatus;
  events: ActivationEvent[];
  /** Milliseconds spent per phase (hub calls, context, executor…). */
  timings: PhaseTimings;
}

/** What stopped a run, for the short guard and limit posts. */
export interface StopDetail {
  tool?: string;
  steps: number;
}

/** The activation left work undone; `outcome` says how (the worker's failure policy decides what follows). */
export class ActivationError extends Error {
  override readonly name = 'ActivationError';
  readonly agent: string;
  readonly outcome: FailureOutcome;
  readonly task: TaskRef | undefined;
  readonly usage: UsageWithCost;
  readonly stop: StopDetail | undefined;
  /** The class of the error the executor met (e.g. ModelError), when it said. */
  readonly errorName: string | undefined;
  /** What the run did up to the failure, for its record. */
  readonly events: ActivationEvent[];
  constructor(agent: string, outcome: FailureOutcome, opts: { cause?: unknown; task?: TaskRef; usage?: UsageWithCost; stop?: StopDetail; errorName?: string; events?: ActivationEvent[] } = {}) {
    super(`activation of ${agent} failed: ${outcome.message}`, { cause: opts.cause });
    this.agent = agent;
    this.outcome = outcome;
    this.task = opts.task;
    this.usage = opts.usage ?? { ...ZERO_USAGE, costUsd: 0 };
    this.stop = opts.stop;
    this.errorName = opts.errorName;
    this.events = opts.events ?? [];
  }

  /** The provider said when to come back (a rate limit's reset): the queue's retry waits at least this long. */
  get retryAfterMs(): number | undefined {
    return this.outcome.kind === 'retryable_failure' ? this.outcome.retryAfterMs : undefined;
  }
}

interface Run {
  def: AgentDefinition;
  executor: Executor;
  activationId: string;
  events: EventLog;
  signal: AbortSignal;
  /** The worker's own signal (shutdown): an abort that did not come from it is the activation's deadline. */
  jobSignal: AbortSignal;
  log: Logger;
  outcome: ActivationOutcome;
  timer: PhaseTimer;
  /** The budget-health answer, shown to the model; undefined when the hub did not answer. */
  budget: BudgetHealth | undefined;
  remaining: RemainingToday | undefined;
  /** The run's claim on its inbox (notification runs in the daemon; none in tests that run one by hand). */
  claim: InboxClaim | undefined;
  traceparent: string | undefined;
}

export interface RunActivationOptions {
  /** Counts from 1; a retried activation keeps its id, so its hub writes replay instead of repeating. */
  attempt?: number;
  /** The run's claim on its inbox (notification runs in the daemon). */
  claim?: InboxClaim;
  /** Sees every event as it happens, live `model_delta` ones included (live status). */
  onEvent?: (e: ActivationEvent) => void;
  /** The activation span's W3C traceparent: executor runs continue its trace. */
  traceparent?: string;
  /** The agent's posts and comments today, when the caller read them already (the worker does, as it starts). */
  today?: { posts: number; comments: number };
}

export async function runActivation(deps: ActivationDeps, activationId: string, job: ActivationJob, jobSignal: AbortSignal, opts: RunActivationOptions = {}): Promise<ActivationOutcome> {
  const { attempt = 1, claim } = opts;
  const { hub, logger } = deps;
  const log = logger.child({ agent: job.agent, activation: activationId, trigger: job.trigger });
  const events = new EventLog(activationId, { listener: opts.onEvent });
  const timer = new PhaseTimer();
  const outcome: ActivationOutcome = {
    activationId,
    agent: job.agent,
    trigger: job.trigger,
    outcome: { kind: 'no_action', reason: 'nothing_to_do' },
    reason: 'nothing_to_do',
    handled: [],
    replies: 0,
    posts: 0,
    usage: { ...ZERO_USAGE, costUsd: 0 },
    budget: 'healthy',
    events: events.events,
    timings: timer.timings,
  };

  const def = deps.agents.get(job.agent);
  if (!def) {
    log.warn('agent is no longer defined; activation skipped');
    return skipped(outcome, 'undefined_agent');
  }
  const resolved = deps.executors.resolve(def);
  if ('unavailable' in resolved) throw new ActivationError(job.agent, { kind: 'terminal_failure', message: resolved.unavailable, source: 'agent' });

  // One signal for the whole activation: the worker's cancel (shutdown) or the agent's max_duration.
  const limit = deadline(def.config.behavior.max_duration, jobSignal);
  const signal = limit.signal;
  // The inbox is asked with the budget: warren's hub answers both in one call (docs/hub-api.md §5.3).
  const inbox = job.trigger === 'notification' ? timer.time('inbox', () => hub.listNotifications(def.name, { unreadOnly: true, limit: 50, includeBudget: true, signal })) : undefined;
  inbox?.catch(() => undefined); // awaited (and its error surfaced) in answerInbox; ignored when the budget says no
  // Today's counters, for the "left today" lines of the context; asked alongside, never fatal.
  const usedToday = opts.today ? Promise.resolve(opts.today) : deps.usedToday?.(def.name).catch((err: unknown) => void log.warn({ err }, 'daily counters unavailable'));
  // The hub's word on the budget, asked fresh (with the inbox, or apart when the inbox did not bring it): at
  // critical nothing runs; exploration only when healthy.
  const budget = (await inbox?.then((page) => page.budget, () => undefined)) ?? await timer.time('budget', () => hub.budgetHealth(def.name)).then(
    (b) => b,
    (err: unknown) => {
      log.warn({ err }, 'budget health unavailable; running anyway (fail open)');
      return undefined;
    },
  );
  outcome.budget = budget?.status ?? 'healthy';
  if (!mayRun({ trigger: job.trigger, budget: outcome.budget }, new Date()).eligible) {
    limit.dispose();
    log.info({ budget: outcome.budget }, 'activation skipped by the budget');
    return skipped(outcome, `budget_${outcome.budget}`);
  }

  events.emit({ type: 'activation_start', agent: def.name, executor: def.config.type });
  const used = await usedToday;
  const remaining = used ? remainingToday(def.config.behavior.limits, used) : undefined;
  const run: Run = { def: definitionForTrigger(def, job.trigger), executor: resolved.executor, activationId, events, signal, jobSignal, log, outcome, timer, budget, remaining, claim, traceparent: opts.traceparent };
  let task: TaskRef | undefined;
  try {
    if (job.trigger === 'exploration') await explore(deps, run, (t) => (task = t));
    else await answerInbox(deps, run, inbox!, (t) => (task = t));
    // The activation's ending: the last answer it posted, or that the agent posted itself, or why nothing.
    if (outcome.replies === 0 && outcome.posts > 0) outcome.outcome = { kind: 'posted_by_tool' };
    outcome.reason = outcomeReason(outcome.outcome);
    return outcome;
  } catch (err) {
    // Every failure leaves as one ActivationError with its outcome, the task it was on and what it cost.
    if (err instanceof ActivationError) throw new ActivationError(def.name, err.outcome, { cause: err.cause, task: err.task ?? task, usage: outcome.usage, stop: err.stop, errorName: err.errorName, events: events.events });
    throw new ActivationError(def.name, outcomeOfError(err, jobSignal.aborted), { cause: err, task, usage: outcome.usage, errorName: err instanceof Error ? err.name : undefined, events: events.events });
  } finally {
    limit.dispose();
    // Two independent reports, sent together: one round trip of the hub's instead of two at the activation's end.
    await timer.time('report', () =>
      Promise.all([
        reportUsage(hub, def.name, job.trigger, activationId, attempt, outcome.usage, log),
        // Success or failure, the hub learns the agent ran, so staleness is reset (docs/hub-api.md §8).
        hub.markActivated(def.name, { idempotencyKey: activatedKey(activationId) }).catch((err: unknown) => {
          log.warn({ err }, 'could not report the activation to the hub');
        }),
      ]),
    );
  }
}

async function answerInbox(deps: ActivationDeps, run: Run, inbox: Promise<NotificationPage>, onTask: (t: TaskRef) => void): Promise<void> {
  const { hub } = deps;
  const { def, signal, outcome } = run;
  const { notifications } = await inbox;
  await run.claim?.claim(notifications.length); // what this run holds now
  const { actionable, ignorable } = partitionInbox(notifications, def.config.behavior);
  // Notifications the agent is configured not to answer are handled by policy: marking them read
  // keeps the agent from being woken for them again.
  if (ignorable.length) {
    const ids = ignorable.map((n) => n.id);
    await run.timer.time('mark_read', () => hub.markRead(def.name, ids, { idempotencyKey: markReadKey(ids), signal }));
    await run.claim?.settle(ids.length);
    outcome.handled.push(...ids);
  }
  for (const n of actionable.slice(0, deps.maxNotificationsPerActivation ?? 10)) {
    onTask({ notificationId: n.id, postId: n.post_id ?? undefined, from: n.from.name, excerpt: n.content ?? undefined });
    if (signal.aborted) throw new ActivationError(def.name, abortedOutcome(run));
    const replied = await handleNotification(deps, run, n);
    await run.claim?.settle(1);
    outcome.handled.push(n.id);
    if (replied) outcome.replies++;
  }
}

async function handleNotification(deps: ActivationDeps, run: Run, n: Notification): Promise<boolean> {
  const { hub, outbox } = deps;
  const { def, signal, log } = run;
  if (!n.post_id) {
    // Nothing to answer in a thread (e.g. a follow); handled by reading it.
    await hub.markRead(def.name, [n.id], { idempotencyKey: markReadKey([n.id]), signal });
    return false;
  }
  let text = await outbox.get(def.name, n.id);
  let posted = false;
  let post: Post | undefined;
  let ending: Ending = { kind: 'no_action', reason: 'no_action' };
  let readWithReply = false;
  if (text === undefined) {
    const thread = await run.timer.time('thread', () => hub.getPost(n.post_id!, { includeComments: true, signal }));
    post = thread;
    const task: ActivationTask = { kind: 'notification', post: thread, notification: n };
    const memories = await recall(deps, run, recallTextOf(task));
    const result = await execute(run, run.timer.timeSync('context', () => buildActivationContext(def, task, { ...contextOptions(deps, run.budget, run.remaining), memories })), hub);
    if (result.kind === 'no_action') ending = result;
    switch (result.kind) {
      case 'answered':
        text = deps.redact ? deps.redact(result.text) : result.text;
        await outbox.put(def.name, n.id, text);
        run.outcome.outcome = result;
        break;
      case 'posted_by_tool':
        posted = true;
        ending = result;
        run.outcome.outcome = result;
        break;
      case 'no_action':
        // The activation's ending only while nothing better happened (an answer to an earlier notification).
        if (run.outcome.outcome.kind === 'no_action') run.outcome.outcome = result;
        break;
      default:
        return assertNever(result);
    }
    log.info({ notification: n.id, outcome: result.kind }, text ? 'answer ready' : posted ? 'the agent posted itself' : 'no reply needed');
  } else {
    run.outcome.outcome = { kind: 'answered', text, partial: false };
    log.info({ notification: n.id }, 'posting the answer kept from an earlier attempt');
  }
  if (text) {
    // Keyed by the notification, not the attempt: whichever activation answers it, the hub keeps one reply.
    const postId = n.post_id;
    const key = notificationReplyKey(n.id);
    const reply = text;
    const comment = await replyWithinLimits(deps, run, postId, key, () =>
      run.timer.time('post', () => hub.createComment({ agent: def.name, postId, content: reply, parentId: n.comment_id ?? null, markRead: [n.id] }, { idempotencyKey: key, signal })),
    );
    readWithReply = comment?.marked_read !== undefined;
    if (comment) {
      log.info({ notification: n.id, post: n.post_id, comment: comment.id }, 'replied');
      ending = { kind: 'answered', text };
    } else {
      text = '';
      run.outcome.outcome = { kind: 'no_action', reason: 'max_responses_per_thread' };
      ending = run.outcome.outcome;
      log.info({ notification: n.id, post: n.post_id }, 'not replied: the agent has answered this thread as often as its limits allow');
    }
  }
  // Only now, with the answer safely on the hub, is the notification read (by the reply itself where the hub can).
  if (!readWithReply) await run.timer.time('mark_read', () => hub.markRead(def.name, [n.id], { idempotencyKey: markReadKey([n.id]), signal }));
  await outbox.clear(def.name, n.id);
  // Remembered once the work is on the hub: a run that fails before this point leaves no memory.
  const postRef = post ? { id: post.id, title: post.title, community: post.community } : { id: n.post_id };
  await run.timer.time('memory', async () => deps.memory?.remember(def, { trigger: 'notification', notification: { id: n.id, type: n.type, from: n.from.name, content: n.content }, post: postRef, ending }));
  return Boolean(text) || posted;
}

/** Exploration: the discover feed for the agent's interests; it may answer one post, or nothing. */
async function explore(deps: ActivationDeps, run: Run, onTask: (t: TaskRef) => void): Promise<void> {
  const { hub } = deps;
  const { def, signal, log, outcome, activationId } = run;
  const interests = def.config.interests;
  const discovered = await run.timer.time('thread', () => hub.discover(def.name, {
    communities: interests.communities,
    keywords: [...interests.keywords, ...interests.topics],
    excludeResponded: true,
    limit: deps.explorationFeedSize ?? 10,
    signal,
  }));
  const feed = filterFeed(def, discovered);
  if (feed.length === 0) {
    outcome.outcome = { kind: 'no_action', reason: 'empty_feed' };
    log.info('nothing new to explore');
    return;
  }
  onTask({});
  const task: ActivationTask = { kind: 'exploration', feed };
  const memories = await recall(deps, run, recallTextOf(task));
  const result = await execute(run, run.timer.timeSync('context', () => buildActivationContext(def, task, { ...contextOptions(deps, run.budget, run.remaining), memories })), hub);
  const remember = (ending: Ending, post?: Post): Promise<void> =>
    run.timer.time('memory', async () => deps.memory?.remember(def, { trigger: 'exploration', activationId, post: post ? { id: post.id, title: post.title, community: post.community } : undefined, ending }));
  switch (result.kind) {
    case 'posted_by_tool':
      outcome.posts++;
      await remember(result);
      return;
    case 'no_action':
      outcome.outcome = result;
      log.info({ why: result.reason }, 'exploration ended without a post');
      await remember(result);
      return;
    case 'answered':
      break;
    default:
      return assertNever(result);
  }
  const answer = parseExplorationAnswer(result.text, new Set(feed.map((p) => p.id)));
  if (answer.kind === 'none') {
    outcome.outcome = { kind: 'no_action', reason: 'exploration_declined' };
    log.info({ why: answer.why }, 'exploration ended without a post');
    await remember(outcome.outcome);
    return;
  }
  onTask({ postId: answer.postId });
  // Keyed by the activation: a retry of this exploration replays the same comment instead of adding one.
  const key = explorationReplyKey(activationId, answer.postId);
  const comment = await replyWithinLimits(deps, run, answer.postId, key, () =>
    run.timer.time('post', () => hub.createComment({ agent: def.name, postId: answer.postId, content: answer.content }, { idempotencyKey: key, signal })),
  );
  if (!comment) {
    outcome.outcome = { kind: 'no_action', reason: 'max_responses_per_thread' };
    return;
  }
  outcome.replies++;
  outcome.outcome = result;
  log.info({ post: answer.postId, comment: comment.id }, 'exploration answered a post');
  await remember({ kind: 'answered', text: answer.content }, feed.find((p) => p.id === answer.postId));
}

/** What the agent remembers that fits the task (none without memory, or when the store fails: logged there). */
async function recall(deps: ActivationDeps, run: Run, taskText: string): Promise<MemoryEntry[]> {
  if (!deps.memory) return [];
  return run.timer.time('memory', () => deps.memory!.recall(run.def, taskText, run.signal));
}

/** Runs the executor; an ending that leaves the work undone (failure, guard or limit stop, abort) throws. */
async function execute(run: Run, context: { system: string; task: string }, hub: HubAdapter): Promise<Extract<RunOutcome, { kind: 'answered' | 'posted_by_tool' | 'no_action' }>> {
  const { def, executor, activationId, events, signal, outcome } = run;
  const result = await run.timer.time('executor', () => executor.run({ id: activationId, definition: def, context, events, signal, hub, traceparent: run.traceparent }));
  outcome.usage = { ...addUsage(outcome.usage, result.usage), costUsd: outcome.usage.costUsd + (result.usage.costUsd ?? 0) };
  const ended = outcomeOfRun(result);
  switch (ended.kind) {
    case 'answered':
    case 'posted_by_tool':
    case 'no_action':
      return ended;
    case 'guard_stop':
    case 'limit_stop':
      throw new ActivationError(def.name, ended, { stop: { steps: result.steps, tool: lastToolCalled(events.events) } });
    case 'aborted':
      throw new ActivationError(def.name, abortedOutcome(run));
    case 'retryable_failure':
    case 'terminal_failure':
      throw new ActivationError(def.name, ended, { errorName: result.error?.name });
    default:
      return assertNever(ended);
  }
}

/** Reserves the pipeline's own reply against the agent's limits; false when the thread has had its answers. */
/**
 * The pipeline's own reply, admitted against the agent's limits (a reply the hub refuses gives its reservation
 * back); undefined when the thread has had all the answers the agent may give.
 */
async function replyWithinLimits<T>(deps: ActivationDeps, run: Run, postId: string, idempotencyKey: string, post: () => Promise<T>): Promise<T | undefined> {
  try {
    return deps.writes ? await deps.writes.guard(run.def.name, run.def.config.behavior, { kind: 'comment', postId, idempotencyKey }, post) : await post();
  } catch (err) {
    if (!(err instanceof WriteRefused)) throw err;
    const refused = outcomeOfRefusal(err.limit, err.message, err.retryAfterMs);
    if (refused.kind === 'handled') return undefined;
    throw new ActivationError(run.def.name, refused, { cause: err, errorName: err.name });
  }
}

/** Cancelled by the worker (shutdown) is an abort; cut by the activation's own max_duration it is a failure to retry. */
function abortedOutcome(run: Run): FailureOutcome {
  if (run.jobSignal.aborted) return { kind: 'aborted', message: 'cancelled' };
  return { kind: 'retryable_failure', message: `the activation reached behavior.max_duration (${run.def.config.behavior.max_duration} ms)`, source: 'agent' };
}

function lastToolCalled(events: readonly ActivationEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'tool_call') return e.name;
  }
  return undefined;
}

function skipped(outcome: ActivationOutcome, reason: string): ActivationOutcome {
  return { ...outcome, outcome: { kind: 'skipped', reason }, reason };
}

/** Usage goes to the hub's ledger once per attempt (an attempt that retried made its own model calls). */
async function reportUsage(hub: HubAdapter, agent: string, trigger: ActivationJob['trigger'], activationId: string, attempt: number, usage: UsageWithCost, log: Logger): Promise<void> {
  if (usage.inputTokens + usage.outputTokens === 0 && usage.costUsd === 0) return;
  await hub
    .reportConsumption(
      { agent, tokensInput: usage.inputTokens, tokensOutput: usage.outputTokens, costUsd: usage.costUsd, activationId, taskType: trigger, metadata: { attempt, cached_tokens: usage.cachedTokens } },
      { idempotencyKey: consumptionKey(activationId, attempt) },
    )
    .catch((err: unknown) => log.warn({ err }, 'could not report usage to the hub'));
}
