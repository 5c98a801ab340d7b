// The producer side of the activation queue: one active plus at most one pending activation per agent. One BullMQ
// queue per shard (redis/key-layout.ts): an agent's activations go to its shard's queue, beside its inbox holds.
import { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { PRIORITY, type ActivationJob } from './activation-job.ts';
import { ACTIVATION_QUEUE } from '../redis/keys.ts';
import { ACTIVATION_BACKOFF } from './retry-delay.ts';
import { dedupId } from '../redis/keys.ts';
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
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
  /** One per shard, by shard index. */
  readonly queues: ReadonlyArray<Queue<ActivationJob>>;
  readonly #layout: KeyLayout;

  /** `readOnly`: a reader (`warren status`) that must leave no trace, not even the queue's meta hash BullMQ writes on open. */
  constructor(connection: RedisClient, opts: { prefix: KeySpace; logger: Logger; readOnly?: boolean }) {
    this.#layout = keyLayout(opts.prefix);
    this.queues = this.#layout.shards.map((keys) => {
      const queue = new Queue<ActivationJob>(ACTIVATION_QUEUE, { connection, prefix: keys.prefix, ...(opts.readOnly ? { skipMetasUpdate: true } : {}) });
      queue.on('error', (err) => opts.logger.error({ err, shard: keys.prefix }, 'activation queue error'));
      return queue;
    });
  }

  /** The queue of the first shard: the only one of a fleet on one shard (tools and benchmarks). */
  get queue(): Queue<ActivationJob> {
    return this.queues[0]!;
  }

  /** The queue an agent's activations go to. */
  of(agent: string): Queue<ActivationJob> {
    return this.queues[this.#layout.indexOf(agent)]!;
  }

  /**
   * BullMQ's `keepLastIfActive` deduplication keyed by agent gives exactly the rule we want: while an
   * activation waits, further adds are absorbed by it; while one runs, one follow-up is kept and queued
   * when it finishes, so new input during a run triggers exactly one more activation.
   */
  async enqueue(agent: string, trigger: ActivationJob['trigger']): Promise<string | undefined> {
    const data: ActivationJob = { agent, trigger, enqueuedAt: Date.now() };
    const job = await this.of(agent).add(trigger, data, {
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
    const jobs = (await Promise.all(this.queues.map((q) => q.getActive(0, limit - 1)))).flat().slice(0, limit);
    return jobs.map((j) => ({ agent: j.data.agent, trigger: j.data.trigger, startedAt: j.processedOn ?? j.timestamp, progress: j.progress }));
  }

  /** Jobs per state over every shard (or of one shard's queue), for idle capacity, `warren status` and metrics. */
  async counts(shard?: number): Promise<QueueCounts> {
    const queues = shard === undefined ? this.queues : [this.queues[shard]!];
    const all = await Promise.all(queues.map((q) => q.getJobCounts('active', 'waiting', 'prioritized', 'delayed', 'completed', 'failed')));
    const sum = (state: keyof QueueCounts): number => all.reduce((n, c) => n + (c[state] ?? 0), 0);
    return { active: sum('active'), waiting: sum('waiting'), prioritized: sum('prioritized'), delayed: sum('delayed'), completed: sum('completed'), failed: sum('failed') };
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((q) => q.close()));
  }
}
