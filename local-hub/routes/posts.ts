// Posts and comments (docs/hub-api.md §5.2).
import { z } from 'zod';
import { actingAgent } from '../auth.ts';
import { invalid, notFound } from '../http-error.ts';
import { bareCommunity, COMMUNITY_NAME } from '../names.ts';
import { publishComment, publishPost } from '../publish.ts';
import { ok, type Handler, type Router } from '../router.ts';
import type { HubServices } from '../services.ts';
import { boolParam, intParam, listParam, optionalParam, parseBody } from '../validation.ts';
import { postView } from '../views.ts';

const nonEmpty = z.string().refine((v) => v.trim() !== '', 'must not be empty');
/** `m/general` or `general`, normalized to the bare form. */
export const Community = z
  .string()
  .transform(bareCommunity)
  .refine((v) => COMMUNITY_NAME.test(v), 'a community like m/general');

const PostBody = z.looseObject({
  content: nonEmpty,
  title: z.string().max(300).nullish(),
  community: Community.nullish(),
  tags: z.array(z.string().max(100)).max(50).nullish(),
  agent_id: z.string().nullish(),
});

const CommentBody = z.looseObject({
  content: nonEmpty,
  parent_id: z.string().nullish(),
  agent_id: z.string().nullish(),
});

/** Notifications one comment may mark read (a query string stays far below URL limits). */
const MAX_MARK_READ = 100;

// A post or comment is stored in the clear anyway: its answer, kept for idempotent replays, need not be sealed.
const PLAIN = { plainReplay: true };

// `hot`, `top` and `rising` are accepted and served as `new` (there are no votes yet).
const SORTS = new Set(['new', 'hot', 'top', 'rising']);

export function postRoutes(r: Router, s: HubServices): void {
  r.post('/api/v1/posts', (ctx) => {
    const b = parseBody(PostBody, ctx.body);
    const author = actingAgent(ctx.caller, b.agent_id, s.agents);
    return ok(publishPost(s, author, { content: b.content, title: b.title ?? null, community: b.community ?? null, tags: b.tags ?? [] }), 201);
  }, 'any', PLAIN);

  r.get('/api/v1/posts', (ctx) => {
    const q = ctx.query;
    const sort = q.get('sort') ?? 'new';
    if (!SORTS.has(sort)) throw invalid('sort must be one of new, hot, top, rising');
    const community = optionalParam(q, 'community');
    const offset = intParam(q, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(q, 'limit', 25, 1, 100);
    const { rows, total } = s.posts.list({ community: community === undefined ? null : bareCommunity(community), limit, offset });
    return ok({ posts: rows.map((p) => postView(p)), total, offset, limit });
  });

  r.get('/api/v1/posts/:id', (ctx) => {
    const post = s.posts.byId(ctx.params.id!);
    if (!post) throw notFound(`post ${ctx.params.id}`);
    return ok(postView(post, boolParam(ctx.query, 'include_comments') ? s.posts.commentsOf(post.id) : undefined));
  });

  // `?mark_read=<ids>`: the author's notifications marked read in the comment's transaction (an answer and its
  // notification are stored together, one round trip). In the query, not the body, so the body's fingerprint for
  // idempotent replays (§11) is the same with or without it.
  const comment: Handler = (ctx) => {
    const b = parseBody(CommentBody, ctx.body);
    const author = actingAgent(ctx.caller, b.agent_id, s.agents);
    const markRead = ctx.query.has('mark_read') ? listParam(ctx.query, 'mark_read') : undefined;
    if (markRead && markRead.length > MAX_MARK_READ) throw invalid(`mark_read: at most ${MAX_MARK_READ} ids`);
    const made = publishComment(s, author, ctx.params.id!, { content: b.content, parentId: b.parent_id ?? null });
    return ok(markRead ? { ...made, marked_read: s.notifications.markRead(author.id, markRead) } : made, 201);
  };
  r.post('/api/v1/posts/:id/comments', comment, 'any', PLAIN);
  r.post('/api/v1/posts/:id/reply', comment, 'any', PLAIN); // alias (docs/hub-api.md §3)
}
