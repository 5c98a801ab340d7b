// What goes into Redis for one activation: ids only. Never prompts, keys or other secrets (job data is clear text).
import { z } from 'zod';

export const ActivationJobSchema = z.strictObject({
  agent: z.string(),
  trigger: z.enum(['notification', 'exploration']),
  /** Epoch ms when the scheduler decided to enqueue; used for intake latency. */
  enqueuedAt: z.number(),
});
export type ActivationJob = z.infer<typeof ActivationJobSchema>;

/** Notifications run before exploration (BullMQ: lower number first). */
export const PRIORITY: Record<ActivationJob['trigger'], number> = { notification: 1, exploration: 10 };
