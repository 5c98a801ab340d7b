// What warren remembers about Moltbook in Redis, since the hub keeps neither: notifications found but not yet
// handled (so a post marked read on the hub never loses an unhandled sibling), the ones handled, and the
// write ledger (by warren's idempotency key: whether a write may have happened, and what it was).
import { createHash } from 'node:crypto';
import type { RedisKeys } from '../../redis/keys.ts';
import { keyLayout, type KeyLayout, type KeySpace } from '../../redis/key-layout.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import type { WriteHistory } from './write-limits.ts';
import { HANDLED_TTL_SECONDS, PendingNotifications } from '../pending-notifications.ts';

const LEDGER_TTL_SECONDS = 7 * 86_400;
/** Housekeeping only: each intent to read a thread again carries its own deadline (recheckLater). */
const RECHECK_TTL_SECONDS = 2 * 86_400;

export interface LedgerEntry {
  state: 'sending' | 'unverified' | 'done';
  agent: string;
  /** `message`: a DM sent into a conversation. */
  kind: 'comment' | 'post' | 'message';
  postId?: string;
  contentHash: string;
  /** The created comment or post, once known. */
  id?: string;
  verificationCode?: string;
  challenge?: string;
  expiresAt?: string;
}

/** An intent to read a thread again as kept in Redis (`since|deadline`, epoch ms); undefined when unreadable. */
function parseRecheck(value: unknown): { since: number; deadline: number } | undefined {
  if (typeof value !== 'string') return undefined;
  const [since, deadline] = value.split('|').map(Number);
  return Number.isFinite(since) && Number.isFinite(deadline) ? { since: since!, deadline: deadline! } : undefined;
}

/** The same text in the same thread is one text, whatever its surrounding white space. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text.trim().replace(/\s+/g, ' ')).digest('hex').slice(0, 32);
}

export class MoltbookState extends PendingNotifications {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;
  /** The write ledger's keys: by idempotency key, fleet-wide. */
  readonly #home: RedisKeys;

  constructor(redis: RedisClient, space: KeySpace) {
    const layout = keyLayout(space);
    super(redis, { pending: (a) => layout.of(a).moltbookPending(a), handled: (a) => layout.of(a).moltbookHandled(a) });
    this.#redis = redis;
    this.#layout = layout;
    this.#home = layout.home;
  }

  /** An agent's own keys: its shard's. */
  #keys(agent: string): RedisKeys {
    return this.#layout.of(agent);
  }

  /** Pending notifications and threads still to be read again: what wakes the agent, besides the hub's count. */
  async workCount(agent: string): Promise<number> {
    const keys = this.#keys(agent);
    // Two plain commands, sent together: a MULTI would build a pipeline object for each agent at each intake round.
    const [pending, rechecks] = await Promise.all([this.#redis.hlen(keys.moltbookPending(agent)), this.#redis.hlen(keys.moltbookRecheck(agent))]);
    return pending + rechecks;
  }

  /**
   * Before a post is marked read on the hub: its thread is to be read again for comments from `since` (epoch ms) on,
   * until `deadline` (epoch ms). An earlier intent for the post is kept, deadline and all: its `since` is older, so
   * it covers this one. Returns the `since` the read must start from (the kept one).
   */
  async recheckLater(agent: string, postId: string, since: number, deadline: number): Promise<number> {
    const key = this.#keys(agent).moltbookRecheck(agent);
    const replies = await this.#redis.multi().hsetnx(key, postId, `${since}|${deadline}`).hget(key, postId).expire(key, RECHECK_TTL_SECONDS).exec();
    return parseRecheck(replies?.[1]?.[1])?.since ?? since;
  }

  /** Threads still to be read again (post → since, epoch ms); those past their deadline at `now` are dropped and named. */
  async rechecks(agent: string, now: number): Promise<{ due: Map<string, number>; expired: string[] }> {
    const key = this.#keys(agent).moltbookRecheck(agent);
    const due = new Map<string, number>();
    const expired: string[] = [];
    for (const [post, value] of Object.entries(await this.#redis.hgetall(key))) {
      const r = parseRecheck(value);
      if (r && r.deadline > now) due.set(post, r.since);
      else expired.push(post);
    }
    if (expired.length) await this.#redis.hdel(key, ...expired);
    return { due, expired };
  }

  async recheckDone(agent: string, postId: string): Promise<void> {
    await this.#redis.hdel(this.#keys(agent).moltbookRecheck(agent), postId);
  }

  /** A post the agent commented on: exploration skips it (a model call would only end in a duplicate). */
  async markAnswered(agent: string, postId: string): Promise<void> {
    const key = this.#keys(agent).moltbookAnswered(agent);
    await this.#redis.multi().sadd(key, postId).expire(key, HANDLED_TTL_SECONDS).exec();
  }

  async answered(agent: string, postIds: readonly string[]): Promise<Set<string>> {
    if (postIds.length === 0) return new Set();
    const flags = await this.#redis.smismember(this.#keys(agent).moltbookAnswered(agent), ...postIds);
    return new Set(postIds.filter((_, i) => flags[i] === 1));
  }

  /** The newest message time (ISO) seen in each of the agent's DM conversations. */
  async dmSeen(agent: string, conversationId: string): Promise<string | undefined> {
    return (await this.#redis.hget(this.#keys(agent).moltbookDmSeen(agent), conversationId)) ?? undefined;
  }

  async setDmSeen(agent: string, conversationId: string, at: string): Promise<void> {
    const key = this.#keys(agent).moltbookDmSeen(agent);
    await this.#redis.multi().hset(key, conversationId, at).expire(key, HANDLED_TTL_SECONDS).exec();
  }

  async ledger(key: string): Promise<LedgerEntry | undefined> {
    const v = await this.#redis.get(this.#home.moltbookWrite(key));
    return v ? (JSON.parse(v) as LedgerEntry) : undefined;
  }

  async setLedger(key: string, e: LedgerEntry): Promise<void> {
    await this.#redis.set(this.#home.moltbookWrite(key), JSON.stringify(e), 'EX', LEDGER_TTL_SECONDS);
  }

  /** Claims a one-off action (a vote, a follow) by its key: false when it was claimed before (done, or maybe). */
  async claimAction(key: string): Promise<boolean> {
    return (await this.#redis.set(this.#home.moltbookWrite(key), JSON.stringify({ state: 'sending' }), 'EX', LEDGER_TTL_SECONDS, 'NX')) !== null;
  }

  async forgetLedger(key: string): Promise<void> {
    await this.#redis.del(this.#home.moltbookWrite(key));
  }

  /** Consecutive failed challenges of an agent (ten in a row suspend it on Moltbook). */
  async challengeFailed(agent: string): Promise<number> {
    return this.#redis.incr(this.#keys(agent).moltbookChallengeFailures(agent));
  }

  async challengePassed(agent: string): Promise<void> {
    await this.#redis.del(this.#keys(agent).moltbookChallengeFailures(agent));
  }

  async writeHistory(agent: string, day: string): Promise<WriteHistory> {
    const [post, comment, count] = await this.#redis.mget(this.#keys(agent).moltbookLastWrite(agent, 'post'), this.#keys(agent).moltbookLastWrite(agent, 'comment'), this.#keys(agent).moltbookCommentsOn(agent, day));
    return { lastPostAt: post ? Number(post) : undefined, lastCommentAt: comment ? Number(comment) : undefined, commentsToday: Number(count ?? 0) };
  }

  /**
   * Takes a write's place before its POST: its time for the cooldown, and for a comment one of the day's
   * comments (counted up first, so two writes at once cannot both take the last one). False: the cap is reached.
   */
  async reserveWrite(agent: string, kind: 'post' | 'comment', now: number, day: string, commentsPerDay: number): Promise<boolean> {
    if (kind === 'comment') {
      const count = this.#keys(agent).moltbookCommentsOn(agent, day);
      const [[, n]] = (await this.#redis.multi().incr(count).expire(count, 2 * 86_400).exec()) as [[null, number]];
      if (n > commentsPerDay) {
        await this.#redis.decr(count);
        return false;
      }
    }
    await this.#redis.set(this.#keys(agent).moltbookLastWrite(agent, kind), String(now), 'EX', 86_400);
    return true;
  }

  /** A write the hub refused (nothing created) gives its place in the day's count back. */
  async releaseWrite(agent: string, kind: 'post' | 'comment', day: string): Promise<void> {
    if (kind === 'comment') await this.#redis.decr(this.#keys(agent).moltbookCommentsOn(agent, day));
  }
}
