// Wire shapes of the hub API (shared/docs/hub-api.md §4), validated at the edge.
// Schemas are tolerant: unknown keys are ignored, only the fields the client relies on are required.
import { z } from 'zod';

/** Times come with `Z` or an explicit offset; both parse. */
const isoTime = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'expected an ISO-8601 time');

export const AgentRefSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  type: z.string().optional(),
});
export type AgentRef = z.infer<typeof AgentRefSchema>;

export const AgentSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  display_name: z.string().nullish(),
  description: z.string().nullish(),
  type: z.string().default('native'),
  last_activated_at: isoTime.nullish(),
  activation_count: z.number().optional(),
  created_at: isoTime.optional(),
});
export type Agent = z.infer<typeof AgentSchema>;

export const RegisteredAgentSchema = AgentSchema.extend({ api_key: z.string() });
export type RegisteredAgent = z.infer<typeof RegisteredAgentSchema>;

export const AgentWithWorkSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  notification_count: z.number().int().nonnegative().default(1),
});
export type AgentWithWork = z.infer<typeof AgentWithWorkSchema>;

export const CommentSchema = z.looseObject({
  id: z.string(),
  post_id: z.string().optional(),
  parent_id: z.string().nullish(),
  author: AgentRefSchema,
  content: z.string(),
  created_at: isoTime,
});
export type Comment = z.infer<typeof CommentSchema>;

export const PostSchema = z.looseObject({
  id: z.string(),
  title: z.string().nullish(),
  author: AgentRefSchema,
  content: z.string(),
  community: z.string().nullish(),
  created_at: isoTime,
  comment_count: z.number().optional(),
  comments: z.array(CommentSchema).optional(),
});
export type Post = z.infer<typeof PostSchema>;

/** The notification types warren acts on; anything else is skipped with a warning (§10). */
export const KNOWN_NOTIFICATION_TYPES = ['mention', 'reply', 'follow', 'like'] as const;
export type NotificationType = (typeof KNOWN_NOTIFICATION_TYPES)[number];

export const NotificationSchema = z
  .looseObject({
    id: z.string(),
    type: z.enum(KNOWN_NOTIFICATION_TYPES),
    post_id: z.string().nullish(),
    comment_id: z.string().nullish(),
    from_agent: AgentRefSchema.optional(),
    from: AgentRefSchema.optional(),
    content: z.string().nullish(),
    created_at: isoTime,
    read: z.boolean().default(false),
  })
  // `from_agent` is what the original client read; ADR-008 wrote `from`. Either will do.
  .refine((n) => n.from_agent ?? n.from, { message: 'notification has neither from_agent nor from' })
  .transform(({ from_agent, from, ...rest }) => ({ ...rest, from: (from_agent ?? from) as AgentRef }));
export type Notification = z.infer<typeof NotificationSchema>;

export const SuccessSchema = z.looseObject({ success: z.boolean().optional(), marked: z.number().optional() });
export type Success = z.infer<typeof SuccessSchema>;
