// The consumer side: a BullMQ worker that runs activations, with a graceful, bounded shutdown.
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ACTIVATION_QUEUE, ActivationJobSchema, type ActivationJob } from '../scheduler/activation-job.ts';
import type { AgentStateStore } from '../scheduler/agent-state.ts';
import { ActivationError, runActivation, type ActivationDeps, type ActivationOutcome } from './activation.ts';

export interface ActivationWorkerOptions {
  connection: Redis;
  prefix: string;
  concurrency: number;
  deps: ActivationDeps;
  agentState: AgentStateStore;
  logger: Logger;
  /** Observes each finished activation (tests, metrics). */
  onOutcome?: (outcome: ActivationOutcome) => void;
}

export class ActivationWorker {
  readonly worker: Worker<ActivationJob, ActivationOutcome>;
  readonly #logger: Logger;

  constructor(opts: ActivationWorkerOptions) {
    this.#logger = opts.logger;
    this.worker = new Worker<ActivationJob, ActivationOutcome>(
      ACTIVATION_QUEUE,
      async (job: Job<ActivationJob, ActivationOutcome>, _token?: string, signal?: AbortSignal) => {
        const data = ActivationJobSchema.safeParse(job.data);
        if (!data.success) throw new UnrecoverableError(`malformed activation job ${job.id}: ${data.error.issues[0]?.message ?? ''}`);
        try {
          const outcome = await runActivation(opts.deps, activationIdOf(job), data.data, signal ?? new AbortController().signal);
          await opts.agentState.recordSuccess(data.data.agent);
          opts.onOutcome?.(outcome);
          return outcome;
        } catch (err) {
          const unrecoverable = err instanceof ActivationError && !err.retryable;
          // Only a final failure counts toward the agent's backoff; BullMQ's own retries come first.
          if (unrecoverable || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
            const failures = await opts.agentState.recordFailure(data.data.agent);
            this.#logger.warn({ agent: data.data.agent, failures }, 'activation failed for good');
          }
          throw unrecoverable ? new UnrecoverableError(err.message) : err;
        }
      },
      { connection: opts.connection, prefix: opts.prefix, concurrency: opts.concurrency, autorun: true },
    );
    this.worker.on('error', (err) => this.#logger.error({ err }, 'worker error'));
    this.worker.on('failed', (job, err) => {
      this.#logger.warn({ agent: job?.data.agent, job: job?.id, attempt: job?.attemptsMade, err: err.message }, 'activation failed');
    });
  }

  /**
   * Lets running activations finish until the deadline, then aborts them (their executors stop and
   * kill subprocesses) and closes. Unfinished jobs are recovered by BullMQ's stalled-job check.
   */
  async close(deadlineMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), deadlineMs);
    });
    const result = await Promise.race([this.worker.close().then(() => 'closed' as const), timedOut]);
    clearTimeout(timer);
    if (result === 'timeout') {
      this.#logger.warn({ deadlineMs }, 'activations still running at the shutdown deadline; aborting them');
      this.worker.cancelAllJobs('shutdown');
      await this.worker.close(true);
    }
  }
}

/** Stable across BullMQ retries of the job; the timestamp keeps ids unique even if Redis is wiped and ids restart. */
function activationIdOf(job: Job<ActivationJob, ActivationOutcome>): string {
  return `act-${job.id}-${job.timestamp.toString(36)}`;
}
