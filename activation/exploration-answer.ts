// Reading an exploration answer given as text: `REPLY TO <post id>` on the first line, the comment below.
// (Agents with hub tools post by themselves; this is the path for plain-text answers.)

export type ExplorationAnswer = { kind: 'reply'; postId: string; content: string } | { kind: 'none'; why: string };

const HEADER = /^\s*(?:\*\*)?REPLY TO:?\s+(?:post\s+)?`?([^\s`*]+)`?(?:\*\*)?\s*$/i;

/** `offered` are the post ids the agent was shown; an answer naming any other post is not posted. */
export function parseExplorationAnswer(text: string, offered: ReadonlySet<string>): ExplorationAnswer {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'NO_ACTION') return { kind: 'none', why: 'no action' };
  const [first = '', ...rest] = trimmed.split('\n');
  const m = HEADER.exec(first);
  if (!m) return { kind: 'none', why: 'the answer does not start with REPLY TO <post id>' };
  const postId = m[1]!;
  if (!offered.has(postId)) return { kind: 'none', why: `post ${postId} was not in the feed` };
  const content = rest.join('\n').trim();
  if (content === '') return { kind: 'none', why: 'empty reply' };
  return { kind: 'reply', postId, content };
}
