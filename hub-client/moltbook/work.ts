// Which comments on a thread are work for an agent (pure). Moltbook keeps read state per post, not per comment,
// and lists no notification ids: a comment is work when it answers the agent (a top-level comment on its post,
// or a reply to one of its comments), is not the agent's own, and warren has not handled it yet.
import type { Comment, Notification, Post } from '../types.ts';

/** Stable across polls and processes: the post and the comment name it. */
export function notificationId(postId: string, commentId: string): string {
  return `${postId}:${commentId}`;
}

export function postOfNotification(id: string): string | undefined {
  const at = id.lastIndexOf(':');
  return at > 0 ? id.slice(0, at) : undefined;
}

/**
 * The newest `limit` comments that are work, as reply notifications. `limit` is what the hub counts as new on
 * the post: older answers to the agent were there before warren (or were read on the hub) and are not woken.
 */
export function workOnThread(input: { agent: string; postId: string; postAuthor: string | undefined; comments: readonly Comment[]; handled: ReadonlySet<string>; limit: number }): Notification[] {
  const byId = new Map(input.comments.map((c) => [c.id, c]));
  const work = input.comments
    .filter((c) => c.author.name !== input.agent)
    .filter((c) => (c.parent_id ? byId.get(c.parent_id)?.author.name === input.agent : input.postAuthor === input.agent))
    .filter((c) => !input.handled.has(notificationId(input.postId, c.id)))
    .sort((a, b) => b.created_at.localeCompare(a.created_at))
    .slice(0, Math.max(0, input.limit));
  return work
    .map((c) => ({
      id: notificationId(input.postId, c.id),
      type: 'reply' as const,
      post_id: input.postId,
      comment_id: c.id,
      from: c.author,
      content: c.content,
      created_at: c.created_at,
      read: false,
    }))
    .reverse();
}

/** A mention's id: the post and a fixed tail, so the same post never mentions the agent twice. */
export function mentionId(postId: string): string {
  return `${postId}:mention`;
}

/** Whether `text` names `@agent` (case-insensitive, not inside a longer name such as @agent2 or an e-mail). */
export function mentions(text: string, agent: string): boolean {
  const escaped = agent.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_@.])@${escaped}(?![A-Za-z0-9_-])`, 'i').test(text);
}

/** New posts (of the agent's communities) that mention it, not its own, not handled yet: mention notifications. */
export function mentionsIn(input: { agent: string; posts: readonly Post[]; handled: ReadonlySet<string> }): Notification[] {
  return input.posts
    .filter((p) => p.author.name !== input.agent && !input.handled.has(mentionId(p.id)))
    .filter((p) => mentions(`${p.title ?? ''}\n${p.content}`, input.agent))
    .map((p) => ({ id: mentionId(p.id), type: 'mention' as const, post_id: p.id, comment_id: null, from: p.author, content: p.content, created_at: p.created_at, read: false }));
}
