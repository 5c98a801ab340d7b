// What Redis keeps of the activity summaries, shared by every daemon: the tick of each agent's last summary (a hash
// per shard, agent → epoch ms), and a claim per agent and tick (in the agent's shard), so one daemon posts a tick's
// summary however many decide it.
//
// The tick is written without compare-and-set (as the schedules' state is): a daemon that posts a tick's summary
// after another posted the next one sets an older tick last; the next round then finds the newer tick due, its claim
// taken (or, after SUMMARY_CLAIM_MS, its post replayed by the hub under the same idempotency key), so nothing is
// posted twice.
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisClient } from '../redis/scripts.ts';
import { FIELDS_PER_COMMAND } from '../redis/agent-pages.ts';

/** How long a claim stands: a daemon that died between claim and post leaves the tick to another after this. */
export const SUMMARY_CLAIM_MS = 10 * 60_000;

export class ActivitySummaryLedger {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;

  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
  }

  /** The tick of each agent's last summary (or of its first sight); absent: never seen. */
  async done(agents: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (agents.length === 0) return out;
    // One HMGET per page of a shard (each shard's hash holds its agents), merged in the caller's order.
    const found = new Map<string, number>();
    await Promise.all(
      this.#layout.byShardInPages(agents, FIELDS_PER_COMMAND).map(async ({ keys, items: names }) => {
        const ticks = (await this.#redis.call('HMGET', [keys.activitySummaries, ...names])) as Array<string | null>;
        names.forEach((a, i) => {
          const t = ticks[i];
          if (t) found.set(a, Number(t));
        });
      }),
    );
    for (const a of agents) if (found.has(a)) out.set(a, found.get(a)!);
    return out;
  }

  /** Where an agent's summaries start, unless a daemon set it already. */
  async start(agent: string, tick: number): Promise<void> {
    await this.#redis.hsetnx(this.#layout.of(agent).activitySummaries, agent, String(tick));
  }

  /** True for the one daemon that may post the agent's summary of `tick`. */
  async claim(agent: string, tick: number): Promise<boolean> {
    return (await this.#redis.set(this.#layout.of(agent).activitySummaryClaim(agent, tick), '1', 'PX', SUMMARY_CLAIM_MS, 'NX')) === 'OK';
  }

  /** The summary was not posted: the next round (of any daemon) tries again. */
  async release(agent: string, tick: number): Promise<void> {
    await this.#redis.del(this.#layout.of(agent).activitySummaryClaim(agent, tick));
  }

  /** The summary of `tick` is done (posted, or refused for good by the agent's limits). */
  async finish(agent: string, tick: number): Promise<void> {
    await this.#redis.hset(this.#layout.of(agent).activitySummaries, agent, String(tick));
  }
}
