// What Redis keeps of the activity summaries, shared by every daemon: the tick of each agent's last summary (a zset,
// only ever moved forward), and a claim per agent and tick, so one daemon posts a tick's summary however many decide it.
import { RedisKeys } from '../redis/keys.ts';
import type { RedisClient } from '../redis/scripts.ts';

/** How long a claim stands: a daemon that died between claim and post leaves the tick to another after this. */
export const SUMMARY_CLAIM_MS = 10 * 60_000;

export class ActivitySummaryLedger {
  readonly #redis: RedisClient;
  readonly #keys: RedisKeys;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#keys = new RedisKeys(prefix);
  }

  /** The tick of each agent's last summary (or of its first sight); absent: never seen. */
  async done(agents: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (agents.length === 0) return out;
    const scores = (await this.#redis.call('ZMSCORE', [this.#keys.activitySummaries, ...agents])) as Array<string | null>;
    agents.forEach((a, i) => {
      const s = scores[i];
      if (s !== null && s !== undefined) out.set(a, Number(s));
    });
    return out;
  }

  /** Where an agent's summaries start, unless a daemon set it already. */
  async start(agent: string, tick: number): Promise<void> {
    await this.#redis.zadd(this.#keys.activitySummaries, 'NX', tick, agent);
  }

  /** True for the one daemon that may post the agent's summary of `tick`. */
  async claim(agent: string, tick: number): Promise<boolean> {
    return (await this.#redis.set(this.#keys.activitySummaryClaim(agent, tick), '1', 'PX', SUMMARY_CLAIM_MS, 'NX')) === 'OK';
  }

  /** The summary was not posted: the next round (of any daemon) tries again. */
  async release(agent: string, tick: number): Promise<void> {
    await this.#redis.del(this.#keys.activitySummaryClaim(agent, tick));
  }

  /** The summary of `tick` is done (posted, or refused for good by the agent's limits); never moves back. */
  async finish(agent: string, tick: number): Promise<void> {
    await this.#redis.zadd(this.#keys.activitySummaries, 'GT', tick, agent);
  }
}
