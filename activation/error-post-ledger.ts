// Remembers which error posts an agent made in the last hour, by fingerprint, so a repeat becomes a counter on
// the first post instead of a new post. Shared through Redis: every worker sees the same first post.
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisClient } from '../redis/scripts.ts';

export type ErrorPostClaim =
  /** The first of its kind in the window: post it, then `remember` the post's id. */
  | { first: true }
  /** A repeat: `count` includes this one; `postId` is unknown while the first post is still being made. */
  | { first: false; count: number; postId: string | undefined; firstAt: number };

export interface ErrorPostLedger {
  claim(agent: string, fingerprint: string, windowMs: number, at?: number): Promise<ErrorPostClaim>;
  remember(agent: string, fingerprint: string, postId: string): Promise<void>;
  /** The first post could not be made: the next occurrence posts instead. */
  forget(agent: string, fingerprint: string): Promise<void>;
}

export class RedisErrorPostLedger implements ErrorPostLedger {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;

  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
  }

  #key(agent: string, fingerprint: string): string {
    return this.#layout.of(agent).errorPosts(agent, fingerprint);
  }

  async claim(agent: string, fingerprint: string, windowMs: number, at = Date.now()): Promise<ErrorPostClaim> {
    const key = this.#key(agent, fingerprint);
    // The expiry is set in the same transaction (NX: only by the first), so no crash can leave the key for ever.
    // The fields a repeat needs are read in the same round trip.
    const [[, count], , , [, [postId, firstAt]]] = (await this.#redis.multi().hincrby(key, 'count', 1).hsetnx(key, 'first_at', at).pexpire(key, windowMs, 'NX').hmget(key, 'post', 'first_at').exec()) as [
      [Error | null, number],
      unknown,
      unknown,
      [Error | null, [string | null, string | null]],
    ];
    if (count === 1) return { first: true };
    return { first: false, count, postId: postId ?? undefined, firstAt: Number(firstAt ?? at) };
  }

  async remember(agent: string, fingerprint: string, postId: string): Promise<void> {
    await this.#redis.hset(this.#key(agent, fingerprint), 'post', postId);
  }

  async forget(agent: string, fingerprint: string): Promise<void> {
    await this.#redis.del(this.#key(agent, fingerprint));
  }
}

/** The same rules in memory, for tests of the pipeline without Redis. */
export class MemoryErrorPostLedger implements ErrorPostLedger {
  readonly #rows = new Map<string, { count: number; postId?: string; firstAt: number; until: number }>();

  claim(agent: string, fingerprint: string, windowMs: number, at = Date.now()): Promise<ErrorPostClaim> {
    const key = `${agent}\u0000${fingerprint}`;
    const row = this.#rows.get(key);
    if (!row || row.until <= at) {
      this.#rows.set(key, { count: 1, firstAt: at, until: at + windowMs });
      return Promise.resolve({ first: true });
    }
    row.count++;
    return Promise.resolve({ first: false, count: row.count, postId: row.postId, firstAt: row.firstAt });
  }

  remember(agent: string, fingerprint: string, postId: string): Promise<void> {
    const row = this.#rows.get(`${agent}\u0000${fingerprint}`);
    if (row) row.postId = postId;
    return Promise.resolve();
  }

  forget(agent: string, fingerprint: string): Promise<void> {
    this.#rows.delete(`${agent}\u0000${fingerprint}`);
    return Promise.resolve();
  }
}
