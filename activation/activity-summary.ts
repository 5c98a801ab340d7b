// An agent's activity summary in m/agent-activity (observability.post_summaries), built from warren's own records,
// no model call (pure): which summary is due at a time (summaryDue), the figures of a period from the activation
// records and held-mention lines (activityFigures), and the post that shows them (formatActivitySummary). The
// ticker (activity-summary-ticker.ts) reads the records and posts; README "Activity summaries".
import { isFailureKind } from '../executors/run-outcome.ts';
import type { HeldMentions } from '../scheduler/held-mentions.ts';
import { lastTickAtOrBefore } from '../scheduler/schedule-ticks.ts';
import type { ActivationRecord } from './activation-records.ts';
import { errorFingerprint } from './failure-policy.ts';
import type { BudgetFigures } from './status-post.ts';

export const ACTIVITY_COMMUNITY = 'agent-activity';

/** Summary ticks are read in UTC: the operator's day boundary is the fleet's, whichever machine runs the daemon. */
export const SUMMARY_TIMEZONE = 'UTC';

export type SummaryDecision =
  /** Never summarised: what came before this sight is not a period of its own; the last tick is where summaries start. */
  | { kind: 'first_seen'; tick: number }
  | { kind: 'not_due' }
  /** Post the summary of (from, tick]: everything since the last summary, however many ticks fell meanwhile. */
  | { kind: 'due'; tick: number; from: number };

/** Which summary is due `now`, given the tick of the last one (`done`, undefined when none yet). */
export function summaryDue(f: { cron: string; done: number | undefined; now: number }): SummaryDecision {
  const tick = lastTickAtOrBefore({ cron: f.cron, timezone: SUMMARY_TIMEZONE }, f.now);
  if (f.done === undefined) return { kind: 'first_seen', tick };
  return tick > f.done ? { kind: 'due', tick, from: f.done } : { kind: 'not_due' };
}

/** When a record's run ended: a run belongs to the period it ended in (its record is written then). */
export function endedAt(r: Pick<ActivationRecord, 'started_at' | 'duration_ms'>): number {
  return Date.parse(r.started_at) + r.duration_ms;
}


export interface SummaryFacts {
  /** The period, (from, to] in epoch ms. */
  from: number;
  to: number;
  /** The agent's activation records as kept, newest first (any period: those of this one are picked here). */
  records: readonly ActivationRecord[];
  /** True when older records may have been dropped (the history at a bound of its retention): the oldest kept may not reach back to `from`. */
  historyFull: boolean;
  /** The agent's held-mention lines (ActivationRecords.recentHeld), newest first. */
  held: readonly ActivationRecord[];
  /** Mentions held back now, if any. */
  heldNow?: Pick<HeldMentions, 'reason' | 'waiting'>;
  /** The hub's word on the agent's spend, when it gave it. */
  budget?: BudgetFigures;
  /** The agent's memory, when it has memory on and the store answered. */
  memory?: { entries: number; bytes: number };
}

export interface ActivityFigures {
  from: number;
  to: number;
  activations: number;
  /** trigger → outcome → count. */
  byKind: Record<string, Record<string, number>>;
  answers: number;
  posts: number;
  failures: number;
  /** One row per failure fingerprint (activation/failure-policy.ts errorFingerprint), most frequent first. */
  fingerprints: Array<{ fingerprint: string; count: number }>;
  tokens: { input: number; output: number; cached: number };
  cost_usd: number;
  /** Mentions held back in the period: hold lines by reason, and the most mentions any of them said were waiting. */
  holds: Record<string, number>;
  heldWaitingMax: number;
  heldNow?: Pick<HeldMentions, 'reason' | 'waiting'>;
  budget?: BudgetFigures;
  memory?: { entries: number; bytes: number };
  /** Set when the kept records do not reach back to the period's start: the figures count from this time on. */
  countedFrom?: number;
}

const inPeriod = (r: ActivationRecord, from: number, to: number): boolean => {
  const t = endedAt(r);
  return t > from && t <= to;
};

const bump = (m: Record<string, number>, k: string, by = 1): void => {
  m[k] = (m[k] ?? 0) + by;
};

/** A held line's reason is `held: <why>`; its detail starts with `<n> mention(s) waiting`. */
const holdReason = (r: ActivationRecord): string => r.reason.replace(/^held:\s*/, '');
const holdWaiting = (r: ActivationRecord): number => Number(/^(\d+) mention/.exec(r.detail ?? '')?.[1] ?? 0);

export function activityFigures(f: SummaryFacts): ActivityFigures {
  const records = f.records.filter((r) => inPeriod(r, f.from, f.to));
  const byKind: Record<string, Record<string, number>> = {};
  const fingerprints: Record<string, number> = {};
  const tokens = { input: 0, output: 0, cached: 0 };
  let answers = 0;
  let posts = 0;
  let failures = 0;
  let cost = 0;
  for (const r of records) {
    bump((byKind[r.trigger] ??= {}), r.outcome);
    answers += r.replies;
    posts += r.posts;
    tokens.input += r.usage.input_tokens;
    tokens.output += r.usage.output_tokens;
    tokens.cached += r.usage.cached_tokens;
    cost += r.usage.cost_usd;
    if (isFailureKind(r.outcome)) {
      failures++;
      bump(fingerprints, errorFingerprint(r.reason, r.error ?? ''));
    }
  }
  const holds: Record<string, number> = {};
  let heldWaitingMax = 0;
  for (const h of f.held.filter((r) => inPeriod(r, f.from, f.to))) {
    bump(holds, holdReason(h));
    heldWaitingMax = Math.max(heldWaitingMax, holdWaiting(h));
  }
  const oldest = f.records.at(-1);
  const countedFrom = f.historyFull && oldest && endedAt(oldest) > f.from ? endedAt(oldest) : undefined;
  return {
    from: f.from,
    to: f.to,
    activations: records.length,
    byKind,
    answers,
    posts,
    failures,
    fingerprints: Object.entries(fingerprints)
      .map(([fingerprint, count]) => ({ fingerprint, count }))
      .sort((a, b) => b.count - a.count || a.fingerprint.localeCompare(b.fingerprint)),
    tokens,
    // Cents are what a reader compares; float sums of many runs are not.
    cost_usd: Math.round(cost * 1e6) / 1e6,
    holds,
    heldWaitingMax,
    ...(f.heldNow ? { heldNow: f.heldNow } : {}),
    ...(f.budget ? { budget: f.budget } : {}),
    ...(f.memory ? { memory: f.memory } : {}),
    ...(countedFrom !== undefined ? { countedFrom } : {}),
  };
}

/** `2026-11-26 07:13Z`. */
function minuteOf(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')}Z`;
}

function usd(n: number): string {
  return `$${n.toFixed(2)}`;
}

function counts(m: Record<string, number>): string {
  return Object.entries(m)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
}

/** The post (before redaction, which the poster applies to all of it). Nothing people wrote is in it. */
export function formatActivitySummary(agent: string, s: ActivityFigures): { title: string; content: string } {
  const kinds = Object.keys(s.byKind).sort();
  const lines = [
    '## Period',
    `- From ${minuteOf(s.from)} to ${minuteOf(s.to)}`,
    ...(s.countedFrom !== undefined ? [`- Counted from ${minuteOf(s.countedFrom)}: older records of the period may no longer be kept`] : []),
    '',
    '## Activations',
    `- Total: ${s.activations}`,
    ...kinds.map((k) => `- ${k}: ${counts(s.byKind[k]!)}`),
    `- Answers: ${s.answers}`,
    `- Posts: ${s.posts}`,
    `- Failures: ${s.failures}`,
    ...s.fingerprints.map((f) => `  - ${f.count}× \`${f.fingerprint.replace(/`/g, "'").slice(0, 200)}\``),
    '',
    '## Usage',
    `- Tokens: ${s.tokens.input} in, ${s.tokens.output} out, ${s.tokens.cached} cached`,
    `- Spend in the period: ${usd(s.cost_usd)}`,
    ...(s.budget
      ? [
          `- Today: ${usd(s.budget.daily_used)}${s.budget.daily_limit ? ` of ${usd(s.budget.daily_limit)}` : ''}`,
          `- This month: ${usd(s.budget.monthly_used)}${s.budget.monthly_limit ? ` of ${usd(s.budget.monthly_limit)}` : ''}`,
        ]
      : []),
    ...(s.memory ? [`- Memory: ${s.memory.entries} entries, ${s.memory.bytes} bytes`] : []),
    '',
    '## Held mentions',
    `- Holds in the period: ${Object.keys(s.holds).length ? `${counts(s.holds)} (at most ${s.heldWaitingMax} waiting)` : 'none'}`,
    `- Now: ${s.heldNow ? `${s.heldNow.waiting} waiting (${s.heldNow.reason})` : 'none waiting'}`,
  ];
  return { title: `📊 Activity: ${agent}, ${minuteOf(s.from)} to ${minuteOf(s.to)}`, content: lines.join('\n') };
}
