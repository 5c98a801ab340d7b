// The hub's budget status per agent, asked at most once per TTL. Fails open (as the original runner did):
// when the hub cannot say, the agent is treated as healthy and the error is logged. What an agent's last run read
// with its inbox (AgentStateStore.budgetSeenCall, on any daemon) is as good as an answer while it is younger than the
// TTL; the notification intake asks the hub only of agents last read short of healthy (statusMany's `runDecides`).
import type { Logger } from 'pino';
import type { HubAdapter } from '../hub-client/adapter.ts';
import type { BudgetHealth, BudgetStatus } from '../hub-client/types.ts';
import type { BudgetSeen } from './agent-state.ts';

export class BudgetCache {
  readonly #hub: Pick<HubAdapter, 'budgetHealth'>;
  readonly #ttlMs: number;
  readonly #logger: Logger;
  readonly #known = new Map<string, { status: BudgetStatus; until: number }>();
  readonly #onHealth: ((agent: string, health: BudgetHealth) => void) | undefined;

  /** `onHealth`: sees each answer of the hub (status posts on a threshold crossing). */
  constructor(hub: Pick<HubAdapter, 'budgetHealth'>, opts: { ttlMs: number; logger: Logger; onHealth?: (agent: string, health: BudgetHealth) => void }) {
    this.#hub = hub;
    this.#ttlMs = opts.ttlMs;
    this.#logger = opts.logger;
    this.#onHealth = opts.onHealth;
  }

  async status(agent: string, now = Date.now()): Promise<BudgetStatus> {
    const known = this.#known.get(agent);
    if (known && known.until > now) return known.status;
    let status: BudgetStatus = 'healthy';
    try {
      const health = await this.#hub.budgetHealth(agent);
      status = health.status;
      this.#onHealth?.(agent, health);
    } catch (err) {
      this.#logger.warn({ agent, err }, 'budget health unavailable; treating the agent as healthy');
    }
    this.#known.set(agent, { status, until: now + this.#ttlMs });
    return status;
  }

  /**
   * Statuses of many agents, asking the hub for up to `parallel` at once (a cold cache must not cost N round trips
   * in a row). `seen`: what each agent's last run read, taken while younger than the TTL.
   *
   * `runDecides`: the run to be queued reads the budget itself and is skipped when it is short (activation.ts), so
   * an agent with no reading, or whose last reading (of any age) was healthy, is not asked about: it is left out of
   * the answer and its run decides. Asking cost a hub call per activation whenever the reading had aged past the TTL
   * (every agent after a start; every agent mentioned less often than the TTL). An agent last read short of healthy
   * is asked, so that it is not queued again and again only to be skipped.
   */
  async statusMany(agents: readonly string[], opts: { seen?: (agent: string) => BudgetSeen | undefined; parallel?: number; now?: number; runDecides?: boolean } = {}): Promise<Map<string, BudgetStatus>> {
    const { seen, parallel = 16, now = Date.now(), runDecides = false } = opts;
    const out = new Map<string, BudgetStatus>();
    // What is known is answered without a promise per agent (an intake round asks this of every agent with work).
    const unknown: string[] = [];
    for (const agent of agents) {
      const known = this.#known.get(agent);
      const read = seen?.(agent);
      // The newer of what this daemon was told (`until` is a TTL after it) and what a run read, while fresh.
      if (read && read.at + this.#ttlMs > now && (!known || read.at > known.until - this.#ttlMs)) {
        // Another machine's clock may run ahead: a reading is never good for longer than the TTL from now.
        this.#known.set(agent, { status: read.status, until: Math.min(read.at, now) + this.#ttlMs });
        out.set(agent, read.status);
      } else if (known && known.until > now) out.set(agent, known.status);
      else if (!runDecides || lastReading(known && { status: known.status, at: known.until - this.#ttlMs }, read) === 'short') unknown.push(agent);
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(parallel, unknown.length) }, async () => {
        while (next < unknown.length) {
          const agent = unknown[next++]!;
          out.set(agent, await this.status(agent, now));
        }
      }),
    );
    return out;
  }

  /** Forget what is known (e.g. after a consumption report moved the numbers). */
  invalidate(agent: string): void {
    this.#known.delete(agent);
  }
}

/** Whether the newer of two readings of any age was short of healthy ('none' when there is neither). */
function lastReading(told: BudgetSeen | undefined, read: BudgetSeen | undefined): 'healthy' | 'short' | 'none' {
  const last = !told ? read : !read ? told : read.at > told.at ? read : told;
  return !last ? 'none' : last.status === 'healthy' ? 'healthy' : 'short';
}
