// The producer side of the activation queue: one active plus at most one pending activation per agent.
import { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { PRIORITY, type ActivationJob } from './activation-job.ts';
import { ACTIVATION_QUEUE } from '../redis/keys.ts';
import { ACTIVATION_BACKOFF } from './retry-delay.ts';
import { dedupId } from '../redis/keys.ts';
import type { RedisClient } from '../redis/scripts.ts';

export interface QueueCounts {
  active: number;
  waiting: number;
  /** Waiting jobs with a priority (BullMQ keeps them apart from `waiting`). */
  prioritized: number;
  delayed: number;
  completed: number;
  failed: number;
}

export interface RunningActivation {
  agent: string;
  trigger: ActivationJob['trigger'];
  /** Epoch ms the current attempt started. */
  startedAt: number;
  /** As the worker published it (activation/live-progress.ts); unchecked here. */
  progress: unknown;
}

export class ActivationQueue {
  readonly queue: Queue<ActivationJob>;

  constructor(connection: RedisClient, opts: { prefix: string; logger: Logger }) {
    this.queue = new Queue<ActivationJob>(ACTIVATION_QUEUE, { connection, prefix: opts.prefix });
    this.queue.on('error', (err) => opts.logger.error({ err }, 'activation queue error'));
  }

  /**
   * BullMQ's `keepLastIfActive` deduplication keyed by agent gives exactly the rule we want: while an
   * activation waits, further adds are absorbed by it; while one runs, one follow-up is kept and queued
   * when it finishes, so new input during a run triggers exactly one more activation.
   */
  async enqueue(agent: string, trigger: ActivationJob['trigger']): Promise<string | undefined> {
    const data: ActivationJob = { agent, trigger, enqueuedAt: Date.now() };
    const job = await this.queue.add(trigger, data, {
      deduplication: { id: dedupId(agent), keepLastIfActive: true },
      priority: PRIORITY[trigger],
      attempts: 3,
      backoff: { type: ACTIVATION_BACKOFF },
      removeOnComplete: { count: 1_000 },
      removeOnFail: { count: 1_000 },
    });
    // A deduplicated add returns the id of the job that absorbed it.
    return job.id;
  }

  /** The activations running now, with whatever progress their workers last published. */
  async running(limit = 1_000): Promise<RunningActivation[]> {
    const jobs = await this.queue.getActive(0, limit - 1);
    return jobs.map((j) => ({ agent: j.data.agent, trigger: j.data.trigger, startedAt: j.processedOn ?? j.timestamp, progress: j.progress }));
  }

  /** Jobs per state, for idle capacity, `warren status` and metrics. */
  async counts(): Promise<QueueCounts> {
    const c = await this.queue.getJobCounts('active', 'waiting', 'prioritized', 'delayed', 'completed', 'failed');
    return { active: c.active ?? 0, waiting: c.waiting ?? 0, prioritized: c.prioritized ?? 0, delayed: c.delayed ?? 0, completed: c.completed ?? 0, failed: c.failed ?? 0 };
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
