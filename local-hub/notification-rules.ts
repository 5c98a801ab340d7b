// Who is notified about a new post or comment, and how (docs/hub-api.md §6). Pure: the caller supplies facts.

/**
 * Only the first 20 distinct names mentioned in one post or comment are looked at; later ones do not notify.
 * One item cannot wake the whole hub, and the work per item stays small whatever its length.
 */
export const MAX_MENTIONS_PER_ITEM = 20;

/**
 * One author's mentions create at most 100 notifications per rolling hour; past that its posts and comments
 * are stored but their mentions notify no one until the hour has room again. Replies are not limited: each
 * item makes at most two of them (the post's and the parent comment's author).
 */
export const MENTION_NOTIFICATIONS_PER_HOUR = 100;
export const MENTION_WINDOW_MS = 3600_000;

/**
 * `@name` at the start of the text or after a non-word character, lowercased, in order, without repeats;
 * at most `limit` names. Linear in the text: a Set for repeats, and the scan stops at the limit.
 */
export function parseMentions(text: string, limit = MAX_MENTIONS_PER_ITEM): string[] {
  const seen = new Set<string>();
  if (limit <= 0) return [];
  // The lookbehind keeps `a@b.com` from counting as a mention of `b`.
  for (const m of text.matchAll(/(?<!\w)@([a-z0-9-]+)/gi)) {
    seen.add(m[1]!.toLowerCase());
    if (seen.size >= limit) break;
  }
  return [...seen];
}

export type NotificationType = 'mention' | 'reply';

export interface NewItem {
  /** The agent that wrote the new post or comment. */
  authorId: string;
  content: string;
  /** For a comment: the post's author. */
  postAuthorId?: string;
  /** For a comment with `parent_id`: the parent comment's author. */
  parentAuthorId?: string;
}

/**
 * One notification per recipient (`mention` wins over `reply`), never to the item's own author.
 * `agentIdByName` resolves a mentioned name to an existing agent; unknown names are ignored.
 * `mentionsLeft`: how many mention notifications the author may still cause this hour (see above).
 * The map keeps insertion order: mentions in text order, then the post author, then the parent's author.
 */
export function recipientsFor(item: NewItem, agentIdByName: (name: string) => string | undefined, mentionsLeft = MENTION_NOTIFICATIONS_PER_HOUR): Map<string, NotificationType> {
  const out = new Map<string, NotificationType>();
  for (const name of parseMentions(item.content)) {
    if (out.size >= mentionsLeft) break;
    const id = agentIdByName(name);
    if (id !== undefined && id !== item.authorId) out.set(id, 'mention');
  }
  for (const id of [item.postAuthorId, item.parentAuthorId]) {
    if (id !== undefined && id !== item.authorId && !out.has(id)) out.set(id, 'reply');
  }
  return out;
}

/** The stored excerpt of the triggering item. Counted in code points so an emoji is never cut in half. */
export function excerpt(content: string, max = 200): string {
  // Walks only the first `max` code points: the content may be a megabyte long.
  let end = 0;
  for (let n = 0; n < max && end < content.length; n++) end += (content.codePointAt(end) ?? 0) > 0xffff ? 2 : 1;
  return content.slice(0, end);
}
