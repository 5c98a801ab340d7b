// The scheduler loop: on a timer, ask the hub who has unread notifications and enqueue one activation
// per runnable agent. Repeats are expected (notifications stay unread until handled); the queue's
// per-agent deduplication absorbs them.
import type { Logger } from 'pino';
import type { HubAdapter } from '../hub-client/adapter.ts';
import { HubError } from '../hub-client/errors.ts';
import type { AgentWithWork } from '../hub-client/types.ts';
import type { ActivationQueue } from './activation-queue.ts';
import type { AgentStateStore } from './agent-state.ts';
import { eligibleAt } from './backoff.ts';
import type { LeaderLease } from './lease.ts';
import { selectInboxWork } from './intake.ts';

export interface SchedulerOptions {
  hub: HubAdapter;
  queue: ActivationQueue;
  agentState: AgentStateStore;
  /** Names of agents this daemon can run right now (loaded, valid, requirements met). */
  runnableAgents: () => ReadonlySet<string>;
  pollIntervalMs: number;
  /** Hold intake requests open on the hub's long-poll for up to this many seconds; 0 disables it. */
  longPollSeconds: number;
  /** With several daemons on one Redis, only the lease holder schedules. */
  lease: LeaderLease;
  leaseTtlMs: number;
  logger: Logger;
}

export class Scheduler {
  readonly #opts: SchedulerOptions;
  #timer: NodeJS.Timeout | undefined;
  #leaseTimer: NodeJS.Timeout | undefined;
  #leader = false;
  #running: Promise<void> | undefined;
  #stopped = true;
  readonly #lastJob = new Map<string, string>();
  #consecutiveFailures = 0;
  /** Whether the last intake saw any agent with work (then the next one waits pollIntervalMs). */
  #sawWork = true;
  /** Set once the hub answers 404 on the long-poll: plain polling from then on. */
  #longPollUnsupported = false;
  readonly #abort = new AbortController();

  constructor(opts: SchedulerOptions) {
    this.#opts = opts;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#leaseTimer = setInterval(() => void this.#renewLease(), Math.max(50, Math.floor(this.#opts.leaseTtlMs / 3)));
    void this.#renewLease().then(() => this.#schedule(0));
  }

  get isLeader(): boolean {
    return this.#leader;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort(); // ends a held long-poll at once
    clearTimeout(this.#timer);
    clearInterval(this.#leaseTimer);
    await this.#running;
    // Hand over at once instead of making the others wait out the lease.
    if (this.#leader) await this.#opts.lease.release().catch(() => undefined);
    this.#leader = false;
  }

  async #renewLease(): Promise<void> {
    try {
      const leader = await this.#opts.lease.tryAcquireOrRenew();
      if (leader !== this.#leader) this.#opts.logger.info({ leader }, leader ? 'scheduler leadership acquired' : 'scheduler leadership lost');
      this.#leader = leader;
    } catch (err) {
      // Cannot prove we hold it: behave as a follower until Redis answers again.
      if (this.#leader) this.#opts.logger.warn({ err }, 'cannot renew the scheduler lease; standing down');
      this.#leader = false;
    }
  }

  /** One intake round; returns the agents enqueued (new jobs only, not absorbed repeats). */
  async tick(): Promise<string[]> {
    this.#sawWork = true;
    if (!this.#leader) return [];
    const { queue, logger, agentState } = this.#opts;
    const withWork = await this.#intake();
    this.#sawWork = withWork.length > 0;
    const candidates = selectInboxWork(withWork, this.#opts.runnableAgents());
    const states = await agentState.getMany(candidates.map((a) => a.name));
    const now = Date.now();
    // Agents that keep failing wait out their backoff; their notifications stay unread meanwhile.
    const work = candidates.filter((a) => eligibleAt(states.get(a.name) ?? { failures: 0, lastFailureAt: undefined }) <= now);
    const enqueued: string[] = [];
    for (const a of work) {
      const jobId = await queue.enqueue(a.name, 'notification');
      if (jobId && this.#lastJob.get(a.name) !== jobId) {
        this.#lastJob.set(a.name, jobId);
        enqueued.push(a.name);
        logger.debug({ agent: a.name, jobId, unread: a.notification_count }, 'activation enqueued');
      }
    }
    return enqueued;
  }

  /** The hub's long-poll when it has one, `GET /agents?has_notifications=true` otherwise. */
  async #intake(): Promise<AgentWithWork[]> {
    const { hub, longPollSeconds, logger } = this.#opts;
    if (longPollSeconds > 0 && !this.#longPollUnsupported) {
      try {
        return await hub.pollAgentsWithWork(longPollSeconds, this.#abort.signal);
      } catch (err) {
        if (this.#abort.signal.aborted) return [];
        if (!(err instanceof HubError && err.status === 404)) throw err;
        this.#longPollUnsupported = true;
        logger.info('hub has no long-poll (404); polling agents with notifications instead');
      }
    }
    return hub.agentsWithNotifications();
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.tick()
        .then(() => {
          this.#consecutiveFailures = 0;
        })
        .catch((err: unknown) => {
          this.#consecutiveFailures++;
          this.#opts.logger.warn({ err, failures: this.#consecutiveFailures }, 'scheduler intake failed; will retry');
        })
        .finally(() => this.#schedule(this.#nextDelay()));
    }, delayMs);
  }

  /** Back off while the hub or Redis fails, up to 30 s, so an outage is not hammered. */
  #nextDelay(): number {
    const base = this.#opts.pollIntervalMs;
    if (this.#consecutiveFailures > 0) return Math.min(30_000, base * 2 ** Math.min(this.#consecutiveFailures, 6));
    // A long-poll that came back empty already waited on the hub: ask again at once. One that found work
    // answered immediately and will keep doing so until the work is handled, so pace it.
    const longPolling = this.#opts.longPollSeconds > 0 && !this.#longPollUnsupported;
    return longPolling && !this.#sawWork ? 0 : base;
  }
}
