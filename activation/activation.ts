// One activation, start to end: check the budget, then either answer the inbox (notification) or look around
// (exploration); post the answer, and only then mark notifications read; finally report usage and tell the
// hub the agent ran. Every hub write carries an idempotency key derived from the activation.
// Each step returns what it came to (activation/ending.ts: done, skipped or failed, never a throw); endingOf
// combines them, and the worker gets the activation's ending as one value.
import type { Logger } from 'pino';
import { EventLog, type ActivationEvent } from '../agent-loop/events.ts';
import type { HubAdapter, NotificationPage } from '../hub-client/adapter.ts';
import { deadline } from '../hub-client/deadline.ts';
import type { BudgetStatus, Notification, Post } from '../hub-client/types.ts';
import type { Executor, ExecutorResult } from '../executors/executor.ts';
import { assertNever, outcomeOfError, type FailureOutcome, type Outcome } from '../executors/run-outcome.ts';
import { remainingToday } from '../prompts/budget.ts';
import { filterFeed } from '../prompts/exploration.ts';
import { memoryAudienceOf } from '../prompts/recall-text.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { ActivationJob } from '../scheduler/activation-job.ts';
import { mayRun } from '../scheduler/eligibility.ts';
import type { WriteAllowance } from '../scheduler/write-allowance.ts';
import { replyWithinLimits } from './pipeline-reply.ts';
import { keepPausedRun, type ApprovalKeeping } from './approval-pause.ts';
import { carryOutApproval } from './approval-resume.ts';
import type { SpawnOutcomes } from './spawn-approval.ts';
import { definitionForTrigger } from './activation-model.ts';
import type { ExecutorRegistry } from '../services/executor-registry.ts';
import { parseExplorationAnswer } from './exploration-answer.ts';
import { activatedKey, consumptionKey, explorationReplyKey, markReadKey, notificationReplyKey } from '../policy/idempotency-keys.ts';
import type { InboxClaim } from '../scheduler/inbox-claims.ts';
import { TaskUnreadable, type AgentTask, type TaskInbox, type TaskSource } from '../scheduler/task-inbox.ts';
import { REPLY_OUTBOX_TTL_SECONDS, type ReplyOutbox } from './reply-outbox.ts';
import type { TaskEnded, TaskEndingHandler, TaskWaitHandler } from './task-source-handlers.ts';
import { partitionInbox } from './inbox-policy.ts';
import { PhaseTimer, type PhaseTimings } from './phase-timer.ts';
import { ThreadAhead } from './thread-ahead.ts';
import { personAudience, type MemoryAudience } from '../memory/audience.ts';
import type { Ending as MemoryEnding, PostRef } from '../memory/remember.ts';
import { endingOf, NO_USAGE, plusUsage, type Ending, type Step, type StepFailure, type StopDetail, type TaskRef, type UsageWithCost, type WorkOutcome } from './ending.ts';
import { runTurn, type ContextPieces, type Turn } from './run-turn.ts';
import type { TurnServices } from '../services/composition.ts';

/** The pipeline's services: a turn's (the hub, memory, the context pieces' sources, the redaction: also applied to an answer before it is kept in the reply outbox or posted) and its own. */
export interface ActivationDeps extends TurnServices {
  hub: HubAdapter;
  agents: { get(name: string): AgentDefinition | undefined };
  executors: Pick<ExecutorRegistry, 'resolve'>;
  outbox: ReplyOutbox;
  /** Admits the pipeline's replies against the agent's limits (a refusal is a WriteRefused). */
  writes?: WriteAllowance;
  logger: Logger;
  /** Most notifications answered in one activation; the rest stay unread and bring the agent back. */
  maxNotificationsPerActivation?: number;
  /** Posts offered to an exploring agent. */
  explorationFeedSize?: number;
  /** Where runs that stop for approval are kept (README "Approvals"); absent: such a run fails (ApprovalsUnavailable). */
  approvals?: ApprovalKeeping;
  /** Where `task` activations take their work (scheduler/task-inbox.ts); without it they find none. */
  tasks?: Pick<TaskInbox, 'next' | 'settle'>;
  /**
   * Told how a task ended, by the task's source (the A2A server answers its caller, a schedule may post): before
   * the task is settled, so a crash in between tells again (at least once; the handler keys on the task's id).
   */
  taskEndings?: Partial<Record<TaskSource, TaskEndingHandler>>;
  /**
   * Told when a turn starts on a task, by the task's source (the A2A server marks it WORKING); its signal aborts
   * the turn when the task's owner cancels it (an A2A CancelTask), and the task then ends as cancelled.
   */
  taskStarts?: Partial<Record<TaskSource, TaskStartHandler>>;
  /** Where approved proposals of new agents are written (activation/spawn-approval.ts). */
  spawn?: SpawnOutcomes;
  /**
   * Told when a task's run stops for approval, by the task's source (the A2A server keeps the task WORKING and says
   * it waits for approval); the run that goes on after the decision tells its end through `taskEndings`.
   */
  taskWaits?: Partial<Record<TaskSource, TaskWaitHandler>>;
}

/** A task's turn as its source watches it: `cancelled` aborts the turn; `close` once the turn is over. */
export interface TaskWatch {
  cancelled: AbortSignal;
  close(): void;
  /** Sees the turn's events as they happen, live `model_delta` ones included (an A2A caller's partial answer). */
  onEvent?: (e: ActivationEvent) => void;
}
export type TaskStartHandler = (agent: string, task: AgentTask, activationId: string) => Promise<TaskWatch>;

export type { TaskEnded, TaskEndingHandler, TaskWait, TaskWaitHandler } from './task-source-handlers.ts';

/** Activations that may claim one task before it is given up on (each crashed or timed out holding it). */
export const TASK_CLAIMS_BEFORE_GIVING_UP = 3;

/** A finished activation: `outcome` is how it ended (answered, posted, no action or skipped; failures are ActivationErrors). */
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
  /** The hub's budget status as the run read it; absent when it was not asked or the hub did not answer (the run went on). */
  budget?: BudgetStatus;
  events: ActivationEvent[];
  /** Milliseconds spent per phase (hub calls, context, executor…). */
  timings: PhaseTimings;
  /** The task a task-triggered run took from its inbox (none when it found none). */
  taskId?: string;
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
    this.usage = opts.usage ?? NO_USAGE;
    this.stop = opts.stop;
    this.errorName = opts.errorName;
    this.events = opts.events ?? [];
  }

  /** The provider said when to come back (a rate limit's reset): the queue's retry waits at least this long. */
  get retryAfterMs(): number | undefined {
    return this.outcome.kind === 'retryable_failure' ? this.outcome.retryAfterMs : undefined;
  }
}

/** How an activation ended, as one value: it finished (answered, posted, no action, skipped), or it failed. */
export type ActivationEnding = { kind: 'finished'; outcome: ActivationOutcome } | { kind: 'failed'; error: ActivationError };

interface Run {
  def: AgentDefinition;
  executor: Executor;
  activationId: string;
  events: EventLog;
  signal: AbortSignal;
  /** The worker's own signal (shutdown): an abort that did not come from it is the activation's deadline. */
  jobSignal: AbortSignal;
  log: Logger;
  timer: PhaseTimer;
  /** The budget-health answer (undefined when the hub did not answer) and what is left today, shown to the model. */
  pieces: ContextPieces;
  /** The run's claim on its inbox (notification runs in the daemon; none in tests that run one by hand). */
  claim: InboxClaim | undefined;
  traceparent: string | undefined;
  /** Set once a task run has claimed its task: the record names it. */
  taskId?: string;
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

/** One activation, as its ending: never rejects (what nothing foresaw is a failure too, classified by outcomeOfError). */
export async function activate(deps: ActivationDeps, activationId: string, job: ActivationJob, jobSignal: AbortSignal, opts: RunActivationOptions = {}): Promise<ActivationEnding> {
  try {
    return await activation(deps, activationId, job, jobSignal, opts);
  } catch (err) {
    return { kind: 'failed', error: new ActivationError(job.agent, outcomeOfError(err, jobSignal.aborted), { cause: err }) };
  }
}

/** One activation run by hand (tests, benches): its outcome, or its ActivationError thrown. */
export async function runActivation(deps: ActivationDeps, activationId: string, job: ActivationJob, jobSignal: AbortSignal, opts: RunActivationOptions = {}): Promise<ActivationOutcome> {
  const ending = await activate(deps, activationId, job, jobSignal, opts);
  if (ending.kind === 'failed') throw ending.error;
  return ending.outcome;
}

async function activation(deps: ActivationDeps, activationId: string, job: ActivationJob, jobSignal: AbortSignal, opts: RunActivationOptions): Promise<ActivationEnding> {
  const { attempt = 1, claim } = opts;
  const { hub, logger } = deps;
  const log = logger.child({ agent: job.agent, activation: activationId, trigger: job.trigger });
  const events = new EventLog(activationId, { listener: opts.onEvent });
  const timer = new PhaseTimer();
  const ended = (ending: Ending, budget: BudgetStatus | undefined, taskId?: string): ActivationEnding => {
    switch (ending.kind) {
      case 'ended':
        return { kind: 'finished', outcome: { activationId, agent: job.agent, trigger: job.trigger, outcome: ending.outcome, reason: ending.reason, handled: ending.handled, replies: ending.replies, posts: ending.posts, usage: ending.usage, ...(budget ? { budget } : {}), events: events.events, timings: timer.timings, ...(taskId ? { taskId } : {}) } };
      case 'failed': {
        const f = ending.failure;
        return { kind: 'failed', error: new ActivationError(job.agent, f.outcome, { cause: f.cause, task: f.task, usage: f.usage, stop: f.stop, errorName: f.errorName, events: events.events }) };
      }
      default:
        return assertNever(ending);
    }
  };

  const def = deps.agents.get(job.agent);
  if (!def) {
    log.warn('agent is no longer defined; activation skipped');
    return ended(endingOf([{ kind: 'skipped', reason: 'undefined_agent' }]), undefined);
  }
  const resolved = deps.executors.resolve(def);
  if ('unavailable' in resolved) return ended(endingOf([{ kind: 'failed', failure: { outcome: { kind: 'terminal_failure', message: resolved.unavailable, source: 'agent' }, usage: NO_USAGE } }]), undefined);

  // One signal for the whole activation: the worker's cancel (shutdown) or the agent's max_duration.
  const limit = deadline(def.config.behavior.max_duration, jobSignal);
  const signal = limit.signal;
  // The inbox is asked with the budget: warren's hub answers both in one call (docs/hub-api.md §5.3).
  const inbox = job.trigger === 'notification' ? timer.time('inbox', () => hub.listNotifications(def.name, { unreadOnly: true, limit: 50, includeBudget: true, signal })) : undefined;
  inbox?.catch(() => undefined); // awaited (and its error surfaced) in readInbox; ignored when the budget says no
  // Today's counters, for the "left today" lines of the context; asked alongside, never fatal. A notification run
  // with a claim reads them with it, once it has read its inbox (readInbox).
  const opensClaim = job.trigger === 'notification' && claim !== undefined;
  const usedToday = opts.today ? Promise.resolve(opts.today) : opensClaim ? undefined : deps.usedToday?.(def.name).catch((err: unknown) => void log.warn({ err }, 'daily counters unavailable'));
  // The hub's word on the budget, asked fresh (with the inbox, or apart when the inbox did not bring it): at
  // critical nothing runs; exploration only when healthy.
  const budget = (await inbox?.then((page) => page.budget, () => undefined)) ?? await timer.time('budget', () => hub.budgetHealth(def.name)).then(
    (b) => b,
    (err: unknown) => {
      log.warn({ err }, 'budget health unavailable; running anyway (fail open)');
      return undefined;
    },
  );
  const status = budget?.status ?? 'healthy';
  if (!mayRun({ trigger: job.trigger, budget: status }, new Date()).eligible) {
    limit.dispose();
    log.info({ budget: status }, 'activation skipped by the budget');
    return ended(endingOf([{ kind: 'skipped', reason: `budget_${status}` }]), status);
  }

  events.emit({ type: 'activation_start', agent: def.name, executor: def.config.type });
  const used = await usedToday;
  const pieces: ContextPieces = { budget, remaining: used ? remainingToday(def.config.behavior.limits, used) : undefined };
  const run: Run = { def: definitionForTrigger(def, job.trigger), executor: resolved.executor, activationId, events, signal, jobSignal, log, timer, pieces, claim, traceparent: opts.traceparent };
  let steps: Step[];
  try {
    switch (job.trigger) {
      case 'exploration':
        steps = [await explore(deps, run)];
        break;
      case 'task':
        steps = [await answerTask(deps, run)];
        break;
      case 'notification':
        steps = await answerInbox(deps, run, inbox!);
        break;
      default:
        steps = assertNever(job.trigger);
    }
  } finally {
    limit.dispose();
  }
  const ending = endingOf(steps);
  // Held back (paused, a backoff), as the claim's command told once the inbox was read: nothing ran, nothing is reported.
  if (opensClaim && steps[0]?.kind === 'skipped') return ended(ending, budget?.status);
  const usage = ending.kind === 'failed' ? ending.failure.usage : ending.usage;
  // Two independent reports, sent together: one round trip of the hub's instead of two at the activation's end.
  await timer.time('report', () =>
    Promise.all([
      reportUsage(hub, def.name, job.trigger, activationId, attempt, usage, log),
      // Success or failure, the hub learns the agent ran, so staleness is reset (docs/hub-api.md §8).
      hub.markActivated(def.name, { idempotencyKey: activatedKey(activationId) }).catch((err: unknown) => {
        log.warn({ err }, 'could not report the activation to the hub');
      }),
    ]),
  );
  return ended(ending, budget?.status, run.taskId);
}

type FailedStep = Extract<Step, { kind: 'failed' }>;

/** A step's work done; what it did not say is nothing (no notification read, no reply, no cost). */
function done(step: Partial<Omit<Extract<Step, { kind: 'done' }>, 'kind'>>): Step {
  return { kind: 'done', handled: [], replies: 0, posts: 0, usage: NO_USAGE, ...step };
}

function failed(failure: StepFailure): FailedStep {
  return { kind: 'failed', failure };
}

/** What a step threw (a hub call, Redis, the unexpected) as its failure, classified once by outcomeOfError. */
function thrown(run: Run, err: unknown, at: { task?: TaskRef; usage: UsageWithCost }): FailedStep {
  return failed({ outcome: outcomeOfError(err, run.jobSignal.aborted), usage: at.usage, task: at.task, errorName: err instanceof Error ? err.name : undefined, cause: err });
}

/** The inbox, then each notification it asks an answer for, one step each; a failure ends the activation there. */
async function answerInbox(deps: ActivationDeps, run: Run, inbox: Promise<NotificationPage>): Promise<Step[]> {
  const read = await readInbox(deps, run, inbox);
  const steps: Step[] = [read.step];
  for (const [i, n] of read.actionable.entries()) {
    const step = await answerNotification(deps, run, n, read.kept, i === read.actionable.length - 1, read.thread);
    steps.push(step);
    if (step.kind === 'failed') break; // the notifications after it stay unread and bring the agent back
  }
  return steps;
}

/**
 * The inbox as the run holds it; notifications the agent does not answer are handled by policy. `actionable`: those
 * this run answers (the rest stay unread and bring the agent back); `kept`: the answers an earlier attempt kept for
 * them in the reply outbox, read with the claim (undefined without a claim: each is read as it is answered).
 */
async function readInbox(deps: ActivationDeps, run: Run, inbox: Promise<NotificationPage>): Promise<{ step: Step; actionable: readonly Notification[]; kept?: ReadonlyMap<string, string>; thread: ThreadAhead }> {
  const { hub, outbox } = deps;
  const { def, signal } = run;
  let thread = ThreadAhead.none;
  try {
    const { notifications } = await inbox;
    const partition = partitionInbox(notifications, def.config.behavior);
    const { ignorable } = partition;
    const actionable = partition.actionable.slice(0, deps.maxNotificationsPerActivation ?? 10);
    // What this run holds now, and in the same command whether the agent is held back, its counters today and what
    // the outbox kept for the notifications it will answer (only where the outbox is in Redis beside the claim).
    const answering = outbox.keyOf ? actionable.filter((n) => n.post_id).map((n) => n.id) : [];
    const opening = run.claim?.open(notifications.length, answering.map((id) => outbox.keyOf!(def.name, id)));
    // The first thread is read while that command runs: a read, so one the command then makes needless (the agent
    // held back, an answer kept) costs a hub GET and nothing else, and the reply waits one round trip less.
    if (opening && actionable[0]?.post_id) thread = ThreadAhead.start(actionable[0].id, readThread(deps, run, actionable[0].post_id));
    const opened = await opening;
    if (opened) {
      // `warren pause` also holds back what was already queued, and so does a backoff (as the worker asks of other runs).
      const { hold, today } = opened.facts;
      const verdict = mayRun({ trigger: 'notification', paused: hold.paused, backoffUntil: hold.backoffUntil }, new Date());
      if (!verdict.eligible) return { step: { kind: 'skipped', reason: verdict.reason }, actionable: [], thread };
      run.pieces.remaining = remainingToday(def.config.behavior.limits, today);
    }
    const texts = opened?.kept;
    const kept = texts && outbox.keyOf ? new Map(answering.flatMap((id, i) => (texts[i] === undefined ? [] : [[id, texts[i]] as const]))) : undefined;
    // Notifications the agent is configured not to answer are handled by policy: marking them read
    // keeps the agent from being woken for them again.
    const ids = ignorable.map((n) => n.id);
    if (ids.length) {
      await run.timer.time('mark_read', () => hub.markRead(def.name, ids, { idempotencyKey: markReadKey(ids), signal }));
      await run.claim?.settle(ids.length);
    }
    return { step: done({ handled: ids }), actionable, kept, thread };
  } catch (err) {
    return { step: thrown(run, err, { usage: NO_USAGE }), actionable: [], thread };
  }
}

function readThread(deps: ActivationDeps, run: Run, postId: string): Promise<Post> {
  return run.timer.time('thread', () => deps.hub.getPost(postId, { includeComments: true, signal: run.signal }));
}

/**
 * One notification: its thread, the agent's turn, the reply, and only then the notification read. `last`: the run
 * answers no notification after it.
 */
async function answerNotification(deps: ActivationDeps, run: Run, n: Notification, kept: ReadonlyMap<string, string> | undefined, last: boolean, ahead: ThreadAhead): Promise<Step> {
  const { hub, outbox } = deps;
  const { def, signal, log } = run;
  const task: TaskRef = { notificationId: n.id, postId: n.post_id ?? undefined, commentId: n.comment_id ?? undefined, from: n.from.name, excerpt: n.content ?? undefined };
  if (signal.aborted) return failed({ outcome: abortedOutcome(run), usage: NO_USAGE, task });
  let usage = NO_USAGE;
  try {
    if (!n.post_id) {
      // Nothing to answer in a thread (e.g. a follow); handled by reading it.
      await hub.markRead(def.name, [n.id], { idempotencyKey: markReadKey([n.id]), signal });
      await run.claim?.settle(1);
      return done({ handled: [n.id] });
    }
    let text = kept ? kept.get(n.id) : await outbox.get(def.name, n.id);
    // An answer to keep in the outbox before it is posted: with the write's reservation where both are in Redis (one
    // command, lua/reply-before.lua), else on its own right away.
    let keep: string | undefined;
    let posted = false;
    // What memory is told of the thread, read from it before the turn: the thread itself (its post and every
    // comment) is not held while the model is asked (run-turn.ts: nor by the turn, once its context is built).
    let about: { post: PostRef; audience: MemoryAudience } | undefined;
    // How this notification ended for the activation, and for memory.
    let ending: { outcome: WorkOutcome; by: 'agent' | 'pipeline' };
    let remembered: MemoryEnding = { kind: 'no_action', reason: 'no_action' };
    let readWithReply = false;
    if (text === undefined) {
      const onThread = await turnOnThread(deps, run, n, ahead.take(n.id) ?? readThread(deps, run, n.post_id));
      about = onThread.about;
      const { turn } = onThread;
      usage = plusUsage(usage, turn.result.usage);
      const result = workOf(run, turn, { usage, task });
      if (result.kind === 'failed') return result;
      ending = { outcome: result, by: 'agent' };
      switch (result.kind) {
        case 'answered':
          text = deps.redact(result.text);
          // An empty answer posts nothing (no reservation to keep it with), yet is kept: a retry pays no model call again.
          if (text && deps.writes && outbox.keyOf) keep = text;
          else await outbox.put(def.name, n.id, text);
          break;
        case 'posted_by_tool':
          posted = true;
          remembered = result;
          break;
        case 'no_action':
          remembered = result;
          break;
        case 'awaiting_approval': {
          // Kept until someone decides; read now, so the mention does not wake the agent again meanwhile. The run
          // that goes on after the decision answers it, under this notification's reply key (approval-resume.ts).
          const request = await keepPausedRun(deps.approvals, def, run.activationId, turn.result, { kind: 'notification', notificationId: n.id, postId: n.post_id, commentId: n.comment_id ?? null, from: n.from.name }, deps.redact);
          log.info({ notification: n.id, approval: request.id, tools: result.tools }, 'waiting for approval');
          await run.timer.time('mark_read', () => hub.markRead(def.name, [n.id], { idempotencyKey: markReadKey([n.id]), signal }));
          await run.claim?.settle(1);
          return done({ ending, handled: [n.id], usage });
        }
        default:
          return assertNever(result);
      }
      log.info({ notification: n.id, outcome: result.kind }, text ? 'answer ready' : posted ? 'the agent posted itself' : 'no reply needed');
    } else {
      ending = { outcome: { kind: 'answered', text, partial: false }, by: 'agent' };
      log.info({ notification: n.id }, 'posting the answer kept from an earlier attempt');
    }
    if (text) {
      // Keyed by the notification, not the attempt: whichever activation answers it, the hub keeps one reply.
      const postId = n.post_id;
      const key = notificationReplyKey(n.id);
      const reply = text;
      // A reply to a mention: min_interval_seconds does not delay it (scheduler/eligibility.ts minIntervalMs).
      const outboxKey = keep === undefined ? undefined : outbox.keyOf?.(def.name, n.id);
      const comment = await replyWithinLimits(deps.writes, run.def, postId, key, () =>
        run.timer.time('post', () => hub.createComment({ agent: def.name, postId, content: reply, parentId: n.comment_id ?? null, markRead: [n.id] }, { idempotencyKey: key, signal })),
      'reply_to_mention', outboxKey === undefined ? undefined : { key: outboxKey, text: reply, ttlSeconds: REPLY_OUTBOX_TTL_SECONDS });
      switch (comment.kind) {
        case 'posted':
          readWithReply = comment.reply.marked_read !== undefined;
          log.info({ notification: n.id, post: n.post_id, comment: comment.reply.id }, 'replied');
          remembered = { kind: 'answered', text };
          break;
        case 'refused':
          text = '';
          remembered = { kind: 'no_action', reason: 'max_responses_per_thread' };
          ending = { outcome: remembered, by: 'pipeline' };
          log.info({ notification: n.id, post: n.post_id }, 'not replied: the agent has answered this thread as often as its limits allow');
          break;
        case 'failed':
          return failed({ ...comment.failure, usage, task });
        default:
          return assertNever(comment);
      }
    }
    // Only now, with the answer safely on the hub, is the notification read (by the reply itself where the hub can).
    if (!readWithReply) await run.timer.time('mark_read', () => hub.markRead(def.name, [n.id], { idempotencyKey: markReadKey([n.id]), signal }));
    // The claim settled as the notification is read, and the kept answer dropped in the same command where the
    // outbox is in Redis beside the claim (lua/reply-after.lua). Where nothing follows but the end (the run's last
    // notification, no memory to write), the end carries both (lua/activation-end.lua).
    if (run.claim && outbox.keyOf) {
      if (last && !deps.memory?.remembers(def)) run.claim.settleWithEnd(outbox.keyOf(def.name, n.id));
      else await run.claim.settle(1, outbox.keyOf(def.name, n.id));
    } else {
      await outbox.clear(def.name, n.id);
      await run.claim?.settle(1);
    }
    // Remembered once the work is on the hub: a run that fails before this point leaves no memory.
    const postRef = about?.post ?? { id: n.post_id };
    const audience = about?.audience ?? personAudience(def.name, n.from.name, []);
    // With memory.distill, the agent's model distils the exchange within what the turn left of behavior.max_tokens, charged here.
    const distilled = await run.timer.time('memory', async () => deps.memory?.remember(def, { trigger: 'notification', notification: { id: n.id, type: n.type, from: n.from.name, content: n.content }, post: postRef, ending: remembered, audience }, { spent: usage.inputTokens + usage.outputTokens, signal }));
    if (distilled) usage = plusUsage(usage, distilled);
    return done({ ending, handled: [n.id], replies: text || posted ? 1 : 0, usage });
  } catch (err) {
    return thrown(run, err, { task, usage });
  }
}

/**
 * A task from the task inbox: the one this activation holds (a retry gets it back), the agent's turn on it, its
 * source told how it ended, and only then the task settled. A failure that may pass (a provider outage, the
 * deadline) keeps the claim for the retry; one that will not is told as the task's failure.
 */
async function answerTask(deps: ActivationDeps, run: Run): Promise<Step> {
  const { def, activationId, log } = run;
  if (!deps.tasks) return done({ ending: { outcome: { kind: 'no_action', reason: 'no_task' }, by: 'pipeline' } });
  let claimed;
  try {
    // Held a while past the run's own deadline: a live run keeps it, a crashed one lets it go to the next.
    claimed = await deps.tasks.next(def.name, activationId, 2 * def.config.behavior.max_duration + 60_000);
  } catch (err) {
    if (!(err instanceof TaskUnreadable)) return thrown(run, err, { usage: NO_USAGE });
    log.error({ err }, 'a task could not be read back; dropped');
    return done({ ending: { outcome: { kind: 'no_action', reason: 'task_unreadable' }, by: 'pipeline' } });
  }
  // Another activation got to it first (the task round queued this one before that one claimed): nothing ran.
  if (!claimed) return { kind: 'skipped', reason: 'no_task' };
  const { task } = claimed;
  run.taskId = task.id;
  const ref: TaskRef = { taskId: task.id, source: task.source, from: task.name, excerpt: task.text.slice(0, 200) };
  const end = async (ended: TaskEnded): Promise<void> => {
    await deps.taskEndings?.[task.source]?.(def.name, task, ended);
    await deps.tasks!.settle(def.name, task.id);
  };
  let usage = NO_USAGE;
  try {
    if (claimed.claims > TASK_CLAIMS_BEFORE_GIVING_UP) {
      const message = `given up after ${claimed.claims - 1} activations ended without answering it`;
      log.warn({ task: task.id, claims: claimed.claims - 1 }, `task ${message}`);
      await end({ kind: 'failed', message, activationId });
      return done({ ending: { outcome: { kind: 'no_action', reason: 'task_given_up' }, by: 'pipeline' } });
    }
    if (task.source === 'approval') {
      // A decided approval: the paused run goes on, or a held write is made (approval-resume.ts).
      const step = await carryOutApproval(deps, run, task.name);
      const failedFor = step.kind === 'failed' ? step.failure.outcome : undefined;
      if (!failedFor) await end({ kind: 'answered', text: '', activationId });
      else if (failedFor.kind !== 'retryable_failure' && failedFor.kind !== 'aborted') await end({ kind: 'failed', message: failedFor.message, activationId });
      return step;
    }
    const watch = await deps.taskStarts?.[task.source]?.(def.name, task, activationId);
    const unlisten = watch?.onEvent ? run.events.listen(watch.onEvent) : undefined;
    let turn;
    try {
      const signal = watch ? AbortSignal.any([run.signal, watch.cancelled]) : run.signal;
      turn = await takeTurn(deps, { ...run, signal }, { kind: 'task', task });
    } finally {
      unlisten?.();
      watch?.close();
    }
    usage = plusUsage(usage, turn.result.usage);
    if (watch?.cancelled.aborted) {
      // Cancelled by its owner: over for good, whatever the turn made of the abort.
      await end({ kind: 'failed', message: 'cancelled by its caller', activationId });
      log.info({ task: task.id, source: task.source }, 'task cancelled');
      return done({ ending: { outcome: { kind: 'no_action', reason: 'task_cancelled' }, by: 'pipeline' }, usage });
    }
    const result = workOf(run, turn, { usage, task: ref });
    if (result.kind === 'failed') {
      const outcome = result.failure.outcome;
      // What may pass keeps the claim: the retry (the same activation) gets the task back.
      if (outcome.kind !== 'retryable_failure' && outcome.kind !== 'aborted') await end({ kind: 'failed', message: outcome.message, activationId });
      return result;
    }
    if (result.kind === 'awaiting_approval') {
      // The task is answered by the run that goes on after the decision; this one keeps it as a request.
      const request = await keepPausedRun(deps.approvals, def, activationId, turn.result, { kind: 'task', taskId: task.id, source: task.source, name: task.name, ...(task.meta ? { meta: task.meta } : {}) }, deps.redact);
      log.info({ task: task.id, approval: request.id }, 'task waits for approval');
      // Its source hears that it waits (an A2A caller sees it WORKING, waiting for approval), not that it ended.
      await deps.taskWaits?.[task.source]?.(def.name, task, { approvalId: request.id, tools: request.calls.map((c) => c.name), activationId });
      await deps.tasks.settle(def.name, task.id);
      return done({ ending: { outcome: result, by: 'agent' }, usage });
    }
    const text = result.kind === 'answered' ? deps.redact(result.text) : '';
    await end({ kind: 'answered', text, activationId });
    log.info({ task: task.id, source: task.source, outcome: result.kind }, 'task answered');
    return done({ ending: { outcome: result, by: 'agent' }, posts: result.kind === 'posted_by_tool' ? 1 : 0, usage });
  } catch (err) {
    return thrown(run, err, { task: ref, usage });
  }
}

/** Exploration: the discover feed for the agent's interests; it may answer one post, or nothing. */
async function explore(deps: ActivationDeps, run: Run): Promise<Step> {
  const { hub } = deps;
  const { def, signal, log, activationId } = run;
  let task: TaskRef | undefined;
  let usage = NO_USAGE;
  try {
    const taken = await turnOnFeed(deps, run, () => (task = {}));
    if (!taken) {
      log.info('nothing new to explore');
      return done({ ending: { outcome: { kind: 'no_action', reason: 'empty_feed' }, by: 'pipeline' } });
    }
    const { turn, about } = taken;
    task ??= {}; // set as the turn began (a failure of the turn counts against the exploration)
    usage = plusUsage(usage, turn.result.usage);
    const result = workOf(run, turn, { usage, task });
    const remember = (ending: MemoryEnding, postId?: string): Promise<void> =>
      run.timer.time('memory', async () => {
        const post = postId === undefined ? undefined : about.get(postId);
        await deps.memory?.remember(def, { trigger: 'exploration', activationId, post: post?.post, ending, audience: post?.audience ?? memoryAudienceOf(def.name, { kind: 'exploration', feed: [] }) });
      });
    switch (result.kind) {
      case 'failed':
        return result;
      case 'posted_by_tool':
        await remember(result);
        return done({ ending: { outcome: result, by: 'agent' }, posts: 1, usage });
      case 'no_action':
        log.info({ why: result.reason }, 'exploration ended without a post');
        await remember(result);
        return done({ ending: { outcome: result, by: 'agent' }, usage });
      case 'awaiting_approval': {
        const request = await keepPausedRun(deps.approvals, def, activationId, turn.result, { kind: 'exploration', feedPostIds: [...about.keys()] }, deps.redact);
        log.info({ approval: request.id, tools: result.tools }, 'waiting for approval');
        return done({ ending: { outcome: result, by: 'agent' }, usage });
      }
      case 'answered':
        break;
      default:
        return assertNever(result);
    }
    const answer = parseExplorationAnswer(result.text, new Set(about.keys()));
    if (answer.kind === 'none') {
      const declined: WorkOutcome = { kind: 'no_action', reason: 'exploration_declined' };
      log.info({ why: answer.why }, 'exploration ended without a post');
      await remember(declined);
      return done({ ending: { outcome: declined, by: 'agent' }, usage });
    }
    task = { postId: answer.postId };
    // Keyed by the activation: a retry of this exploration replays the same comment instead of adding one.
    const key = explorationReplyKey(activationId, answer.postId);
    const comment = await replyWithinLimits(deps.writes, run.def, answer.postId, key, () =>
      run.timer.time('post', () => hub.createComment({ agent: def.name, postId: answer.postId, content: answer.content }, { idempotencyKey: key, signal })),
    );
    switch (comment.kind) {
      case 'posted':
        break;
      case 'refused':
        return done({ ending: { outcome: { kind: 'no_action', reason: 'max_responses_per_thread' }, by: 'pipeline' }, usage });
      case 'failed':
        return failed({ ...comment.failure, usage, task });
      default:
        return assertNever(comment);
    }
    log.info({ post: answer.postId, comment: comment.reply.id }, 'exploration answered a post');
    await remember({ kind: 'answered', text: answer.content }, answer.postId);
    return done({ ending: { outcome: result, by: 'agent' }, replies: 1, usage });
  } catch (err) {
    return thrown(run, err, { task, usage });
  }
}

/**
 * A notification's thread once `reading` (begun by the caller, maybe ahead: thread-ahead.ts) has it, what memory
 * needs of it taken, and the agent's turn on it. Not async: a suspended async function keeps its locals, and the
 * thread (its post and every comment) is done with once the turn has built its context from it, long before the
 * model answers.
 */
function turnOnThread(deps: ActivationDeps, run: Run, n: Notification, reading: Promise<Post>): Promise<{ turn: Turn<ExecutorResult>; about: { post: PostRef; audience: MemoryAudience } }> {
  return reading.then((thread) => {
    const asked = { kind: 'notification' as const, post: thread, notification: n };
    const about = { post: { id: thread.id, title: thread.title, community: thread.community }, audience: memoryAudienceOf(run.def.name, asked) };
    return takeTurn(deps, run, asked).then((turn) => ({ turn, about }));
  });
}

/**
 * An exploration's feed read and filtered, and the agent's turn on it (`turning` just before), keeping of each post
 * only what follows the turn needs (its id, its reference and audience for memory), in feed order; null when
 * nothing new is left to explore. Not async, as turnOnThread: the feed's posts and their text are done with once the
 * context is built, not held for the model's latency.
 */
function turnOnFeed(deps: ActivationDeps, run: Run, turning: () => void): Promise<{ turn: Turn<ExecutorResult>; about: ReadonlyMap<string, { post: PostRef; audience: MemoryAudience }> } | null> {
  const { def, signal } = run;
  const interests = def.config.interests;
  const discovered = run.timer.time('thread', () =>
    deps.hub.discover(def.name, { communities: interests.communities, keywords: [...interests.keywords, ...interests.topics], excludeResponded: true, limit: deps.explorationFeedSize ?? 10, signal }),
  );
  return discovered.then((posts) => {
    const feed = filterFeed(def, posts);
    if (feed.length === 0) return null;
    const about = new Map(feed.map((p) => [p.id, { post: { id: p.id, title: p.title, community: p.community }, audience: memoryAudienceOf(def.name, { kind: 'exploration', feed: [p] }) }]));
    turning();
    return takeTurn(deps, run, { kind: 'exploration', feed }).then((turn) => ({ turn, about }));
  });
}

/** The agent's turn on its task (activation/run-turn.ts), with the pieces this activation read as it started. */
function takeTurn(deps: ActivationDeps, run: Run, task: Parameters<typeof runTurn>[2]): Promise<Turn<ExecutorResult>> {
  return runTurn({ ...deps, onWarning: (what, err) => run.log.warn({ err }, what) }, run.def, task, run.signal, {
    id: run.activationId,
    events: run.events,
    executor: run.executor,
    pieces: run.pieces,
    timer: run.timer,
    traceparent: run.traceparent,
  });
}

/** A turn's ending as the step's: the endings of work go on; the others leave the work undone. */
function workOf(run: Run, turn: Turn<ExecutorResult>, at: { usage: UsageWithCost; task: TaskRef }): WorkOutcome | FailedStep {
  const ended = turn.outcome;
  switch (ended.kind) {
    case 'answered':
    case 'posted_by_tool':
    case 'no_action':
    case 'awaiting_approval':
      return ended;
    case 'guard_stop':
    case 'limit_stop':
      return failed({ outcome: ended, ...at, stop: { steps: turn.result.steps, tool: lastToolCalled(run.events.events) } });
    case 'aborted':
      return failed({ outcome: abortedOutcome(run), ...at });
    case 'retryable_failure':
    case 'terminal_failure':
    case 'oversized':
      return failed({ outcome: ended, ...at, errorName: turn.result.error?.name });
    default:
      return assertNever(ended);
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
