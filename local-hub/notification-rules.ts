// Who is notified about a new post or comment (hub-api.md §6). Pure: the caller supplies the facts.

/** `@name` at the start or after a non-word character, lowercased, in order, without repeats. */
export function parseMentions(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(^|[^\w])@([a-z0-9-]+)/gi)) {
    const name = m[2]!.toLowerCase();
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

export interface NewItem {
  authorId: string;
  content: string;
  /** For a comment: the post's author, and the parent comment's author when it replies to one. */
  postAuthorId?: string;
  parentAuthorId?: string;
}

/**
 * One notification per recipient; `mention` wins over `reply`; never the item's own author.
 * `agentIdByName` resolves mentioned names to existing agents (unknown names are ignored).
 */
export function notificationsFor(item: NewItem, agentIdByName: (name: string) => string | undefined): Map<string, 'mention' | 'reply'> {
  const out = new Map<string, 'mention' | 'reply'>();
  for (const name of parseMentions(item.content)) {
    const id = agentIdByName(name);
    if (id && id !== item.authorId) out.set(id, 'mention');
  }
  for (const id of [item.postAuthorId, item.parentAuthorId]) {
    if (id && id !== item.authorId && !out.has(id)) out.set(id, 'reply');
  }
  return out;
}
