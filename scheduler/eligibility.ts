// May this agent run now? The one decision, asked by the intake round and the exploration round (scheduler.ts,
// staleness.ts), by the worker as a queued activation starts (activation/worker.ts), by the activation once it
// knows the hub's budget (activation/activation.ts) and by `warren status` (daemon/ops/status.ts). Pure: facts
// and the time in, a verdict with its reason out.
//
// Each caller passes the facts it holds at its moment; a fact left out is not checked. The rounds ask the hub's
// budget only of the agents the other facts let through (asking costs a hub call), so they ask again with that
// fact alone; the worker leaves quiet hours and staleness to the round that queued the run (a run queued just
// before the window starts still runs), and `warren status` shows the waits that hold any run back.
import type { BudgetStatus } from '../hub-client/types.ts';
import type { ActivationJob } from './activation-job.ts';
import { inQuietHours, type QuietHours } from './quiet-hours.ts';

export type Trigger = ActivationJob['trigger'];

/** What exploration adds: it runs only idle, stale agents that still have something left to write today. */
export interface StalenessFacts {
  discoveryEnabled: boolean;
  /** Epoch ms of the last activation; undefined when the agent never ran. */
  lastActivatedAt: number | undefined;
  /** The least time between two explorations (staleness.ts explorationGapMs). */
  minIntervalMs: number;
  /** Posts and comments the agent's limits still allow today (staleness.ts contributionsLeft). */
  contributionsLeftToday: number;
  /** A hub with a daily comment cap of its own (Moltbook): comments it still takes today; undefined when it has none. */
  hubCommentsLeftToday?: number;
}

export interface EligibilityFacts {
  trigger: Trigger;
  /** Why this daemon does not run the agent at all (no executor here, its hub name is a human's); undefined when it does. */
  notRunnable?: string;
  /** `warren pause`. */
  paused?: boolean;
  /** Epoch ms the failure backoff ends (scheduler/backoff.ts); undefined or past when none runs. */
  backoffUntil?: number;
  quietHours?: QuietHours;
  /** The hub's budget status; undefined when not asked, or the hub did not answer (fail open). */
  budget?: BudgetStatus;
  staleness?: StalenessFacts;
}

export type IneligibleReason = 'not_runnable' | 'discovery_off' | 'paused' | 'backoff' | 'quiet_hours' | 'min_interval' | 'daily_limit' | 'budget';

export type Verdict =
  | { eligible: true }
  | { eligible: false; reason: 'not_runnable'; detail: string }
  | { eligible: false; reason: 'discovery_off' | 'paused' | 'quiet_hours' | 'daily_limit' }
  /** `until`: epoch ms the wait ends. */
  | { eligible: false; reason: 'backoff' | 'min_interval'; until: number }
  | { eligible: false; reason: 'budget'; budget: BudgetStatus };

/** Shared, frozen: most agents may run most of the time, and a round asks for every agent. */
const ELIGIBLE: Verdict = Object.freeze({ eligible: true });

/**
 * What the hub's budget status allows (docs/hub-api.md §5.6): at `critical` nothing runs; exploration only while
 * `healthy` (from `warning` on, the budget is kept for answering people). The budget part of mayRun.
 */
export function budgetAllows(status: BudgetStatus, trigger: Trigger): boolean {
  if (status === 'critical') return false;
  if (trigger === 'exploration') return status === 'healthy';
  return true;
}

/**
 * The verdict on `facts` at `now`. When several things hold an agent back, the first of this order is the
 * reason: not runnable, discovery off, paused, backing off, quiet hours, too soon since the last run, nothing
 * left to write today, the budget. (What an operator can act on comes first; `warren status` shows that one.)
 */
export function mayRun(facts: EligibilityFacts, now: Date): Verdict {
  const t = now.getTime();
  const s = facts.staleness;
  if (facts.notRunnable !== undefined) return { eligible: false, reason: 'not_runnable', detail: facts.notRunnable };
  if (s && !s.discoveryEnabled) return { eligible: false, reason: 'discovery_off' };
  if (facts.paused) return { eligible: false, reason: 'paused' };
  if (facts.backoffUntil !== undefined && facts.backoffUntil > t) return { eligible: false, reason: 'backoff', until: facts.backoffUntil };
  if (inQuietHours(facts.quietHours, now)) return { eligible: false, reason: 'quiet_hours' };
  if (s) {
    if (s.lastActivatedAt !== undefined && t - s.lastActivatedAt < s.minIntervalMs) return { eligible: false, reason: 'min_interval', until: s.lastActivatedAt + s.minIntervalMs };
    if (s.contributionsLeftToday <= 0 || (s.hubCommentsLeftToday !== undefined && s.hubCommentsLeftToday <= 0)) return { eligible: false, reason: 'daily_limit' };
  }
  if (facts.budget !== undefined && !budgetAllows(facts.budget, facts.trigger)) return { eligible: false, reason: 'budget', budget: facts.budget };
  return ELIGIBLE;
}

/** What a write answers: a mention addressed to the agent (the pipeline's reply to its notification), or anything else. */
export type WriteOrigin = 'reply_to_mention' | 'own_initiative';

/**
 * The least gap `behavior.limits.min_interval_seconds` keeps before a write (ms). It paces what an agent does on its
 * own (exploration replies, posts, writes through hub tools); the pipeline's reply to a person who addressed the agent
 * is not delayed by it (it used to hold the second answer of a conversation back by a minute). Such a reply still
 * counts as the agent's last write, and every other limit (daily, per thread) still applies to it.
 */
export function minIntervalMs(minIntervalSeconds: number, origin: WriteOrigin): number {
  return origin === 'reply_to_mention' ? 0 : minIntervalSeconds * 1000;
}
