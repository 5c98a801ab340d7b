// Moltbook's wire shapes, read tolerantly (every field optional, variants accepted) and turned into warren's
// Post and Comment. Only the fields named here are ever read: server-written advice (`what_to_do_next`,
// `suggested_actions`, `quick_links`, `instructions`, `_model_guide` …) is dropped at this edge and cannot
// reach a prompt.
import { z } from 'zod';
import type { Comment, Post } from '../types.ts';

const str = z.string();
const idLike = z.union([z.string(), z.number()]).transform(String);

const AuthorSchema = z.union([
  z.looseObject({ id: idLike.optional(), name: str.optional(), username: str.optional() }),
  z.string().transform((name) => ({ id: undefined, name, username: undefined })),
]);

export const WirePostSchema = z.looseObject({
  id: idLike,
  title: str.nullish(),
  content: str.nullish(),
  body: str.nullish(),
  submolt: z.union([z.string(), z.looseObject({ name: str.optional() })]).nullish(),
  submolt_name: str.nullish(),
  author: AuthorSchema.nullish(),
  author_name: str.nullish(),
  created_at: str.nullish(),
  comment_count: z.number().nullish(),
});
export type WirePost = z.infer<typeof WirePostSchema>;

export interface WireComment {
  id: string;
  post_id?: string | null;
  parent_id?: string | null;
  content?: string | null;
  author?: { id?: string; name?: string; username?: string } | null;
  author_name?: string | null;
  created_at?: string | null;
  replies?: WireComment[];
}

export const WireCommentSchema: z.ZodType<WireComment> = z.lazy(() =>
  z.looseObject({
    id: idLike,
    post_id: idLike.nullish(),
    parent_id: idLike.nullish(),
    content: str.nullish(),
    author: AuthorSchema.nullish(),
    author_name: str.nullish(),
    created_at: str.nullish(),
    replies: z.array(WireCommentSchema).optional(),
  }),
);

export const VerificationSchema = z.looseObject({
  verification_code: str,
  challenge_text: str,
  expires_at: str.nullish(),
});
export type Verification = z.infer<typeof VerificationSchema>;

export const HomeSchema = z.looseObject({
  your_account: z.looseObject({ name: str.optional(), unread_notification_count: z.number().optional() }).nullish(),
  activity_on_your_posts: z
    .array(z.looseObject({ post_id: idLike, new_notification_count: z.number().optional() }))
    .nullish()
    .transform((v) => v ?? []),
});
export type Home = z.infer<typeof HomeSchema>;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The object of a success answer: under one of the documented keys, or the body itself. */
export function unwrapMoltbookObject(body: unknown, keys: readonly string[]): unknown {
  if (!isRecord(body)) return body;
  for (const k of [...keys, 'data']) if (isRecord(body[k])) return body[k];
  return body;
}

/** The list of a success answer: under one of the documented keys (`posts`, `comments`, `results`, `data`), or bare. */
export function unwrapMoltbookList(body: unknown, keys: readonly string[]): unknown[] | undefined {
  if (Array.isArray(body)) return body as unknown[];
  if (!isRecord(body)) return undefined;
  for (const k of [...keys, 'results', 'data']) {
    const v = body[k];
    if (Array.isArray(v)) return v as unknown[];
    // `data` may itself hold the named list.
    if (isRecord(v)) for (const kk of keys) if (Array.isArray(v[kk])) return v[kk] as unknown[];
  }
  return undefined;
}

/** `verification_required` with its challenge, found beside the object or inside it. */
export function verificationOf(body: unknown, keys: readonly string[]): Verification | undefined {
  const places = [body, unwrapMoltbookObject(body, keys)];
  for (const p of places) {
    if (!isRecord(p)) continue;
    const v = VerificationSchema.safeParse(p.verification);
    if (v.success && p.verification_required !== false) return v.data;
  }
  return undefined;
}

const epoch = new Date(0).toISOString();
const time = (s: string | null | undefined): string => (s && !Number.isNaN(Date.parse(s)) ? s : epoch);
const authorRef = (a: WirePost['author'], fallbackName: string | null | undefined): { id: string; name: string } => {
  const name = a?.name ?? a?.username ?? fallbackName ?? 'unknown';
  return { id: a?.id ?? name, name };
};

export function toPost(w: WirePost): Post {
  const community = typeof w.submolt === 'string' ? w.submolt : (w.submolt?.name ?? w.submolt_name ?? null);
  return {
    id: w.id,
    title: w.title ?? null,
    author: authorRef(w.author, w.author_name),
    content: w.content ?? w.body ?? '',
    community: community ? community.replace(/^m\//, '') : null,
    created_at: time(w.created_at),
    ...(typeof w.comment_count === 'number' ? { comment_count: w.comment_count } : {}),
  };
}

/** A comment tree, flattened newest-first at each level, each comment naming its parent. */
export function flattenComments(tree: readonly WireComment[], postId: string, parentId: string | null = null): Comment[] {
  const out: Comment[] = [];
  for (const c of tree) {
    out.push({ id: c.id, post_id: c.post_id ?? postId, parent_id: c.parent_id ?? parentId, author: authorRef(c.author, c.author_name), content: c.content ?? '', created_at: time(c.created_at) });
    out.push(...flattenComments(c.replies ?? [], postId, c.id));
  }
  return out;
}

/** An agent's creation time (epoch ms) from /agents/me: `created_at` (published API) or `createdAt` (open-source server). */
export function createdAtOf(agent: unknown): number | undefined {
  if (!isRecord(agent)) return undefined;
  for (const v of [agent.created_at, agent.createdAt]) {
    const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
    if (!Number.isNaN(ms)) return ms;
  }
  return undefined;
}

/** What a list answer says about its next page: `has_more`, and `next_cursor` when the server pages by cursor. */
export function pageInfoOf(body: unknown): { hasMore?: boolean; nextCursor?: string } {
  if (!isRecord(body)) return {};
  const hasMore = typeof body.has_more === 'boolean' ? body.has_more : undefined;
  const cursor = typeof body.next_cursor === 'string' && body.next_cursor ? body.next_cursor : undefined;
  return { ...(hasMore === undefined ? {} : { hasMore }), ...(cursor ? { nextCursor: cursor } : {}) };
}

/**
 * How long a 429 asks to wait: `retry_after_seconds`, `retry_after_minutes`, `retryAfter` (seconds, the
 * open-source server's body), or the Retry-After header; the longest wins.
 */
export function retryAfterMsOf(body: unknown, retryAfterHeader: string | undefined, now = Date.now()): number | undefined {
  const waits: number[] = [];
  if (isRecord(body)) {
    const s = Number(body.retry_after_seconds);
    const m = Number(body.retry_after_minutes);
    const camel = Number(body.retryAfter);
    if (body.retryAfter !== undefined && Number.isFinite(camel) && camel >= 0) waits.push(camel * 1000);
    if (body.retry_after_seconds !== undefined && Number.isFinite(s) && s >= 0) waits.push(s * 1000);
    if (body.retry_after_minutes !== undefined && Number.isFinite(m) && m >= 0) waits.push(m * 60_000);
  }
  if (retryAfterHeader) {
    const secs = Number(retryAfterHeader);
    if (Number.isFinite(secs)) waits.push(Math.max(0, secs * 1000));
    else if (!Number.isNaN(Date.parse(retryAfterHeader))) waits.push(Math.max(0, Date.parse(retryAfterHeader) - now));
  }
  return waits.length ? Math.max(...waits) : undefined;
}
