// When the next intake round runs (scheduler/scheduler.ts). The hub lists an agent for as long as its notifications
// are unread, that is until its reply: while activations wait in the queue, each round reads the same agents again,
// checks every one's holds in Redis and enqueues nothing new (a batch of 600 mentions: each agent's holds read about
// 20 times before its run). A job queued now would start behind the notification jobs already waiting, so reading
// sooner than they take to start only repeats the last round. While they wait, the next round waits up to half the
// time they take to start at the rate they are starting: new work is still queued before the workers reach the end
// of what waits, a wrong estimate costs at most MAX_BACKLOG_INTERVALS poll intervals, and with no backlog (or none
// moving) the rounds keep the configured pace.

/** What the next round's wait is decided on. */
export interface IntakePace {
  pollIntervalMs: number;
  /** Rounds that failed in a row (the hub or Redis down). */
  consecutiveFailures: number;
  /** The hub's long-poll is in use: a round where nobody had work already waited on the hub. */
  longPolling: boolean;
  /** The last round saw an agent with work. */
  sawWork: boolean;
  /** The notification jobs waiting after the last round, and how fast waiting jobs have been starting. */
  backlog?: Backlog;
}

export interface Backlog {
  waiting: number;
  /** Undefined (or 0) when no rate could be read: the configured pace. */
  startedPerSecond: number | undefined;
}

/** A backlog stretches the wait to at most this many poll intervals, and at most MAX_BACKLOG_WAIT_MS. */
export const MAX_BACKLOG_INTERVALS = 16;
export const MAX_BACKLOG_WAIT_MS = 30_000;

/**
 * Milliseconds until the next intake round. Failing: back off (two intervals, doubling, at most 64 intervals and
 * 30 s; no jitter: one leader polls, there is no crowd to spread). A long-poll that came back empty already waited
 * on the hub: at once. Work seen: the poll interval, stretched by a moving backlog as above.
 */
export function nextIntakeDelayMs(pace: IntakePace, backoff: (baseMs: number, capMs: number, failures: number) => number): number {
  const base = pace.pollIntervalMs;
  if (pace.consecutiveFailures > 0) return backoff(2 * base, Math.min(30_000, 64 * base), pace.consecutiveFailures);
  if (pace.longPolling && !pace.sawWork) return 0;
  const rate = pace.backlog?.startedPerSecond;
  if (!pace.sawWork || !pace.backlog || pace.backlog.waiting <= 0 || !rate || !(rate > 0)) return base;
  const halfDrainMs = (pace.backlog.waiting / rate) * 500;
  return Math.round(Math.max(base, Math.min(halfDrainMs, MAX_BACKLOG_INTERVALS * base, MAX_BACKLOG_WAIT_MS)));
}

/** A count of waiting notification jobs and when it was read (epoch ms). */
export interface WaitingReading {
  waiting: number;
  at: number;
}

/**
 * Waiting jobs that started per second between two readings: those waiting at the first, plus those the rounds
 * between added, less those waiting at the second. Undefined without time between them; 0 when none started. A
 * job that a retry or a kept follow-up put back counts as not started: the estimate errs slow (a longer wait), which
 * the halving and MAX_BACKLOG_INTERVALS bound.
 */
export function startedPerSecond(before: WaitingReading, added: number, after: WaitingReading): number | undefined {
  const seconds = (after.at - before.at) / 1_000;
  if (!(seconds > 0)) return undefined;
  return Math.max(0, before.waiting + added - after.waiting) / seconds;
}
