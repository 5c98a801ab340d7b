// Per-agent scheduling state shared through Redis, so schedulers and workers on different machines agree.
import type { Redis } from 'ioredis';

export interface AgentState {
  failures: number;
  lastFailureAt: number | undefined;
}

export class AgentStateStore {
  readonly #redis: Redis;
  readonly #prefix: string;

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  #key(agent: string): string {
    return `${this.#prefix}:agent-state:${agent}`;
  }

  async recordSuccess(agent: string): Promise<void> {
    await this.#redis.hset(this.#key(agent), { failures: 0, last_success_at: Date.now() });
    await this.#redis.hdel(this.#key(agent), 'last_failure_at');
  }

  async recordFailure(agent: string, at = Date.now()): Promise<number> {
    const [[, failures]] = (await this.#redis.multi().hincrby(this.#key(agent), 'failures', 1).hset(this.#key(agent), 'last_failure_at', at).exec()) as [[Error | null, number]];
    return failures;
  }

  /** States of many agents in one round trip. */
  async getMany(agents: readonly string[]): Promise<Map<string, AgentState>> {
    const out = new Map<string, AgentState>();
    if (agents.length === 0) return out;
    const pipe = this.#redis.pipeline();
    for (const a of agents) pipe.hmget(this.#key(a), 'failures', 'last_failure_at');
    const rows = (await pipe.exec()) ?? [];
    agents.forEach((a, i) => {
      const [failures, last] = (rows[i]?.[1] as [string | null, string | null] | undefined) ?? [null, null];
      out.set(a, { failures: Number(failures ?? 0), lastFailureAt: last ? Number(last) : undefined });
    });
    return out;
  }
}
