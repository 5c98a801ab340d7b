// Renders a post and its comments as the model sees them (docs/agent-config.md §5.4): the root always, every
// comment with author, time and what it replies to, multi-line content quoted whole, the new comment marked,
// and, when the thread is over its token budget, the oldest comments left out with a line saying how many.
import type { Comment, Post } from '../hub-client/types.ts';
import { estimateTokens } from './tokens.ts';
import { keepNewest } from './trim.ts';

/** `YYYY-MM-DD HH:MM` in UTC: short, unambiguous, and stable across machines. */
export function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().slice(0, 16).replace('T', ' ');
}

/** Every line quoted, so multi-line content stays inside its comment. */
export function quote(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .trimEnd()
    .split('\n')
    .map((l) => (l ? `> ${l}` : '>'))
    .join('\n');
}

export function communityLabel(community: string | null | undefined): string {
  if (!community) return '';
  return community.startsWith('m/') ? community : `m/${community}`;
}

export interface ThreadOptions {
  newCommentId?: string | null;
  /** Token budget of the whole rendering; unlimited when unset. */
  tokenBudget?: number;
}

export function renderThread(post: Post, opts: ThreadOptions = {}): string {
  const community = communityLabel(post.community);
  const total = opts.tokenBudget ?? Infinity;
  // No single text may crowd out the rest: the post gets at most half the budget, a comment a quarter.
  const head = [
    '## Thread Context',
    '',
    `### ${post.title?.trim() || '(No title)'}`,
    `**${post.author.name}** posted${community ? ` in ${community}` : ''} at ${formatTime(post.created_at)} (post ${post.id}):`,
    quote(clipText(post.content, total / 2)),
  ].join('\n');
  const comments: Comment[] = post.comments ?? [];
  const byId = new Map(comments.map((c) => [c.id, c]));
  const rendered = new Map(comments.map((c) => [c, renderComment({ ...c, content: clipText(c.content, total / 4) }, byId, opts.newCommentId)]));
  const budget = opts.tokenBudget === undefined ? Infinity : opts.tokenBudget - estimateTokens(head) - 30; // 30: the omission lines
  // The new comment and the comment it answers stay whatever their age: without them the task makes no sense.
  const anchor = comments.find((c) => c.id === opts.newCommentId);
  const mustKeep = (c: Comment): boolean => c === anchor || (anchor?.parent_id != null && c.id === anchor.parent_id);
  const { kept } = keepNewest(comments, (c) => estimateTokens(rendered.get(c)!) + 1, budget, mustKeep);

  const blocks = [head];
  let gap = 0;
  for (const c of comments) {
    if (!kept.includes(c)) {
      gap++;
      continue;
    }
    if (gap) blocks.push(omission(gap));
    gap = 0;
    blocks.push(rendered.get(c)!);
  }
  if (gap) blocks.push(omission(gap));
  return blocks.join('\n\n');
}

function renderComment(c: Comment, byId: ReadonlyMap<string, Comment>, newId: string | null | undefined): string {
  const parent = c.parent_id ? byId.get(c.parent_id) : undefined;
  const target = parent ? `replying to ${parent.author.name}'s comment ${parent.id}` : c.parent_id ? `replying to comment ${c.parent_id}` : 'replying to the post';
  const marker = c.id === newId ? ' **[NEW]**' : '';
  return `**${c.author.name}** at ${formatTime(c.created_at)}, ${target} (comment ${c.id})${marker}:\n${quote(c.content)}`;
}

/**
 * A text over `maxTokens` as its head and tail with a line saying how much was left out between them
 * (the start says what it is about, the end often what is asked).
 */
export function clipText(text: string, maxTokens: number): string {
  if (estimateTokens(text) <= maxTokens) return text;
  const room = Math.max(200, Math.floor(maxTokens) * 4 - 120);
  const head = text.slice(0, Math.ceil(room * 0.7));
  const tail = text.slice(text.length - Math.floor(room * 0.3));
  return `${head}\n\n[… ${text.length - head.length - tail.length} characters left out here to fit the context budget …]\n\n${tail}`;
}

function omission(n: number): string {
  return `*[${n} comment${n === 1 ? '' : 's'} left out here to fit the context budget]*`;
}
