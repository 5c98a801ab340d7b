// Wire shapes of the hub API (docs/hub-api.md §4), validated at the edge.
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
  /** How many notifications the hub marked read with this comment (asked with `mark_read`, docs/hub-api.md §5.2). */
  marked_read: z.number().int().nonnegative().optional(),
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

/** The notification types warren acts on (`dm`: a direct message, from a hub that has them); anything else is skipped with a warning (§10). */
export const KNOWN_NOTIFICATION_TYPES = ['mention', 'reply', 'follow', 'like', 'dm'] as const;
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
  // `from_agent` is what the original client read; the design records wrote `from` (docs/hub-api.md §10). Either will do.
  .refine((n) => n.from_agent ?? n.from, { message: 'notification has neither from_agent nor from' })
  .transform(({ from_agent, from, ...rest }) => ({ ...rest, from: (from_agent ?? from) as AgentRef }));
export type Notification = z.infer<typeof NotificationSchema>;

export const SuccessSchema = z.looseObject({ success: z.boolean().optional(), marked: z.number().optional() });
export type Success = z.infer<typeof SuccessSchema>;

export const StaleAgentSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  last_activated_at: isoTime.nullish().transform((v) => v ?? null),
});
export type StaleAgent = z.infer<typeof StaleAgentSchema>;

export const KeyRotationSchema = z.looseObject({
  api_key: z.string(),
  api_key_expires_at: isoTime.nullish(),
  old_key_expires_at: isoTime.nullish(),
  message: z.string().optional(),
});
export type KeyRotation = z.infer<typeof KeyRotationSchema>;

export const NotificationCountSchema = z.looseObject({
  unread: z.number().int().nonnegative().default(0),
  total: z.number().int().nonnegative().default(0),
});
export type NotificationCount = z.infer<typeof NotificationCountSchema>;

export const CommunitySchema = z.looseObject({
  name: z.string().transform((n) => (n.startsWith('m/') ? n.slice(2) : n)),
  description: z.string().nullish(),
  subscriber_count: z.number().optional(),
  created_at: isoTime.optional(),
});
export type Community = z.infer<typeof CommunitySchema>;

export const BUDGET_STATUSES = ['healthy', 'warning', 'throttle', 'critical'] as const;
export type BudgetStatus = (typeof BUDGET_STATUSES)[number];

/** The superset shape of docs/hub-api.md §5.6, read with the original client's rules: missing numbers are 0, missing `healthy` is true. */
export const BudgetHealthSchema = z
  .looseObject({
    agent_id: z.string().optional(),
    daily_limit: z.number().nullish(),
    daily_used: z.number().nullish(),
    monthly_limit: z.number().nullish(),
    monthly_used: z.number().nullish(),
    healthy: z.boolean().nullish(),
    status: z.string().nullish(),
    used_pct: z.number().nullish(),
  })
  .transform((b) => {
    const healthy = b.healthy ?? true;
    const known = BUDGET_STATUSES.find((s) => s === b.status);
    // An unknown or missing status falls back to what `healthy` says, so a hub without `status` still gates.
    const status: BudgetStatus = known ?? (healthy ? 'healthy' : 'critical');
    return {
      ...b,
      daily_limit: b.daily_limit ?? 0,
      daily_used: b.daily_used ?? 0,
      monthly_limit: b.monthly_limit ?? 0,
      monthly_used: b.monthly_used ?? 0,
      used_pct: b.used_pct ?? 0,
      healthy,
      status,
    };
  });
export type BudgetHealth = z.infer<typeof BudgetHealthSchema>;
