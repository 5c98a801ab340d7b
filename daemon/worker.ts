// The consumer side: a BullMQ worker that runs activations, records each outcome, reports final failures,
// and shuts down gracefully within a deadline.
import { ROOT_CONTEXT } from '@opentelemetry/api';
import { UnrecoverableError, Worker, type Job, type WorkerOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ACTIVATION_QUEUE, ActivationJobSchema, type ActivationJob } from '../scheduler/activation-job.ts';
import { endSpan, startSpan, traceparentOf } from '../agent-loop/tracing.ts';
import type { AgentStateStore } from '../scheduler/agent-state.ts';
import type { InboxClaim, InboxClaims } from '../scheduler/inbox-claims.ts';
import { activationRetryDelay, retryRefused } from '../scheduler/retry-delay.ts';
import { ActivationError, runActivation, type ActivationDeps, type ActivationOutcome } from './activation.ts';
import type { ActivationRecord, ActivationRecords } from './activation-records.ts';
import type { ErrorReporter } from './error-reporter.ts';
import { ProgressPublisher } from './live-progress.ts';
import type { PhaseTimings } from './phase-timer.ts';
import type { Redactor } from './redact.ts';

/** An activation as a worker picks it up. */
export interface ActivationStart {
  agent: string;
  trigger: ActivationJob['trigger'];
  /** Epoch ms: when the scheduler enqueued it, and when this worker started it. */
  enqueuedAt: number;
  startedAt: number;
}

export interface ActivationWorkerOptions {
  connection: Redis;
  prefix: string;
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
  redactor: Redactor;
  logger: Logger;
  /** Observes each finished activation (tests, metrics). */
  onOutcome?: (outcome: ActivationOutcome) => void;
  /** Observes each record as it is stored, failures included (metrics). */
  onRecord?: (record: ActivationRecord) => void;
  /** Observes each activation as it starts, with how long it waited in the queue (metrics). */
  onStart?: (start: ActivationStart) => void;
}

/** How a worker resolves the activation jobs' backoff type (scheduler/retry-delay.ts). */
export const ACTIVATION_WORKER_SETTINGS: WorkerOptions['settings'] = { backoffStrategy: (attemptsMade, _type, err) => activationRetryDelay(attemptsMade, err) };

export class ActivationWorker {
  readonly worker: Worker<ActivationJob, ActivationOutcome>;
  readonly #opts: ActivationWorkerOptions;
  readonly #logger: Logger;

  constructor(opts: ActivationWorkerOptions) {
    this.#opts = opts;
    this.#logger = opts.logger;
    this.worker = new Worker<ActivationJob, ActivationOutcome>(ACTIVATION_QUEUE, (job, token, signal) => this.#process(job, signal ?? new AbortController().signal, token), {
      connection: opts.connection,
      prefix: opts.prefix,
      concurrency: opts.concurrency,
      lockDuration: opts.lockDurationMs,
      stalledInterval: opts.stalledIntervalMs,
      settings: ACTIVATION_WORKER_SETTINGS,
      autorun: true,
    });
    this.worker.on('error', (err) => this.#logger.error({ err }, 'worker error'));
    this.worker.on('failed', (job, err) => {
      this.#logger.warn({ agent: job?.data.agent, job: job?.id, attempt: job?.attemptsMade, err: opts.redactor.redact(err.message) }, 'activation failed');
    });
  }

  async #process(job: Job<ActivationJob, ActivationOutcome>, signal: AbortSignal, token: string | undefined): Promise<ActivationOutcome> {
    const data = ActivationJobSchema.safeParse(job.data);
    if (!data.success) throw new UnrecoverableError(`malformed activation job ${job.id}: ${data.error.issues[0]?.message ?? ''}`);
    const activationId = activationIdOf(job);
    const attempt = job.attemptsMade + 1;
    const started = Date.now();
    // A notification run holds its agent's whole inbox until it has read it; the claim says so from the first moment.
    const ttl = (this.#opts.deps.agents.get(data.data.agent)?.config.behavior.max_duration ?? 300_000) + 60_000;
    const inbox = data.data.trigger === 'notification' && this.#opts.claims && job.id ? this.#opts.claims.forRun(data.data.agent, job.id, token ?? `${job.attemptsStarted}`, ttl) : undefined;
    await inbox?.begin().catch(() => undefined);
    try {
      return await this.#run(job, data.data, signal, activationId, attempt, started, inbox);
    } finally {
      await inbox?.release().catch(() => undefined); // whatever happened, the run holds nothing it has not read
    }
  }

  async #run(job: Job<ActivationJob, ActivationOutcome>, data: ActivationJob, signal: AbortSignal, activationId: string, attempt: number, started: number, inbox: InboxClaim | undefined): Promise<ActivationOutcome> {
    const { agentState } = this.#opts;
    this.#opts.onStart?.({ agent: data.agent, trigger: data.trigger, enqueuedAt: data.enqueuedAt, startedAt: started });
    // `warren pause` also holds back what was already queued.
    if ((await agentState.getMany([data.agent])).get(data.agent)?.paused) {
      await this.#store({ ...emptyRecord(activationId, data, started, attempt), outcome: 'skipped', reason: 'paused' });
      return { activationId, agent: data.agent, trigger: data.trigger, status: 'skipped', reason: 'paused', handled: [], replies: 0, posts: 0, usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0 }, budget: 'healthy', events: [], timings: {} };
    }
    // What the run is doing, for `warren status` on any machine: BullMQ's job progress, kept small.
    const live = new ProgressPublisher(activationId, (p) => job.updateProgress({ ...p }).catch((err: unknown) => this.#logger.debug({ err, agent: data.agent }, 'live progress not published')));
    live.start();
    // The trace's root: an attempt of an activation. The executor's spans continue it.
    const span = startSpan('warren.activation', ROOT_CONTEXT, { 'gen_ai.agent.name': data.agent, 'warren.activation_id': activationId, 'warren.trigger': data.trigger, 'warren.attempt': attempt });
    let spanError: string | undefined;
    const spanAttrs: Record<string, string | number> = {};
    try {
      const outcome = await runActivation(this.#opts.deps, activationId, data, signal, { attempt, claim: inbox, onEvent: (e) => live.observe(e), traceparent: traceparentOf(span.context) });
      Object.assign(spanAttrs, { 'warren.outcome': outcome.status, 'warren.reason': outcome.reason, 'warren.replies': outcome.replies, 'warren.handled': outcome.handled.length });
      if (outcome.status !== 'skipped') {
        await agentState.recordSuccess(data.agent);
        await agentState.recordActivated(data.agent, { tokensInput: outcome.usage.inputTokens, tokensOutput: outcome.usage.outputTokens, costUsd: outcome.usage.costUsd, posts: outcome.posts, comments: outcome.replies });
      }
      await this.#store(recordOf(outcome, started, attempt));
      this.#opts.onOutcome?.(outcome);
      return outcome;
    } catch (err) {
      spanError = this.#opts.redactor.redact(err instanceof Error ? err.message : String(err));
      // Cancelled by a shutdown: not the agent's failure. BullMQ runs it again (here or on another worker),
      // and the notifications it left unread are scheduled again in any case.
      if (signal.aborted) throw new Error(`activation ${activationId} was cancelled at shutdown`, { cause: err });
      const unrecoverable = err instanceof ActivationError && !err.retryable;
      // Also final: a provider reset too far away for a retry to wait for (BullMQ will not try again).
      const final = unrecoverable || attempt >= (job.opts.attempts ?? 1) || retryRefused(err);
      // Only a final failure counts toward the agent's backoff and is reported; BullMQ's own retries come first.
      if (final) await this.#finalFailure(job, data, activationId, attempt, started, err).catch((e: unknown) => this.#logger.error({ err: e }, 'could not record a failed activation'));
      throw unrecoverable ? new UnrecoverableError(err.message) : err;
    } finally {
      live.stop();
      endSpan(span, spanAttrs, spanError);
    }
  }

  async #finalFailure(job: Job<ActivationJob, ActivationOutcome>, data: ActivationJob, activationId: string, attempt: number, started: number, err: unknown): Promise<void> {
    const { agentState, redactor } = this.#opts;
    const failures = await agentState.recordFailure(data.agent);
    const usage = err instanceof ActivationError ? err.usage : { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0 };
    await agentState.recordActivated(data.agent, { tokensInput: usage.inputTokens, tokensOutput: usage.outputTokens, costUsd: usage.costUsd, posts: 0, comments: 0 });
    const error = err instanceof Error ? err : new Error(String(err));
    this.#logger.warn({ agent: data.agent, failures, err: redactor.redact(error.message) }, 'activation failed for good');
    const def = this.#opts.deps.agents.get(data.agent);
    await this.#opts.errors.report(def, {
      agent: data.agent,
      activationId,
      trigger: data.trigger,
      task: err instanceof ActivationError ? err.task : undefined,
      error: { name: error.cause instanceof Error ? error.cause.name : error.name, message: error.message, stack: error.stack },
      executor: def?.config.type ?? 'unknown',
      model: def?.config.brain.model,
      attempts: attempt,
      maxAttempts: job.opts.attempts ?? 1,
      retryable: !(err instanceof ActivationError && !err.retryable),
    });
    await this.#store({
      ...emptyRecord(activationId, data, started, attempt),
      outcome: 'failed',
      reason: error.cause instanceof Error ? error.cause.name : error.name,
      usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens, cached_tokens: usage.cachedTokens, cost_usd: usage.costUsd },
      error: redactor.redact(error.message),
    });
  }

  async #store(record: ActivationRecord): Promise<void> {
    const redacted = { ...record, events: JSON.parse(this.#opts.redactor.redact(JSON.stringify(record.events))) as ActivationRecord['events'] };
    await this.#opts.records.add(redacted);
    this.#opts.onRecord?.(redacted);
  }

  /**
   * Lets running activations finish for `graceMs`, then aborts them (their executors stop and kill
   * subprocesses) and gives them `settleMs` to wind down. If the worker is still not closed then (Redis gone:
   * BullMQ waits on commands that never answer), its own connections are cut. Always returns within about
   * graceMs + settleMs + DISCONNECT_BOUND_MS; unfinished jobs are recovered by BullMQ's stalled-job check.
   */
  async close(graceMs: number, settleMs: number): Promise<void> {
    // One close: BullMQ hands a later close(true) the same promise, so aborting is what ends the wait.
    const closing = this.worker.close();
    if (await settlesWithin(closing, graceMs)) return;
    this.#logger.warn({ deadlineMs: graceMs }, 'activations still running at the shutdown deadline; aborting them');
    this.worker.cancelAllJobs('shutdown');
    if (await settlesWithin(closing, settleMs)) return;
    this.#logger.warn({ settleMs }, 'worker not closed after aborting its activations (is Redis reachable?); disconnecting it');
    await settlesWithin(this.worker.disconnect(), DISCONNECT_BOUND_MS);
  }
}

const DISCONNECT_BOUND_MS = 500;

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
    outcome: 'idle',
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
    outcome: o.status,
    reason: o.reason,
    started_at: new Date(started).toISOString(),
    duration_ms: Date.now() - started,
    usage: { input_tokens: o.usage.inputTokens, output_tokens: o.usage.outputTokens, cached_tokens: o.usage.cachedTokens, cost_usd: o.usage.costUsd },
    replies: o.replies,
    posts: o.posts,
    handled_notifications: o.handled.length,
    attempt,
    timings: roundTimings(o.timings),
    events: o.events,
  };
}

function roundTimings(t: PhaseTimings): PhaseTimings {
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(v * 10) / 10]));
}

/** Stable across BullMQ retries of the job; the timestamp keeps ids unique even if Redis is wiped and ids restart. */
function activationIdOf(job: Job<ActivationJob, ActivationOutcome>): string {
  return `act-${job.id}-${job.timestamp.toString(36)}`;
}
