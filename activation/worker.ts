// The consumer side: a BullMQ worker that runs activations, records each outcome, applies the failure policy
// (activation/failure-policy.ts) once per failure, and shuts down gracefully within a deadline. What BullMQ keeps of
// a job in Redis (return value, failure reason, stack) is ids and redacted text only.
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { UnrecoverableError, Worker, type Job, type WorkerOptions } from 'bullmq';
import type { RedisClient } from '../redis/scripts.ts';
import type { Logger } from 'pino';
import { activationIdOf, ActivationJobSchema, type ActivationJob } from '../scheduler/activation-job.ts';
import { ACTIVATION_QUEUE } from '../redis/keys.ts';
import { keyLayout, type KeySpace } from '../redis/key-layout.ts';
import { endSpan, startSpan, traceparentOf, type SpanHandle } from '../agent-loop/tracing.ts';
import type { AgentStateStore } from '../scheduler/agent-state.ts';
import type { InboxClaim, InboxClaims } from '../scheduler/inbox-claims.ts';
import { activationRetryDelay } from '../scheduler/retry-delay.ts';
import { backoffSchedule, DEFAULT_BACKOFF, type BackoffPolicy } from '../scheduler/backoff.ts';
import { ZERO_USAGE } from '../agent-loop/messages.ts';
import { assertNever, outcomeReason } from '../executors/run-outcome.ts';
import { activate, type ActivationDeps, type ActivationError, type ActivationOutcome } from './activation.ts';
import type { ActivationRecord, ActivationRecords } from './activation-records.ts';
import type { ErrorReporter } from './error-reporter.ts';
import { decideFailure, DEFAULT_GIVE_UP_AFTER, resetsBackoff, shouldGiveUp, type FailureDecision } from './failure-policy.ts';
import { failureReplyKey, markReadKey } from '../policy/idempotency-keys.ts';
import { failureReply, type FailureReply } from './failure-reply.ts';
import { mayRun } from '../scheduler/eligibility.ts';
import type { NotificationFailures } from './notification-failures.ts';
import { definitionForTrigger } from './activation-model.ts';
import { ProgressPublisher } from './live-progress.ts';
import type { PhaseTimings } from './phase-timer.ts';
import type { Redactor } from '../services/redact.ts';
import type { StatusPoster } from './status-poster.ts';

/** What the worker reads of an agent as an activation starts (AgentStateStore.activationStart). */
type ActivationStartFacts = Awaited<ReturnType<AgentStateStore['activationStart']>>;

/** An activation as a worker picks it up. */
export interface ActivationStart {
  agent: string;
  trigger: ActivationJob['trigger'];
  /** Epoch ms: when the scheduler enqueued it, and when this worker started it. */
  enqueuedAt: number;
  startedAt: number;
}

export interface ActivationWorkerOptions {
  connection: RedisClient;
  /** The key layout: one BullMQ worker per shard worked here (redis/key-layout.ts). */
  prefix: KeySpace;
  /** The shards this process works (default: all); the concurrency is shared out among them. */
  shards?: readonly number[];
  concurrency: number;
  /** BullMQ lock duration and stalled-job check interval (how fast a dead worker's jobs come back). */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  deps: ActivationDeps;
  /** Tells schedulers which notifications a run holds (see scheduler/inbox-claims.ts). */
  claims?: InboxClaims;
  agentState: AgentStateStore;
  records: ActivationRecords;
  errors: ErrorReporter;
  /** Status posts to m/agent-status (budget, MCP servers, paused and resumed); absent: none. */
  status?: StatusPoster;
  /** Terminal failures per notification, for giving up on one after `giveUpAfter`. */
  notificationFailures: NotificationFailures;
  /** The agent's wait after terminal failures (default: 10 min, doubling, at most 6 h). */
  backoff?: BackoffPolicy;
  /** Terminal failures on one notification before it is given up on (default 3). */
  giveUpAfter?: number;
  redactor: Redactor;
  logger: Logger;
  /** Observes each finished activation (tests, metrics). */
  onOutcome?: (outcome: ActivationOutcome) => void;
  /** Observes each record as it is stored, failures included (metrics). */
  onRecord?: (record: ActivationRecord) => void;
  /** The agent is held back by a final failure (backoff or a pause) until `until` (epoch ms): for outbound events. */
  onHeldByFailure?: (held: { agent: string; activationId: string; until: number; failures?: number; reason: string }) => void;
  /** Observes each activation as it starts, with how long it waited in the queue (metrics). */
  onStart?: (start: ActivationStart) => void;
}

/** How a worker resolves the activation jobs' backoff type (scheduler/retry-delay.ts). */
export const ACTIVATION_WORKER_SETTINGS: WorkerOptions['settings'] = { backoffStrategy: (attemptsMade, _type, err) => activationRetryDelay(attemptsMade, err) };

/** What BullMQ keeps as a job's return value: ids and kinds, never content. */
export interface ActivationJobResult {
  activation_id: string;
  outcome: ActivationOutcome['outcome']['kind'];
  reason: string;
}

export class ActivationWorker {
  /** One BullMQ worker per shard worked here. */
  readonly workers: ReadonlyArray<Worker<ActivationJob, ActivationJobResult>>;
  readonly #opts: ActivationWorkerOptions;
  readonly #logger: Logger;

  constructor(opts: ActivationWorkerOptions) {
    this.#opts = opts;
    this.#logger = opts.logger;
    const layout = keyLayout(opts.prefix);
    const shards = opts.shards ?? layout.shards.map((_, i) => i);
    // Shared out, so that a process runs about `concurrency` activations whatever the shard count; a shard whose
    // queue is empty leaves its share idle (README "Shards": the trade-off).
    const concurrency = shardConcurrency(opts.concurrency, shards.length);
    this.workers = shards.map((i) => {
      const prefix = layout.shards[i]!.prefix;
      const worker = new Worker<ActivationJob, ActivationJobResult>(ACTIVATION_QUEUE, (job, token, signal) => this.#process(job, signal ?? new AbortController().signal, token), {
        connection: opts.connection,
        prefix,
        concurrency,
        lockDuration: opts.lockDurationMs,
        stalledInterval: opts.stalledIntervalMs,
        settings: ACTIVATION_WORKER_SETTINGS,
        autorun: true,
      });
      worker.on('error', (err) => this.#logger.error({ err: opts.redactor.redact(err.message), ...(shards.length > 1 ? { shard: i } : {}) }, 'worker error'));
      worker.on('failed', (job, err) => {
        this.#logger.warn({ agent: job?.data.agent, job: job?.id, attempt: job?.attemptsMade, err: opts.redactor.redact(err.message) }, 'activation failed');
      });
      return worker;
    });
  }

  async #process(job: Job<ActivationJob, ActivationJobResult>, signal: AbortSignal, token: string | undefined): Promise<ActivationJobResult> {
    const data = ActivationJobSchema.safeParse(job.data);
    if (!data.success) {
      const message = `malformed activation job ${job.id}: ${data.error.issues[0]?.message ?? ''}`;
      throw Object.assign(new UnrecoverableError(message), { stack: `UnrecoverableError: ${message}` });
    }
    const activationId = activationIdOf(job);
    const attempt = job.attemptsMade + 1;
    const started = Date.now();
    // A notification run holds its agent's whole inbox until it has read it (its job does); once read, the claim holds
    // what it read (opened by the activation).
    const ttl = (this.#opts.deps.agents.get(data.data.agent)?.config.behavior.max_duration ?? 300_000) + 60_000;
    const inbox = data.data.trigger === 'notification' && this.#opts.claims && job.id ? this.#opts.claims.forRun(data.data.agent, job.id, { token: token ?? `${job.attemptsStarted}`, started: job.attemptsStarted }, ttl) : undefined;
    // Whether the agent is held back, and its counters for the context (read in #run). A notification run reads
    // them with its claim, once it has read its inbox (one command, lua/activation-open.lua), and is held back there.
    const facts = inbox ? undefined : this.#opts.agentState.activationStart(data.data.agent);
    facts?.catch(() => undefined); // awaited, and its error surfaced, in #run
    try {
      return await this.#run(job, data.data, signal, activationId, attempt, started, inbox, facts);
    } catch (err) {
      // Whatever leaves for BullMQ's hash (failedReason, stacktrace) is ids and redacted text only.
      if (err instanceof UnrecoverableError || bullmqSafe.has(err as Error)) throw err;
      throw forBullmq(this.#redact(err));
    } finally {
      // Whatever happened, the run holds nothing it has not read. InboxClaimLost: a later attempt holds the inbox now.
      await inbox?.release().catch((err: unknown) => this.#logger.warn({ err, agent: data.data.agent, job: job.id }, 'inbox claim not released'));
    }
  }

  async #run(job: Job<ActivationJob, ActivationJobResult>, data: ActivationJob, signal: AbortSignal, activationId: string, attempt: number, started: number, inbox: InboxClaim | undefined, facts: Promise<ActivationStartFacts> | undefined): Promise<ActivationJobResult> {
    this.#opts.onStart?.({ agent: data.agent, trigger: data.trigger, enqueuedAt: data.enqueuedAt, startedAt: started });
    // `warren pause` also holds back what was already queued, and so does a backoff: the follow-up BullMQ kept
    // behind a run that then failed for good must not start the moment it failed. Quiet hours and staleness were
    // asked when the run was queued; the budget is asked by the run (activation.ts), and so is the hold of a
    // notification run with a claim.
    let today: ActivationStartFacts['today'] | undefined;
    if (facts) {
      const read = await facts;
      const verdict = mayRun({ trigger: data.trigger, paused: read.hold.paused, backoffUntil: read.hold.backoffUntil }, new Date());
      if (!verdict.eligible) return this.#skipped(activationId, data, started, attempt, verdict.reason);
      today = read.today;
    }
    // What the run is doing, for `warren status` on any machine: BullMQ's job progress, kept small.
    const live = new ProgressPublisher(activationId, (p) => job.updateProgress({ ...p }).catch((err: unknown) => this.#logger.debug({ err: this.#redact(err), agent: data.agent }, 'live progress not published')));
    live.start();
    // The trace's root: an attempt of an activation. The executor's spans continue it.
    const span = startSpan('warren.activation', ROOT_CONTEXT, { 'gen_ai.agent.name': data.agent, 'warren.activation_id': activationId, 'warren.trigger': data.trigger, 'warren.attempt': attempt });
    const ending = await activate(this.#opts.deps, activationId, data, signal, { attempt, claim: inbox, today, onEvent: (e) => live.observe(e), traceparent: traceparentOf(span.context) }).finally(() => live.stop());
    switch (ending.kind) {
      case 'finished':
        return this.#finished(data, activationId, attempt, started, span, ending.outcome, inbox);
      case 'failed':
        return this.#failed(job, data, activationId, attempt, started, span, ending.error);
      default:
        return assertNever(ending);
    }
  }

  /** The work is done: bookkeeping that fails from here on is logged, never turned into a failed activation. */
  async #finished(data: ActivationJob, activationId: string, attempt: number, started: number, span: SpanHandle, outcome: ActivationOutcome, inbox: InboxClaim | undefined): Promise<ActivationJobResult> {
    const { agentState, records } = this.#opts;
    endSpan(span, { 'warren.outcome': outcome.outcome.kind, 'warren.reason': outcome.reason, 'warren.replies': outcome.replies, 'warren.handled': outcome.handled.length });
    const resets = resetsBackoff(outcome.outcome);
    let streakEnded = false;
    // The agent's state, the record, the answer's outbox entry and the inbox claim's release, in one command (lua/activation-end.lua).
    await this.#step(data.agent, 'activation state and record', async () => {
      const usage = { tokensInput: outcome.usage.inputTokens, tokensOutput: outcome.usage.outputTokens, costUsd: outcome.usage.costUsd };
      const record = recordOf(outcome, started, attempt);
      const release = inbox?.ending();
      const ended = await records.addEnding(record, (text) => this.#opts.redactor.redact(text), {
        activated: outcome.outcome.kind === 'skipped' ? undefined : agentState.activatedCall(data.agent, usage, { resetBackoff: resets }),
        outbox: release?.outbox,
        release: release?.call,
        // Read at the run's start, with its inbox: the intake takes it as the hub's answer while it is fresh.
        budget: outcome.budget ? agentState.budgetSeenCall(data.agent, { status: outcome.budget, at: started }) : undefined,
      });
      release?.sent();
      if (ended.releaseLost) this.#logger.warn({ agent: data.agent, activation: activationId }, 'inbox claim not released: a later attempt of the run holds the inbox');
      streakEnded = ended.streakEnded;
      // Observers (metrics) count and time it; what the run said stays with the stored, redacted record.
      this.#opts.onRecord?.({ ...record, events: [] });
    });
    // A pause by failures ends only where a failure streak did: the fleet's ledger is not asked after every good run.
    await this.#statusAfter(data.agent, activationId, outcome.events, outcome.budget, resets && streakEnded);
    this.#opts.onOutcome?.(outcome);
    return { activation_id: activationId, outcome: outcome.outcome.kind, reason: outcome.reason };
  }

  /**
   * The failure policy, once per failure; its decision leaves as what BullMQ understands, at this very edge: a
   * plain error to run the job again (cancelled, retry), an UnrecoverableError when the failure is final.
   */
  async #failed(job: Job<ActivationJob, ActivationJobResult>, data: ActivationJob, activationId: string, attempt: number, started: number, span: SpanHandle, failure: ActivationError): Promise<never> {
    const message = this.#opts.redactor.redact(failure.message);
    endSpan(span, {}, message);
    const decision = decideFailure(failure.outcome, { attempt, maxAttempts: job.opts.attempts ?? 1 });
    switch (decision.kind) {
      case 'cancelled':
        // Shutdown: not the agent's failure. BullMQ runs it again (here or on another worker), and the
        // notifications it left unread are scheduled again in any case.
        throw forBullmq(`activation ${activationId} was cancelled at shutdown`);
      case 'retry':
        // BullMQ's next attempt comes first; only a final failure counts and is reported.
        throw forBullmq(message, failure.retryAfterMs);
      case 'final':
        await this.#finalFailure(job, data, activationId, attempt, started, failure, decision);
        throw Object.assign(new UnrecoverableError(message), { stack: `UnrecoverableError: ${message}` });
      default:
        return assertNever(decision);
    }
  }

  async #skipped(activationId: string, data: ActivationJob, started: number, attempt: number, reason: string): Promise<ActivationJobResult> {
    await this.#step(data.agent, 'activation record', () => this.#store({ ...emptyRecord(activationId, data, started, attempt), outcome: 'skipped', reason }));
    this.#opts.onOutcome?.({ activationId, agent: data.agent, trigger: data.trigger, outcome: { kind: 'skipped', reason }, reason, handled: [], replies: 0, posts: 0, usage: { ...ZERO_USAGE, costUsd: 0 }, events: [], timings: {} });
    return { activation_id: activationId, outcome: 'skipped', reason };
  }

  /** What an activation's end tells m/agent-status: the budget it saw, MCP servers that failed, a pause it ended. */
  async #statusAfter(agent: string, activationId: string, events: ActivationOutcome['events'], budget: ActivationOutcome['budget'] | undefined, ranWell: boolean): Promise<void> {
    const status = this.#opts.status;
    if (!status) return;
    await Promise.all([
      budget ? this.#step(agent, 'budget status post', () => status.budget(agent, budget)) : undefined,
      this.#step(agent, 'MCP status post', () => status.mcpServers(agent, activationId, events)),
      ranWell ? this.#step(agent, 'resumed status post', () => status.ranWell(agent)) : undefined,
    ]);
  }

  /** One side effect of bookkeeping: its failure is logged (redacted) and does not stop the others. */
  async #step(agent: string, what: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.#logger.error({ agent, err: this.#redact(err) }, `could not update the ${what}`);
    }
  }

  #redact(err: unknown): string {
    return this.#opts.redactor.redact(err instanceof Error ? err.message : String(err));
  }

  /**
   * Handled once per final failure, however many workers see it (a lost lock): the agent's backoff, the
   * notification's give-up count, one post, one record. Each step on its own, so one failing skips no other.
   */
  async #finalFailure(job: Job<ActivationJob, ActivationJobResult>, data: ActivationJob, activationId: string, attempt: number, started: number, err: ActivationError, decision: Extract<FailureDecision, { kind: 'final' }>): Promise<void> {
    const { agentState, redactor, deps } = this.#opts;
    const agent = data.agent;
    let first = true;
    await this.#step(agent, 'final-failure marker', async () => {
      first = await agentState.once(`final:${activationId}:${attempt}`, 86_400_000);
    });
    if (!first) return;
    const o = err.outcome;
    const usage = err.usage;
    await this.#step(agent, 'activation state', () => agentState.recordActivated(agent, { tokensInput: usage.inputTokens, tokensOutput: usage.outputTokens, costUsd: usage.costUsd }));
    let backoff: { failures: number; backoffUntil: number } | undefined;
    await this.#step(agent, 'backoff', async () => {
      const b = decision.backoff;
      switch (b.kind) {
        case 'count':
          backoff = await agentState.recordFailure(agent, backoffSchedule(this.#opts.backoff ?? DEFAULT_BACKOFF), { notBefore: b.notBeforeMs === undefined ? undefined : Date.now() + b.notBeforeMs });
          return;
        case 'pause':
          await agentState.holdUntil(agent, Date.now() + b.pauseMs);
          return;
        default:
          return assertNever(b);
      }
    });
    const [paused, status] = [backoff, this.#opts.status];
    await Promise.all([
      paused && status ? this.#step(agent, 'paused status post', () => status.paused(agent, activationId, paused)) : undefined,
      this.#statusAfter(agent, activationId, err.events, undefined, false),
    ]);
    const heldUntil = backoff?.backoffUntil ?? (decision.backoff.kind === 'pause' ? Date.now() + decision.backoff.pauseMs : undefined);
    if (heldUntil !== undefined && heldUntil > Date.now()) this.#opts.onHeldByFailure?.({ agent, activationId, until: heldUntil, failures: backoff?.failures, reason: o.kind });
    const abandoned: string[] = [];
    const notificationId = err.task?.notificationId;
    if (decision.countNotification && notificationId) {
      await this.#step(agent, 'notification failure count', async () => {
        const failures = await this.#opts.notificationFailures.increment(agent, notificationId);
        if (!decision.giveUpNow && !shouldGiveUp(failures, this.#opts.giveUpAfter ?? DEFAULT_GIVE_UP_AFTER)) return;
        // Given up on: read, so it no longer brings the agent back; recorded, so the operator sees it. The count
        // is cleared only once it is read, so a failed attempt at giving up is made again next time.
        await deps.hub.markRead(agent, [notificationId], { idempotencyKey: markReadKey([notificationId]) });
        abandoned.push(notificationId);
        await deps.outbox.clear(agent, notificationId);
        await this.#opts.notificationFailures.clear(agent, notificationId);
        await agentState.recordAbandoned(agent);
        this.#logger.warn({ agent, notification: notificationId, failures }, 'notification given up on after repeated failures');
      });
    }
    this.#logger.warn({ agent, outcome: o.kind, failures: backoff?.failures, backoff_until: backoff ? new Date(backoff.backoffUntil).toISOString() : undefined, err: redactor.redact(err.message) }, 'activation failed for good');
    const def = deps.agents.get(agent);
    const cause = err.cause instanceof Error ? err.cause : undefined;
    const post = decision.post;
    if (post !== 'none') {
      const waiting = await this.#waiting(agent);
      await this.#step(agent, 'error post', () =>
        this.#opts.errors.report(def, {
          agent,
          activationId,
          trigger: data.trigger,
          task: err.task,
          error: { name: err.errorName ?? cause?.name ?? 'Error', message: o.message, stack: cause?.stack, ...providerFacts(cause) },
          executor: def?.config.type ?? 'unknown',
          model: def && definitionForTrigger(def, data.trigger).config.brain.model,
          attempts: attempt,
          maxAttempts: job.opts.attempts ?? 1,
          retryable: o.kind === 'retryable_failure',
          ...(o.kind === 'retryable_failure' && o.retryAfterMs !== undefined ? { retryAfterMs: o.retryAfterMs } : {}),
          hold: { backoffUntil: backoff?.backoffUntil, failures: backoff?.failures, waiting },
          ...(post !== 'error' && (o.kind === 'guard_stop' || o.kind === 'limit_stop') ? { stop: { kind: post, reason: o.kind === 'guard_stop' ? o.guard : o.limit, message: o.message, tool: err.stop?.tool, steps: err.stop?.steps } } : {}),
        }),
      );
    }
    const reply = failureReply({
      agent,
      enabled: def?.config.behavior.reply_on_failure ?? false,
      hubTakesNotes: deps.hub.capabilities?.errorPosts !== false,
      trigger: data.trigger,
      task: err.task,
      post,
      errorName: err.errorName,
      error: { message: o.message, ...providerFacts(cause) },
    });
    if (reply) await this.#step(agent, 'could-not-answer reply', () => this.#replyOnFailure(agent, reply));
    await this.#step(agent, 'activation record', () =>
      this.#store({
        ...emptyRecord(activationId, data, started, attempt),
        outcome: o.kind,
        reason: outcomeReason(o),
        usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, cached_tokens: usage.cachedTokens, cost_usd: usage.costUsd },
        error: redactor.redact(o.message),
        ...(abandoned.length ? { abandoned } : {}),
        ...(o.kind === 'oversized' ? { oversized: o.output } : {}),
        ...(err.task?.taskId ? { task_id: err.task.taskId } : {}),
        events: err.events,
      }),
    );
  }

  /**
   * The agent's one line in the thread it could not answer, once per notification: claimed in Redis first (a later
   * failure on the same notification, hours on, leaves no second line), keyed by the notification at the hub.
   * Written by warren for the agent, not by the agent: it is not counted against the agent's write limits.
   */
  async #replyOnFailure(agent: string, r: FailureReply): Promise<void> {
    if (!(await this.#opts.agentState.once(`could-not-answer:${agent}:${r.notificationId}`, FAILURE_REPLY_MEMORY_MS))) return;
    const content = this.#opts.redactor.redact(r.text);
    await this.#opts.deps.hub.createComment({ agent, postId: r.postId, parentId: r.parentId, content }, { idempotencyKey: failureReplyKey(r.notificationId) });
    this.#logger.info({ agent, notification: r.notificationId, post: r.postId }, 'told the thread the mention could not be answered');
  }

  /** How many notifications of the agent are unread (the mentions waiting out its backoff); undefined when the hub cannot say. */
  async #waiting(agent: string): Promise<number | undefined> {
    try {
      const page = await this.#opts.deps.hub.listNotifications(agent, { unreadOnly: true, limit: 1, signal: AbortSignal.timeout(2_000) });
      return page.unreadCount;
    } catch {
      return undefined;
    }
  }

  async #store(record: ActivationRecord): Promise<void> {
    await this.#opts.records.add(record, (text) => this.#opts.redactor.redact(text));
    // Observers (metrics) count and time it; what the run said stays with the stored, redacted record.
    this.#opts.onRecord?.({ ...record, events: [] });
  }

  /**
   * Lets running activations finish for `graceMs`, then aborts them (their executors stop and kill
   * subprocesses) and gives them `settleMs` to wind down. If the worker is still not closed then (Redis gone:
   * BullMQ waits on commands that never answer), its own connections are cut. Always returns within about
   * graceMs + settleMs + DISCONNECT_BOUND_MS; unfinished jobs are recovered by BullMQ's stalled-job check.
   */
  async close(graceMs: number, settleMs: number): Promise<void> {
    // One close: BullMQ hands a later close(true) the same promise, so aborting is what ends the wait.
    const closing = Promise.all(this.workers.map((w) => w.close()));
    if (await settlesWithin(closing, graceMs)) return;
    this.#logger.warn({ deadlineMs: graceMs }, 'activations still running at the shutdown deadline; aborting them');
    for (const w of this.workers) w.cancelAllJobs('shutdown');
    if (await settlesWithin(closing, settleMs)) return;
    this.#logger.warn({ settleMs }, 'worker not closed after aborting its activations (is Redis reachable?); disconnecting it');
    await settlesWithin(Promise.all(this.workers.map((w) => w.disconnect())), DISCONNECT_BOUND_MS);
  }
}

/** Each shard's BullMQ concurrency when a process works `shards` of them: an even share of the whole, at least 1. */
export function shardConcurrency(concurrency: number, shards: number): number {
  return Math.max(1, Math.ceil(concurrency / Math.max(1, shards)));
}

/**
 * The HTTP status and error code of a model provider's refusal, read off the error and its causes (a ModelError
 * carries the status; the SDK's error under it the code), for the error post's recognition of provider errors.
 */
function providerFacts(err: Error | undefined): { status?: number; code?: string } {
  const out: { status?: number; code?: string } = {};
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const { status, code } = e as { status?: unknown; code?: unknown };
    if (out.status === undefined && typeof status === 'number') out.status = status;
    if (out.code === undefined && typeof code === 'string' && /^[a-z_]+$/.test(code)) out.code = code;
  }
  return out;
}

/** An error as BullMQ will keep it (failedReason, stacktrace): the redacted message, no frames, no host paths. */
function forBullmq(message: string, retryAfterMs?: number): Error {
  const err = Object.assign(new Error(message), retryAfterMs !== undefined ? { retryAfterMs } : {});
  err.stack = `Error: ${message}`;
  bullmqSafe.add(err);
  return err;
}

/** Errors already made safe for BullMQ's hash. */
const bullmqSafe = new WeakSet<Error>();

const DISCONNECT_BOUND_MS = 500;

/** How long a notification's could-not-answer line is remembered as left (longer than any backoff and give-up). */
const FAILURE_REPLY_MEMORY_MS = 30 * 86_400_000;

/** Whether `p` settles (either way) within `ms`; it keeps running if not. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = p.then(
    () => true,
    () => true,
  );
  const result = await Promise.race([settled, late]);
  clearTimeout(timer);
  return result;
}

function emptyRecord(activationId: string, job: ActivationJob, started: number, attempt: number): ActivationRecord {
  return {
    activation_id: activationId,
    agent: job.agent,
    trigger: job.trigger,
    outcome: 'no_action',
    reason: '',
    started_at: new Date(started).toISOString(),
    duration_ms: Date.now() - started,
    usage: { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: 0 },
    replies: 0,
    posts: 0,
    handled_notifications: 0,
    attempt,
    events: [],
  };
}

function recordOf(o: ActivationOutcome, started: number, attempt: number): ActivationRecord {
  return {
    activation_id: o.activationId,
    agent: o.agent,
    trigger: o.trigger,
    outcome: o.outcome.kind,
    reason: o.reason,
    started_at: new Date(started).toISOString(),
    duration_ms: Date.now() - started,
    usage: { input_tokens: o.usage.inputTokens, output_tokens: o.usage.outputTokens, cached_tokens: o.usage.cachedTokens, cost_usd: o.usage.costUsd },
    replies: o.replies,
    posts: o.posts,
    handled_notifications: o.handled.length,
    attempt,
    timings: roundTimings(o.timings),
    ...(o.taskId ? { task_id: o.taskId } : {}),
    events: o.events,
  };
}

function roundTimings(t: PhaseTimings): PhaseTimings {
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(v * 10) / 10]));
}

