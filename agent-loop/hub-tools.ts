// The built-in hub tools (docs/agent-loop.md R14), acting as the agent through a HubAdapter. Reads need `hub:read`,
// writes `hub:write`; writes carry the call's idempotency key, so a retried activation replays, never repeats,
// and pass the agent's behavior limits first (scheduler/write-allowance.ts).
import type { HubAdapter } from '../hub-client/adapter.ts';
import { hubToolWriteKey } from '../policy/idempotency-keys.ts';
import type { Comment, Post } from '../hub-client/types.ts';
import { WriteRefused, type AgentWrites, type HubWrite } from '../scheduler/write-allowance.ts';
import { deepFreeze, type Tool, type ToolContext, type ToolOutcome } from './tools.ts';

export interface HubToolOptions {
  hub: HubAdapter;
  agent: string;
  /** behavior.can_create_posts: when false, hub_post is not offered at all. */
  canCreatePosts?: boolean;
  /** Admits each write against the agent's limits; a refusal is the tool's result. Absent: not limited here. */
  writes?: AgentWrites;
}

const obj = (properties: Record<string, unknown>, required: string[]): Record<string, unknown> => ({ type: 'object', properties, required, additionalProperties: false });

// The definitions are the same for every agent and every activation: built once here, not per activation (six
// fresh schemas were ~2 KB of live heap per activation in flight, heap snapshots at 1,000). Frozen: all share them.
const HUB_POST = deepFreeze({
  name: 'hub_post',
  description: 'Start a new post on the hub as yourself.',
  parameters: obj({ content: { type: 'string' }, title: { type: 'string', maxLength: 300 }, community: { type: 'string', description: 'e.g. m/general' } }, ['content']),
});
const HUB_REPLY = deepFreeze({
  name: 'hub_reply',
  description: 'Reply in a thread as yourself: to the post, or to one of its comments with parent_id.',
  parameters: obj({ post_id: { type: 'string' }, content: { type: 'string' }, parent_id: { type: 'string' } }, ['post_id', 'content']),
});
const HUB_SEARCH = deepFreeze({
  name: 'hub_search',
  description: 'Search posts on the hub.',
  parameters: obj({ query: { type: 'string' }, community: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 50 } }, ['query']),
});
const HUB_GET_THREAD = deepFreeze({ name: 'hub_get_thread', description: 'Read a post with all its comments.', parameters: obj({ post_id: { type: 'string' } }, ['post_id']) });
const HUB_NOTIFICATIONS = deepFreeze({
  name: 'hub_notifications',
  description: 'Your notifications (mentions, replies), newest first.',
  parameters: obj({ unread_only: { type: 'boolean' }, limit: { type: 'integer', minimum: 1, maximum: 50 } }, []),
});
const BUDGET_CHECK = deepFreeze({ name: 'budget_check', description: 'Your token and cost budget: status and use today and this month.', parameters: obj({}, []) });

/** A tool's hub write, admitted against the agent's limits first: the model sees a refusal as the call's result (it can still answer in text), never as a crash. */
export async function admittedWrite(writes: AgentWrites | undefined, w: HubWrite, act: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  try {
    return await (writes ? writes.guard(w, act) : act());
  } catch (err) {
    if (err instanceof WriteRefused) return { status: 'error', content: err.message };
    throw err;
  }
}

export function hubTools(opts: HubToolOptions): Tool[] {
  const { hub, agent } = opts;
  const ok = (v: unknown): ToolOutcome => ({ status: 'ok', content: JSON.stringify(v) });
  const str = (a: Record<string, unknown>, k: string): string | undefined => (typeof a[k] === 'string' ? a[k] : undefined);
  const num = (a: Record<string, unknown>, k: string): number | undefined => (typeof a[k] === 'number' ? a[k] : undefined);
  const write = (ctx: ToolContext): { idempotencyKey: string; signal: AbortSignal } => ({ idempotencyKey: hubToolWriteKey(ctx.idempotencyKey), signal: ctx.signal });
  const admitted = (w: HubWrite, act: () => Promise<ToolOutcome>): Promise<ToolOutcome> => admittedWrite(opts.writes, w, act);

  const tools: Tool[] = [
    {
      definition: HUB_POST,
      readOnly: false,
      grant: 'hub:write',
      postsToHub: true,
      execute: (a, ctx) =>
        admitted({ kind: 'post', idempotencyKey: write(ctx).idempotencyKey }, async () =>
          ok(brief(await hub.createPost({ agent, content: str(a, 'content') ?? '', title: str(a, 'title'), community: str(a, 'community') }, write(ctx)))),
        ),
    },
    {
      definition: HUB_REPLY,
      readOnly: false,
      grant: 'hub:write',
      postsToHub: true,
      execute: (a, ctx) =>
        admitted({ kind: 'comment', postId: str(a, 'post_id') ?? '', idempotencyKey: write(ctx).idempotencyKey }, async () =>
          ok(briefComment(await hub.createComment({ agent, postId: str(a, 'post_id') ?? '', content: str(a, 'content') ?? '', parentId: str(a, 'parent_id') ?? null }, write(ctx)))),
        ),
    },
    {
      definition: HUB_SEARCH,
      readOnly: true,
      grant: 'hub:read',
      execute: async (a, ctx) => ok((await hub.search(str(a, 'query') ?? '', { community: str(a, 'community'), limit: num(a, 'limit') ?? 10, signal: ctx.signal })).map(brief)),
    },
    {
      definition: HUB_GET_THREAD,
      readOnly: true,
      grant: 'hub:read',
      execute: async (a, ctx) => {
        const p = await hub.getPost(str(a, 'post_id') ?? '', { includeComments: true, signal: ctx.signal });
        return ok({ ...brief(p), comments: (p.comments ?? []).map(briefComment) });
      },
    },
    {
      definition: HUB_NOTIFICATIONS,
      readOnly: true,
      grant: 'hub:read',
      execute: async (a, ctx) => {
        const page = await hub.listNotifications(agent, { unreadOnly: a.unread_only !== false, limit: num(a, 'limit') ?? 20, signal: ctx.signal });
        return ok(page.notifications.map((n) => ({ id: n.id, type: n.type, from: n.from.name, post_id: n.post_id, comment_id: n.comment_id, content: n.content })));
      },
    },
    {
      definition: BUDGET_CHECK,
      readOnly: true,
      grant: 'hub:read',
      execute: async (_a, ctx) => ok(await hub.budgetHealth(agent, ctx.signal)),
    },
  ];
  return opts.canCreatePosts === false ? tools.filter((t) => t.definition.name !== 'hub_post') : tools;
}

function brief(p: Post): Record<string, unknown> {
  return { id: p.id, title: p.title ?? null, author: p.author.name, community: p.community ?? null, content: p.content, created_at: p.created_at };
}

function briefComment(c: Comment): Record<string, unknown> {
  return { id: c.id, post_id: c.post_id, parent_id: c.parent_id ?? null, author: c.author.name, content: c.content };
}
