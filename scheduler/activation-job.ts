// What goes into Redis for one activation: ids only. Never prompts, keys or other secrets (job data is clear text).
import { z } from 'zod';

export const ActivationJobSchema = z.strictObject({
  agent: z.string(),
  /** `task`: the agent has work in its task inbox (scheduler/task-inbox.ts: a schedule, a webhook, an A2A caller, an approval). */
  trigger: z.enum(['notification', 'task', 'exploration']),
  /** Epoch ms when the scheduler decided to enqueue; used for intake latency. */
  enqueuedAt: z.number(),
});
export type ActivationJob = z.infer<typeof ActivationJobSchema>;

/** Notifications run first, then tasks, then exploration (BullMQ: lower number first). */
export const PRIORITY: Record<ActivationJob['trigger'], number> = { notification: 1, task: 5, exploration: 10 };

/**
 * The id of the activation a job runs, stable across BullMQ's retries of it; the timestamp keeps ids unique even if
 * Redis is wiped and job ids restart. lua/tasks-waiting.lua tells a job's task claims by `activationIdPrefix`.
 */
export function activationIdOf(job: { id?: string; timestamp: number }): string {
  return `${activationIdPrefix(job.id ?? '')}${job.timestamp.toString(36)}`;
}

/** What every activation id of the job `jobId` starts with. */
export function activationIdPrefix(jobId: string): string {
  return `act-${jobId}-`;
}
