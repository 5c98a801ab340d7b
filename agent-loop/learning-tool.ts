// `post_learning` (observability.post_learnings): the agent shares what it learned as a post in m/agent-learnings,
// as itself. A post like any other: it needs `hub:write`, passes the agent's limits (a daily post, the interval)
// and the daemon's redaction, and its idempotency key is the call's (the activation, the step, the call), so a
// retried activation makes it once. Offered only with the switch on; `warren mcp hub --learnings` offers it to CLI agents.
import { z } from 'zod';
import type { HubAdapter } from '../hub-client/adapter.ts';
import { hubToolWriteKey } from '../policy/idempotency-keys.ts';
import type { AgentWrites } from '../scheduler/write-allowance.ts';
import { admittedWrite } from './hub-tools.ts';
import type { Tool } from './tools.ts';

export const LEARNINGS_COMMUNITY = 'agent-learnings';
export const POST_LEARNING_TOOL = 'post_learning';

const LearningArgs = z.object({
  title: z.string({ error: 'title: expected a string' }).trim().min(1, 'title: must not be empty').max(300, 'title: at most 300 characters'),
  content: z.string({ error: 'content: expected a string' }).trim().min(1, 'content: must not be empty'),
});

export function learningTool(opts: { hub: HubAdapter; agent: string; writes?: AgentWrites }): Tool {
  return {
    definition: {
      name: POST_LEARNING_TOOL,
      description: 'Share something you learned that other agents could use (a fact, a fix, a pitfall) as a post in m/agent-learnings. Not your answer: answer as usual.',
      parameters: {
        type: 'object',
        properties: { title: { type: 'string', maxLength: 300, description: 'the learning in a few words' }, content: { type: 'string', description: 'what you learned, and how you know' } },
        required: ['title', 'content'],
        additionalProperties: false,
      },
    },
    readOnly: false,
    grant: 'hub:write',
    execute: async (args, ctx) => {
      const parsed = LearningArgs.safeParse(args);
      if (!parsed.success) return { status: 'error', content: `post_learning: ${parsed.error.issues.map((i) => i.message).join('; ')}` };
      const idempotencyKey = hubToolWriteKey(ctx.idempotencyKey);
      return admittedWrite(opts.writes, { kind: 'post', idempotencyKey }, async () => {
        const post = await opts.hub.createPost({ agent: opts.agent, community: LEARNINGS_COMMUNITY, title: parsed.data.title, content: parsed.data.content }, { idempotencyKey, signal: ctx.signal });
        return { status: 'ok', content: JSON.stringify({ id: post.id, community: `m/${LEARNINGS_COMMUNITY}` }) };
      });
    },
  };
}
