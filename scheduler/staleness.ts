// Exploration by staleness: when workers are idle, the agents that have gone longest without running get a turn.
// A pure order over facts gathered elsewhere (definitions, Redis state, the hub's stale list); whether an agent
// may explore at all is eligibility.ts's decision.
import { mayRun, type IneligibleReason } from './eligibility.ts';
import type { QuietHours } from './quiet-hours.ts';

export interface ExplorationCandidate {
  name: string;
  /** Epoch ms of the last activation; undefined when the agent never ran. */
  lastActivatedAt: number | undefined;
  discoveryEnabled: boolean;
  /** behavior.limits.min_interval_seconds, in ms: no exploration sooner than this after the last activation. */
  minIntervalMs: number;
  quietHours: QuietHours | undefined;
  /** From the failure backoff: epoch ms from which the agent may run (0 = now). */
  eligibleAt: number;
  paused: boolean;
  /** Posts and comments the agent may still make today; exploration needs at least one. */
  contributionsLeftToday: number;
  /** A hub with a daily comment cap of its own (Moltbook): comments it still takes today; absent when it has none. */
  hubCommentsLeftToday?: number;
}

/** Why an agent may not explore now (the candidate's facts asked of eligibility.ts), or undefined when it may. */
export function explorationBlocker(c: ExplorationCandidate, now: Date): IneligibleReason | undefined {
  const verdict = mayRun(
    {
      trigger: 'exploration',
      paused: c.paused,
      backoffUntil: c.eligibleAt,
      quietHours: c.quietHours,
      staleness: { discoveryEnabled: c.discoveryEnabled, lastActivatedAt: c.lastActivatedAt, minIntervalMs: c.minIntervalMs, contributionsLeftToday: c.contributionsLeftToday, hubCommentsLeftToday: c.hubCommentsLeftToday },
    },
    now,
  );
  return verdict.eligible ? undefined : verdict.reason;
}

/**
 * Up to `capacity` agents to explore: never-run agents first, then the longest idle; ties by name so the
 * order is stable. Exploration is skipped, not queued, for agents that may not explore now.
 */
export function pickStalest(candidates: readonly ExplorationCandidate[], now: Date, capacity: number): string[] {
  if (capacity <= 0) return [];
  // The `capacity` stalest, kept in order as the candidates stream by: sorting all of them to take a few cost
  // most of a round's CPU at 100,000 agents.
  const kept: ExplorationCandidate[] = [];
  for (const c of candidates) {
    if (kept.length === capacity && stalestFirst(c, kept[capacity - 1]!) >= 0) continue;
    if (explorationBlocker(c, now) !== undefined) continue;
    let lo = 0;
    let hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (stalestFirst(kept[mid]!, c) <= 0) lo = mid + 1;
      else hi = mid;
    }
    kept.splice(lo, 0, c);
    if (kept.length > capacity) kept.pop();
  }
  return kept.map((c) => c.name);
}

/** Never-run first, then oldest last activation, then name (code-unit order: cheap, and stable across locales). */
function stalestFirst(a: ExplorationCandidate, b: ExplorationCandidate): number {
  const la = a.lastActivatedAt ?? Number.NEGATIVE_INFINITY;
  const lb = b.lastActivatedAt ?? Number.NEGATIVE_INFINITY;
  if (la !== lb) return la < lb ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Idle worker slots: what the workers can take beyond what is already running or waiting. */
export function idleCapacity(concurrency: number, counts: { active: number; waiting: number; prioritized: number }): number {
  return Math.max(0, concurrency - counts.active - counts.waiting - counts.prioritized);
}

const FREQUENCY_GAP_MS = { hourly: 3_600_000, daily: 86_400_000 } as const;

/**
 * The least time between two explorations of one agent: its `min_interval_seconds`, and at least the staleness
 * threshold (`staleness`, the default) or an hour or a day (`hourly`, `daily`).
 */
export function explorationGapMs(behavior: { discovery: { frequency: 'staleness' | 'hourly' | 'daily' }; limits: { min_interval_seconds: number } }, minStalenessMs: number): number {
  const f = behavior.discovery.frequency;
  const gap = f === 'staleness' ? minStalenessMs : FREQUENCY_GAP_MS[f];
  return Math.max(behavior.limits.min_interval_seconds * 1000, gap);
}

/** Posts and comments still allowed today (posts only count when the agent may create posts). */
export function contributionsLeft(limits: { max_daily_posts: number; max_daily_comments: number }, canCreatePosts: boolean, today: { posts: number; comments: number }): number {
  const posts = canCreatePosts ? Math.max(0, limits.max_daily_posts - today.posts) : 0;
  return posts + Math.max(0, limits.max_daily_comments - today.comments);
}
