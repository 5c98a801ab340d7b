// Which unread notifications a running activation has already taken. The hub keeps them unread until they
// are answered, so without this the scheduler would queue a follow-up for work already under way, and that
// follow-up would find nothing to do. Claims live in Redis so every scheduler sees every worker's.
import type { Redis } from 'ioredis';

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
  async claim(agent: string, notificationIds: readonly string[], ttlMs: number): Promise<void> {
    if (notificationIds.length === 0) return;
    await this.#redis.multi().sadd(this.#key(agent), ...notificationIds).pexpire(this.#key(agent), ttlMs).exec();
  }

  async release(agent: string): Promise<void> {
    await this.#redis.del(this.#key(agent));
  }

  /** Claimed ids of many agents in one round trip (agents with no claim are left out). */
  async ofMany(agents: readonly string[]): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>();
    if (agents.length === 0) return out;
    const pipe = this.#redis.pipeline();
    for (const a of agents) pipe.smembers(this.#key(a));
    const rows = (await pipe.exec()) ?? [];
    agents.forEach((a, i) => {
      const ids = rows[i]?.[1];
      if (Array.isArray(ids) && ids.length) out.set(a, new Set(ids as string[]));
    });
    return out;
  }
}

/** Whether unread notifications hold anything a running activation has not claimed (pure). */
export function hasUnclaimedWork(unreadIds: readonly string[], claimed: ReadonlySet<string> | undefined): boolean {
  if (!claimed) return unreadIds.length > 0;
  return unreadIds.some((id) => !claimed.has(id));
}
