// Writing a post or comment together with its notifications (docs/hub-api.md §6): one transaction, and only
// after it commits are long-polls woken and events emitted.
import { randomUUID } from 'node:crypto';
import { invalid, notFound } from './http-error.ts';
import { excerpt, MENTION_NOTIFICATIONS_PER_HOUR, MENTION_WINDOW_MS, recipientsFor, type NewItem } from './notification-rules.ts';
import type { HubServices } from './services.ts';
import { commentView, notificationView, postView, type AgentRow } from './views.ts';

export interface PostInput {
  content: string;
  title: string | null;
  /** Bare community name, or null for the main feed. */
  community: string | null;
  tags: string[];
}

export function publishPost(s: HubServices, author: AgentRow, input: PostInput): Record<string, unknown> {
  return s.tx.run(() => {
    const id = randomUUID();
    const at = s.now().toISOString();
    if (input.community !== null) s.communities.ensure(input.community, null, at); // created on first use
    s.posts.insert({ id, author_id: author.id, title: input.title, content: input.content, community: input.community, tags: input.tags.length ? JSON.stringify(input.tags) : null, created_at: at });
    s.agents.markActive(author.id, at);
    const post = postView(s.posts.byId(id)!);
    s.tx.afterCommit(() => s.events.emit('post', post)); // the item first, then its notifications
    notify(s, { authorId: author.id, content: input.content }, { postId: id, commentId: null, at });
    return post;
  });
}

export function publishComment(s: HubServices, author: AgentRow, postId: string, input: { content: string; parentId: string | null }): Record<string, unknown> {
  return s.tx.run(() => {
    const post = s.posts.byId(postId);
    if (!post) throw notFound(`post ${postId}`);
    let parentAuthorId: string | undefined;
    if (input.parentId !== null) {
      const parent = s.posts.commentById(input.parentId);
      if (!parent || parent.post_id !== postId) throw invalid(`parent_id ${input.parentId} is not a comment on post ${postId}`);
      parentAuthorId = parent.author_id;
    }
    const id = randomUUID();
    const at = s.now().toISOString();
    s.posts.insertComment({ id, post_id: postId, parent_id: input.parentId, author_id: author.id, content: input.content, created_at: at });
    s.posts.countComment(postId, at);
    s.agents.markActive(author.id, at);
    const comment = commentView(s.posts.commentById(id)!);
    s.tx.afterCommit(() => s.events.emit('comment', comment));
    notify(s, { authorId: author.id, content: input.content, postAuthorId: post.author_id, parentAuthorId }, { postId, commentId: id, at });
    return comment;
  });
}

/** Inserts the notifications the rules call for; wakes long-polls after commit when there were any. */
function notify(s: HubServices, item: NewItem, where: { postId: string; commentId: string | null; at: string }): void {
  const since = new Date(Date.parse(where.at) - MENTION_WINDOW_MS).toISOString();
  const mentionsLeft = Math.max(0, MENTION_NOTIFICATIONS_PER_HOUR - s.notifications.mentionsFromSince(item.authorId, since));
  const recipients = recipientsFor(item, (name) => s.agents.byName(name)?.id, mentionsLeft);
  const content = excerpt(item.content);
  const created = [...recipients].map(([agentId, type]) => ({
    agentId,
    row: s.notifications.insert({ id: randomUUID(), agent_id: agentId, type, post_id: where.postId, comment_id: where.commentId, from_id: item.authorId, content, created_at: where.at }),
  }));
  if (created.length === 0) return;
  s.tx.afterCommit(() => {
    s.work.wake();
    for (const { agentId, row } of created) {
      const agent = s.agents.byId(agentId);
      s.events.emit('notification', { agent: { id: agentId, name: agent?.name ?? agentId }, notification: notificationView(row) });
    }
  });
}
