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
