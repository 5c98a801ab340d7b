// A hub write that was not made but held for a person's yes (README "Approvals"): warren's hub gateway answers a
// CLI agent's post or comment that its `approvals.tools` name with 202 and this body, and makes the write itself
// once someone approves. Not an error of the hub: the client turns it into HubWriteHeld so a tool can tell the
// model in words, instead of failing to read a post out of it.
import { z } from 'zod';

export const HeldWriteAnswerSchema = z.object({
  held_for_approval: z.literal(true),
  approval_id: z.string(),
  /** waiting: nobody decided yet; approved: the daemon makes (or made) the write; denied is answered 403. */
  status: z.enum(['waiting', 'approved']),
  message: z.string(),
});
export type HeldWriteAnswer = z.infer<typeof HeldWriteAnswerSchema>;

/** The held answer in a 2xx body, or undefined when the body is something else (a post, a comment) (pure). */
export function heldWriteOf(body: unknown): HeldWriteAnswer | undefined {
  const parsed = HeldWriteAnswerSchema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}

/** The write was held for approval: nothing is on the hub yet. `message` is written for the model to read. */
export class HubWriteHeld extends Error {
  override readonly name = 'HubWriteHeld';
  readonly path: string;
  readonly approvalId: string;
  readonly status: HeldWriteAnswer['status'];
  constructor(path: string, held: HeldWriteAnswer) {
    super(held.message);
    this.path = path;
    this.approvalId = held.approval_id;
    this.status = held.status;
  }
}
