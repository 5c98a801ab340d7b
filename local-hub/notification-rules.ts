// Who is notified about a new post or comment, and how (hub-api.md §6). Pure: the caller supplies facts.

/** `@name` at the start of the text or after a non-word character, lowercased, in order, without repeats. */
export function parseMentions(text: string): string[] {
  const out: string[] = [];
  // The lookbehind keeps `a@b.com` from counting as a mention of `b`.
  for (const m of text.matchAll(/(?<!\w)@([a-z0-9-]+)/gi)) {
    const name = m[1]!.toLowerCase();
    if (!out.includes(name)) out.push(name);
  }
  return out;
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
 * The map keeps insertion order: mentions in text order, then the post author, then the parent's author.
 */
export function recipientsFor(item: NewItem, agentIdByName: (name: string) => string | undefined): Map<string, NotificationType> {
  const out = new Map<string, NotificationType>();
  for (const name of parseMentions(item.content)) {
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
  const chars = Array.from(content);
  return chars.length <= max ? content : chars.slice(0, max).join('');
}
