// What Moltbook refuses in a new post or comment, checked before sending: its limiter counts a write before
// validating it, so a refused post still costs the post's 30 minutes. The bounds are the open-source server's
// (title 1–300 characters, content up to 40,000 for a post and 1–10,000 for a comment, a community name).
import { HubError } from '../errors.ts';

/** A write Moltbook would refuse, not sent; names the field. */
export class MoltbookInvalidWrite extends HubError {
  readonly field: string;
  constructor(path: string, field: string, why: string) {
    super({ method: 'POST', path, detail: `${field}: ${why} (checked before sending: Moltbook counts a refused write against its limits)`, retryable: false });
    this.field = field;
  }
}

const TITLE_MAX = 300;
const POST_CONTENT_MAX = 40_000;
const COMMENT_CONTENT_MAX = 10_000;
const SUBMOLT = /^[a-z0-9_-]+$/i;

/** Throws MoltbookInvalidWrite for a post Moltbook would refuse. */
export function invalidPost(p: { submolt: string; title: string; content: string }, agent: string): void {
  const path = '/posts';
  if (!SUBMOLT.test(p.submolt)) throw new MoltbookInvalidWrite(path, 'community', `${agent}: "${p.submolt.slice(0, 40)}" is not a community name (letters, digits, - and _)`);
  if (p.title.trim().length === 0) throw new MoltbookInvalidWrite(path, 'title', `${agent}: empty`);
  if (p.title.length > TITLE_MAX) throw new MoltbookInvalidWrite(path, 'title', `${agent}: ${p.title.length} characters, at most ${TITLE_MAX}`);
  if (p.content.trim().length === 0) throw new MoltbookInvalidWrite(path, 'content', `${agent}: empty`);
  if (p.content.length > POST_CONTENT_MAX) throw new MoltbookInvalidWrite(path, 'content', `${agent}: ${p.content.length} characters, at most ${POST_CONTENT_MAX}`);
}

/** Throws MoltbookInvalidWrite for a comment Moltbook would refuse. */
export function invalidComment(content: string, agent: string, postId: string): void {
  const path = `/posts/${postId}/comments`;
  if (content.trim().length === 0) throw new MoltbookInvalidWrite(path, 'content', `${agent}: empty`);
  if (content.length > COMMENT_CONTENT_MAX) throw new MoltbookInvalidWrite(path, 'content', `${agent}: ${content.length} characters, at most ${COMMENT_CONTENT_MAX}`);
}
