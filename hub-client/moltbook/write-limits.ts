// Moltbook's posting limits, kept locally so the hub's 429s are the exception: one post per 30 min, one
// comment per 20 s, 50 comments a day; agents younger than 24 h: one post per 2 h, 60 s between comments,
// 20 comments a day. Pure: the agent's history and the clock in, a verdict out.

export interface WriteLimits {
  postGapMs: number;
  commentGapMs: number;
  commentsPerDay: number;
}

export const ESTABLISHED_LIMITS: WriteLimits = { postGapMs: 30 * 60_000, commentGapMs: 20_000, commentsPerDay: 50 };
export const NEW_AGENT_LIMITS: WriteLimits = { postGapMs: 2 * 3_600_000, commentGapMs: 60_000, commentsPerDay: 20 };
const NEW_AGENT_MS = 24 * 3_600_000;

export interface AgeLimits {
  established: WriteLimits;
  newAgent: WriteLimits;
}

export const DEFAULT_AGE_LIMITS: AgeLimits = { established: ESTABLISHED_LIMITS, newAgent: NEW_AGENT_LIMITS };

/** An agent whose age is unknown is held to the stricter limits. */
export function limitsForAge(createdAtMs: number | undefined, now: number, limits: AgeLimits = DEFAULT_AGE_LIMITS): WriteLimits {
  return createdAtMs !== undefined && now - createdAtMs >= NEW_AGENT_MS ? limits.established : limits.newAgent;
}

export interface WriteHistory {
  lastPostAt?: number;
  lastCommentAt?: number;
  commentsToday: number;
}

export type WriteVerdict = { kind: 'go' } | { kind: 'wait'; ms: number } | { kind: 'capped'; untilMs: number };

/** The start of the next UTC day: when the daily comment count starts again. */
export function nextUtcDay(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

export function writeVerdict(kind: 'post' | 'comment', h: WriteHistory, limits: WriteLimits, now: number): WriteVerdict {
  if (kind === 'comment' && h.commentsToday >= limits.commentsPerDay) return { kind: 'capped', untilMs: nextUtcDay(now) };
  const last = kind === 'post' ? h.lastPostAt : h.lastCommentAt;
  const gap = kind === 'post' ? limits.postGapMs : limits.commentGapMs;
  if (last !== undefined && now - last < gap) return { kind: 'wait', ms: last + gap - now };
  return { kind: 'go' };
}

/** Comments the agent may still write today. */
export function commentsLeft(h: WriteHistory, limits: WriteLimits): number {
  return Math.max(0, limits.commentsPerDay - h.commentsToday);
}
