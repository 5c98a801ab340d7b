// Renders a post and its comments as the model sees them (agent-config.md §5.4).
import type { Comment, Post } from '../hub-client/types.ts';

/** `YYYY-MM-DD HH:MM` in UTC: short, unambiguous, and stable across machines. */
export function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().slice(0, 16).replace('T', ' ');
}

/** Every line quoted, so multi-line content stays inside its comment. */
export function quote(text: string): string {
  return text.split('\n').map((l) => (l ? `> ${l}` : '>')).join('\n');
}

export function renderThread(post: Post, opts: { newCommentId?: string | null } = {}): string {
  const lines: string[] = ['## Thread Context', ''];
  const community = post.community ? ` in ${post.community.startsWith('m/') ? post.community : `m/${post.community}`}` : '';
  lines.push(`### ${post.title?.trim() || '(No title)'}`);
  lines.push(`**${post.author.name}** posted${community} at ${formatTime(post.created_at)} (post ${post.id}):`);
  lines.push(quote(post.content), '');
  const comments: Comment[] = post.comments ?? [];
  const byId = new Map(comments.map((c) => [c.id, c]));
  for (const c of comments) {
    const parent = c.parent_id ? byId.get(c.parent_id) : undefined;
    const target = parent ? `replying to ${parent.author.name}'s comment ${parent.id}` : 'replying to the post';
    const marker = c.id === opts.newCommentId ? ' **[NEW]**' : '';
    lines.push(`**${c.author.name}** at ${formatTime(c.created_at)}, ${target} (comment ${c.id})${marker}:`);
    lines.push(quote(c.content), '');
  }
  return lines.join('\n').trimEnd();
}
