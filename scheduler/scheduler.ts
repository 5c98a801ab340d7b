// The scheduler loop: on a timer, ask the hub who has unread notifications and enqueue one activation
// per runnable agent. Repeats are expected (notifications stay unread until handled); the queue's
// per-agent deduplication absorbs them.
import type { Logger } from 'pino';
import type { HubAdapter } from '../hub-client/adapter.ts';
import { backoffDelayMs } from '../policy/exponential-backoff.ts';
import { HubError } from '../hub-client/errors.ts';
import type { AgentWithWork } from '../hub-client/types.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { ActivationQueue } from './activation-queue.ts';
import { PRIORITY } from './activation-job.ts';
import type { AgentHold, AgentStateStore } from './agent-state.ts';
import { eligibleAt } from './backoff.ts';
import type { BudgetCache } from './budget-cache.ts';
import { mayRun, type Verdict } from './eligibility.ts';
import { describeHold, heldOf, isNewHold, type HeldMentions, type HeldMentionStore, type Hold } from './held-mentions.ts';
import { hasUnclaimedWork, type InboxClaims } from './inbox-claims.ts';
import type { LeaderLease } from './lease.ts';
import { selectInboxWork } from './intake.ts';
import { nextIntakeDelayMs, startedPerSecond, type Backlog, type WaitingReading } from './intake-pacing.ts';
import type { TaskInbox } from './task-inbox.ts';
import { contributionsLeft, explorationGapMs, idleCapacity, pickStalest, type ExplorationCandidate } from './staleness.ts';

export interface SchedulerOptions {
  hub: HubAdapter;
  queue: ActivationQueue;
  agentState: AgentStateStore;
  /** Notifications queued or running activations hold: no follow-up is queued for those alone. */
  claims: InboxClaims;
  /** Names of agents this daemon can run right now (loaded, valid, requirements met). */
  runnableAgents: () => ReadonlySet<string>;
  /** The current definition of an agent (for quiet hours, discovery and limits). */
  definition: (name: string) => AgentDefinition | undefined;
  budget: BudgetCache;
  /** How often to look for idle capacity to explore with (0 turns exploration off). */
  explorationIntervalMs: number;
  /** The staleness threshold: an agent explores at most this often (discovery.frequency `staleness`). */
  minStalenessMs: number;
  /** Activations the workers run at once; exploration fills only what is idle. */
  workerConcurrency: number;
  pollIntervalMs: number;
  /** Hold intake requests open on the hub's long-poll for up to this many seconds; 0 disables it. */
  longPollSeconds: number;
  /** With several daemons on one Redis, only the lease holder schedules. */
  lease: LeaderLease;
  leaseTtlMs: number;
  /**
   * With shards, the shard this scheduler schedules (its agents are `runnableAgents`, its idle capacity that of
   * its shard's queue), and whether this daemon should hold the shard's lease now (scheduler/shard-owners.ts):
   * false gives a held lease up and leaves a free one to its owner. Absent: one shard, the first daemon holds it.
   */
  shard?: { index: number; wantsLease: () => boolean };
  logger: Logger;
  /** Where the mentions held back each round are kept for `warren status` and the watch page; none: not kept. */
  held?: HeldMentionStore;
  /** Told once per new hold (a new reason, more mentions waiting): the daemon records it for `warren logs`. */
  onHeld?: (agent: string, held: HeldMentions) => void;
  /** Work from outside the hub (schedules, webhooks, A2A, approvals): agents holding some are queued each round. */
  tasks?: Pick<TaskInbox, 'agentsWithTasks'>;
  /** Told each task round of every agent whose tasks wait, and why (the A2A server tells its callers). */
  onTasksHeld?: (agent: string, hold: Hold) => void;
}

export class Scheduler {
  readonly #opts: SchedulerOptions;
  #timer: NodeJS.Timeout | undefined;
  #exploreTimer: NodeJS.Timeout | undefined;
  #exploring: Promise<unknown> | undefined;
  #taskTimer: NodeJS.Timeout | undefined;
  #tasking: Promise<unknown> | undefined;
  #leaseTimer: NodeJS.Timeout | undefined;
  #leader = false;
  #running: Promise<void> | undefined;
  #stopped = true;
  readonly #lastJob = new Map<string, string>();
  #consecutiveFailures = 0;
  /** Whether the last intake saw any agent with work (then the next one waits pollIntervalMs). */
  #sawWork = true;
  /** The mentions held back at the last round, by agent (what is news in the next). */
  #held = new Map<string, HeldMentions>();
  /** Whether this scheduler has written the held reading once (a former leader's may still be there). */
  #heldWritten = false;
  /** The notification jobs waiting at the last round's start, and how many that round added (intake-pacing.ts). */
  #lastWaiting: (WaitingReading & { added: number }) | undefined;
  #backlog: Backlog | undefined;
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
    if (this.#opts.explorationIntervalMs > 0) this.#scheduleExploration();
    if (this.#opts.tasks) this.#scheduleTasks();
  }

  get isLeader(): boolean {
    return this.#leader;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort(); // ends a held long-poll at once
    clearTimeout(this.#timer);
    clearTimeout(this.#exploreTimer);
    clearTimeout(this.#taskTimer);
    clearInterval(this.#leaseTimer);
    await Promise.all([this.#running, this.#exploring, this.#tasking]);
    // Hand over at once instead of making the others wait out the lease.
    if (this.#leader) await this.#opts.lease.release().catch(() => undefined);
    this.#leader = false;
  }

  async #renewLease(): Promise<void> {
    try {
      if (this.#opts.shard && !this.#opts.shard.wantsLease()) {
        // Another live daemon owns this shard now: hand the lease over at once rather than let it expire.
        if (this.#leader) {
          this.#leader = false;
          await this.#opts.lease.release();
          this.#opts.logger.info({ shard: this.#opts.shard.index }, 'scheduler leadership handed over');
        }
        return;
      }
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
    if (!this.#leader) {
      this.#backlog = this.#lastWaiting = undefined; // a former leader's backlog paces nothing now
      return [];
    }
    const { queue, logger, agentState } = this.#opts;
    // Before the intake: a hold that shrinks after this point may have shrunk by what the intake still counts.
    const [claimVersion, waiting] = await Promise.all([this.#opts.claims.version(), this.#readWaiting()]);
    const t0 = Date.now();
    const withWork = await this.#intake();
    const t1 = Date.now();
    this.#sawWork = withWork.length > 0;
    const candidates = selectInboxWork(withWork, this.#opts.runnableAgents());
    const names = candidates.map((a) => a.name);
    const [states, holds] = await Promise.all([agentState.holdMany(names), this.#opts.claims.heldByMany(names)]);
    const now = new Date();
    // Paused, quiet, failing or out-of-budget agents wait; their notifications stay unread meanwhile, and are shown
    // as held (why, and when they run).
    const held = new Map<string, { hold: Hold; waiting: number }>();
    const holdBack = (a: AgentWithWork, verdict: Verdict): boolean => {
      const hold = heldOf(verdict, this.#opts.definition(a.name)?.config.behavior.quiet_hours, now);
      if (hold) held.set(a.name, { hold, waiting: a.notification_count });
      return verdict.eligible;
    };
    const eligible = candidates.filter((a) => holdBack(a, this.#notificationVerdict(a.name, states.get(a.name), now)));
    // The budget is asked only of those last read short of healthy (a hub call each, unless cached or read by a
    // recent run), then decided on by itself; the others' runs read it with their inbox and are skipped when short.
    const budgets = await this.#opts.budget.statusMany(eligible.map((a) => a.name), { seen: (name) => states.get(name)?.budgetSeen, runDecides: true });
    const t2 = Date.now();
    const due = eligible.filter(
      // A queued or running activation holds some or all of them: a follow-up only for ones that came after.
      (a) => holdBack(a, mayRun({ trigger: 'notification', budget: budgets.get(a.name) }, now)) && hasUnclaimedWork(a.notification_count, holds.get(a.name), claimVersion),
    );
    // Alongside the adds, not before them: showing what waits must not delay what runs.
    const recording = this.#recordHeld(held, now);
    // Sent together: one after another, each add waited a Redis round trip, and a round with a hundred agents
    // due held the next intake back by most of a second (issue 19). One connection keeps the adds in order.
    const [jobIds] = await Promise.all([Promise.all(due.map((a) => queue.enqueue(a.name, 'notification'))), recording]);
    const enqueued: string[] = [];
    due.forEach((a, i) => {
      const jobId = jobIds[i];
      if (jobId && this.#lastJob.get(a.name) !== jobId) {
        this.#lastJob.set(a.name, jobId);
        enqueued.push(a.name);
        logger.debug({ agent: a.name, jobId, unread: a.notification_count }, 'activation enqueued');
      }
    });
    this.#paceBy(waiting, enqueued.length);
    logger.debug({ agents: withWork.length, due: due.length, enqueued: enqueued.length, pollMs: t1 - t0, decideMs: t2 - t1, enqueueMs: Date.now() - t2, backlog: this.#backlog }, 'intake round');
    return enqueued;
  }

  /** Notification jobs waiting in this scheduler's queue (they start before any job this round adds), or undefined. */
  async #readWaiting(): Promise<WaitingReading | undefined> {
    const queue = this.#opts.queue.queues[this.#opts.shard?.index ?? 0];
    if (!queue) return undefined;
    try {
      const counts = await queue.getCountsPerPriority([0, PRIORITY.notification]);
      return { waiting: Object.values(counts).reduce((a, n) => a + n, 0), at: Date.now() };
    } catch (err) {
      // Only the pace depends on it: the round goes on at the configured one.
      this.#opts.logger.debug({ err }, 'could not count the waiting activations');
      return undefined;
    }
  }

  /** The backlog the next round's wait is paced by: what waited at this round's start, with this round's adds. */
  #paceBy(now: WaitingReading | undefined, added: number): void {
    const before = this.#lastWaiting;
    this.#lastWaiting = now && { ...now, added };
    this.#backlog = now && before ? { waiting: now.waiting + added, startedPerSecond: startedPerSecond(before, before.added, now) } : undefined;
  }

  #notificationVerdict(name: string, state: AgentHold | undefined, now: Date): Verdict {
    return mayRun({ ...this.#holdFacts(name, state), trigger: 'notification' }, now);
  }

  /**
   * This round's held mentions: each new hold (a new reason, more mentions waiting) logged and told once, and the
   * reading kept for `warren status` and the watch page. Its failure is logged: it only shows, it decides nothing.
   */
  async #recordHeld(held: ReadonlyMap<string, { hold: Hold; waiting: number }>, now: Date): Promise<void> {
    const { logger, onHeld } = this.#opts;
    const next = new Map<string, HeldMentions>();
    for (const [agent, { hold, waiting }] of held) {
      const before = this.#held.get(agent);
      const entry: HeldMentions = {
        reason: hold.reason,
        runs_at: hold.runsAt === null ? null : new Date(hold.runsAt).toISOString(),
        waiting,
        since: before && before.reason === hold.reason ? before.since : now.toISOString(),
      };
      if (isNewHold(before, entry)) {
        logger.info({ agent, reason: entry.reason, runs_at: entry.runs_at, waiting }, `mentions held: ${describeHold(agent, entry)}`);
        onHeld?.(agent, entry);
      }
      next.set(agent, entry);
    }
    const changed = next.size > 0 || this.#held.size > 0 || !this.#heldWritten;
    this.#held = next;
    this.#heldWritten = true;
    if (changed) await this.#opts.held?.replace(next, now.getTime()).catch((err: unknown) => logger.warn({ err }, 'could not record the held mentions'));
  }

  /**
   * One exploration round: when workers have idle slots, the stalest agents with discovery on get an
   * exploration activation (quiet hours, pauses, backoff, daily limits and budget permitting).
   */
  async exploreTick(now = new Date()): Promise<string[]> {
    if (!this.#leader) return [];
    const { queue, agentState, logger } = this.#opts;
    const capacity = idleCapacity(this.#opts.workerConcurrency, await queue.counts(this.#opts.shard?.index));
    if (capacity === 0) return [];
    // Plain loops and arrays indexed alike, no per-agent Maps or temporary arrays: this runs over every agent
    // each round (100,000 in the scale benchmark).
    const discovering: AgentDefinition[] = [];
    const names: string[] = [];
    for (const name of this.#opts.runnableAgents()) {
      const def = this.#opts.definition(name);
      if (!def?.config.behavior.discovery.enabled) continue;
      discovering.push(def);
      names.push(def.name);
    }
    // An agent with an activation queued or running is not idle (explorationFacts leaves it out): an exploration
    // added now would replace the notification follow-up BullMQ keeps for it (the newest add wins), delaying an
    // answer by a whole run.
    const facts = await agentState.explorationFacts(names);
    // A hub with a daily comment cap of its own (Moltbook): an agent with none left today does not explore.
    const hubLeft = await this.#hubCommentsLeft(names, facts);
    const candidates: ExplorationCandidate[] = [];
    for (let i = 0; i < discovering.length; i++) {
      const st = facts[i];
      const d = discovering[i]!;
      if (!st) continue;
      const b = d.config.behavior;
      candidates.push({
        name: d.name,
        lastActivatedAt: st.lastActivatedAt,
        discoveryEnabled: b.discovery.enabled,
        minIntervalMs: explorationGapMs(b, this.#opts.minStalenessMs),
        quietHours: b.quiet_hours,
        eligibleAt: eligibleAt(st),
        paused: st.paused,
        contributionsLeftToday: contributionsLeft(b.limits, b.can_create_posts, st.today),
        hubCommentsLeftToday: hubLeft?.get(d.name),
      });
    }
    if (candidates.length === 0) return [];
    const enqueued: string[] = [];
    // The stalest first, ordered only as far as the round gets: ordering all candidates to take a few cost a
    // tenth of a round at 100,000 agents. pickStalest(…, k) is the first k of the whole order, so a longer
    // prefix (doubling when budget refusals use one up) continues a shorter one.
    let order: string[] = [];
    let asked = 0;
    // In stalest-first chunks of the slots still free: budget answers for a chunk are fetched together.
    for (let i = 0; enqueued.length < capacity; ) {
      const end = i + capacity - enqueued.length;
      if (end > order.length && order.length === asked) {
        asked = Math.max(end, 2 * asked);
        order = pickStalest(candidates, now, asked);
      }
      const chunk = order.slice(i, end);
      if (chunk.length === 0) break;
      i += chunk.length;
      const budgets = await this.#opts.budget.statusMany(chunk);
      // From `warning` on, exploration pauses: the budget is kept for answering people.
      const allowed = chunk.filter((name) => mayRun({ trigger: 'exploration', budget: budgets.get(name) }, now).eligible);
      // Sent together, as the intake does: one connection keeps the adds in order.
      const jobIds = await Promise.all(allowed.map((name) => queue.enqueue(name, 'exploration')));
      allowed.forEach((name, k) => {
        const jobId = jobIds[k];
        if (jobId && this.#lastJob.get(name) !== jobId) {
          this.#lastJob.set(name, jobId);
          enqueued.push(name);
        }
      });
    }
    if (enqueued.length) logger.debug({ agents: enqueued, capacity }, 'exploration enqueued');
    return enqueued;
  }

  /**
   * Of the idle agents (facts known), the comments the hub still takes from each today (none for one it could not
   * tell: not held back then); undefined when the hub has no such cap.
   */
  async #hubCommentsLeft(names: readonly string[], facts: ReadonlyArray<unknown>): Promise<Map<string, number> | undefined> {
    const { hub, logger } = this.#opts;
    if (!hub.commentsLeftToday) return undefined;
    const idle = names.filter((_, i) => facts[i] !== undefined);
    const left = await Promise.all(idle.map((n) => hub.commentsLeftToday!(n).catch((err: unknown) => void logger.warn({ err, agent: n }, 'could not read the hub\'s daily cap'))));
    const out = new Map<string, number>();
    idle.forEach((n, i) => {
      const l = left[i];
      if (l !== undefined) out.set(n, l);
    });
    return out;
  }

  /**
   * One task round: each agent with a task nobody holds gets a `task` activation, unless paused, backing off, in
   * quiet hours or out of budget (the task waits; it is not dropped). Its own timer: the intake round may be held
   * on the hub's long-poll for half a minute, and a task should not wait for the hub.
   */
  async taskTick(now = new Date()): Promise<string[]> {
    const { tasks, queue, agentState, logger } = this.#opts;
    if (!this.#leader || !tasks) return [];
    const runnable = this.#opts.runnableAgents();
    const names = (await tasks.agentsWithTasks(now.getTime())).filter((n) => runnable.has(n));
    if (names.length === 0) return [];
    const states = await agentState.holdMany(names);
    // A held agent's tasks wait (never dropped); whoever gave them is told why.
    const holdBack = (n: string, verdict: Verdict): boolean => {
      const hold = heldOf(verdict, this.#opts.definition(n)?.config.behavior.quiet_hours, now);
      if (hold) this.#opts.onTasksHeld?.(n, hold);
      return verdict.eligible;
    };
    const eligible = names.filter((n) => holdBack(n, mayRun({ ...this.#holdFacts(n, states.get(n)), trigger: 'task' }, now)));
    const budgets = await this.#opts.budget.statusMany(eligible, { seen: (name) => states.get(name)?.budgetSeen });
    const checked = eligible.filter((n) => holdBack(n, mayRun({ trigger: 'task', budget: budgets.get(n) }, now)));
    // Asked again just before queueing: the budget may have taken a hub round trip, in which a schedule's tick (or
    // an A2A task) queued its own activation and a worker started it; queued again now, BullMQ would keep an empty
    // follow-up behind that run.
    const still = checked.length ? new Set(await tasks.agentsWithTasks(now.getTime())) : new Set<string>();
    const due = checked.filter((n) => still.has(n));
    const jobIds = await Promise.all(due.map((n) => queue.enqueue(n, 'task')));
    const enqueued = due.filter((n, i) => {
      const jobId = jobIds[i];
      if (!jobId || this.#lastJob.get(n) === jobId) return false;
      this.#lastJob.set(n, jobId);
      return true;
    });
    if (enqueued.length) logger.debug({ agents: enqueued }, 'task activations enqueued');
    return enqueued;
  }

  #holdFacts(name: string, state: AgentHold | undefined): Omit<Parameters<typeof mayRun>[0], 'trigger'> {
    return { paused: state?.paused, backoffUntil: state?.backoffUntil, quietHours: this.#opts.definition(name)?.config.behavior.quiet_hours };
  }

  #scheduleTasks(): void {
    if (this.#stopped) return;
    this.#taskTimer = setTimeout(() => {
      this.#tasking = this.taskTick()
        .catch((err: unknown) => this.#opts.logger.warn({ err }, 'task round failed; will retry'))
        .finally(() => this.#scheduleTasks());
    }, this.#opts.pollIntervalMs);
  }

  #scheduleExploration(): void {
    if (this.#stopped) return;
    this.#exploreTimer = setTimeout(() => {
      this.#exploring = this.exploreTick()
        .catch((err: unknown) => this.#opts.logger.warn({ err }, 'exploration round failed; will retry'))
        .finally(() => this.#scheduleExploration());
    }, this.#opts.explorationIntervalMs);
  }

  /** The hub's long-poll when it has one, `GET /agents?has_notifications=true` otherwise. */
  async #intake(): Promise<AgentWithWork[]> {
    const { hub, longPollSeconds, logger } = this.#opts;
    if (longPollSeconds > 0 && !this.#longPollUnsupported && hub.capabilities?.longPoll !== false) {
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

  /** The wait before the next intake round (scheduler/intake-pacing.ts). */
  #nextDelay(): number {
    if (this.#consecutiveFailures > 0) this.#backlog = this.#lastWaiting = undefined; // a failed round read nothing to pace by
    return nextIntakeDelayMs(
      {
        pollIntervalMs: this.#opts.pollIntervalMs,
        consecutiveFailures: this.#consecutiveFailures,
        longPolling: this.#opts.longPollSeconds > 0 && !this.#longPollUnsupported,
        sawWork: this.#sawWork,
        backlog: this.#backlog,
      },
      (baseMs, capMs, failures) => backoffDelayMs({ baseMs, factor: 2, capMs, jitter: 'none' }, failures),
    );
  }
}
