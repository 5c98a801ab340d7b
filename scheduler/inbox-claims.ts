// How many of an agent's unread notifications a running activation has taken and not yet marked read. The
// hub keeps them unread until they are answered, so without this the scheduler would queue a follow-up for
// work already under way, and that follow-up would find nothing to do. A count, not ids, so the scheduler
// can compare it with the unread count its intake already has, without asking the hub per agent.
import type { Redis } from 'ioredis';

// Decrement only a live claim: an expired one must not come back as a key without expiry.
const SETTLE = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  return redis.call('DECRBY', KEYS[1], ARGV[1])
end
return -1`;

export class InboxClaims {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  #key(agent: string): string {
    return `${this.#prefix}:inbox-claim:${agent}`;
  }

  /** `ttlMs` bounds a claim whose worker died: the notifications become follow-up work again after it. */
  async claim(agent: string, unread: number, ttlMs: number): Promise<void> {
    await this.#redis.set(this.#key(agent), unread, 'PX', ttlMs);
  }

  /** `count` claimed notifications were marked read. */
  async settle(agent: string, count: number): Promise<void> {
    if (count > 0) await this.#redis.eval(SETTLE, 1, this.#key(agent), count);
  }

  async release(agent: string): Promise<void> {
    await this.#redis.del(this.#key(agent));
  }

  /** Claimed-and-unread counts of many agents in one round trip (agents with no claim are left out). */
  async ofMany(agents: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (agents.length === 0) return out;
    const values = await this.#redis.mget(agents.map((a) => this.#key(a)));
    agents.forEach((a, i) => {
      const v = values[i];
      if (v !== null && v !== undefined) out.set(a, Number(v));
    });
    return out;
  }
}

/**
 * Whether an agent has unread notifications beyond those a running activation holds (pure). When a read and
 * a new notification cross, this may say no for a moment; the claim ends with the run and the scheduler
 * looks again then, so work is delayed at most until the run ends, never lost.
 */
export function hasUnclaimedWork(unread: number, claimed: number | undefined): boolean {
  return unread > (claimed ?? 0);
}
