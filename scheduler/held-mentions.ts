// Mentions the intake round holds back instead of scheduling (paused, a failure backoff, quiet hours, the hub's budget
// at critical), made visible: what `warren status`, the watch page and `warren logs` show of them. The decisions are
// pure (heldOf, isNewHold); HeldMentions keeps the leader's latest reading in one Redis hash per shard (one field per
// agent, in its shard's hash).
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisClient } from '../redis/scripts.ts';
import { z } from 'zod';
import type { Verdict } from './eligibility.ts';
import { localMinutes, type QuietHours } from './quiet-hours.ts';
import { FIELDS_PER_COMMAND } from '../redis/agent-pages.ts';

export type HoldReason = 'paused' | 'backoff' | 'quiet_hours' | 'budget';

export interface Hold {
  reason: HoldReason;
  /** Epoch ms the mentions run (the backoff's or the quiet hours' end); null when that is not a time (a pause, the budget). */
  runsAt: number | null;
}

const HeldSchema = z.object({
  reason: z.enum(['paused', 'backoff', 'quiet_hours', 'budget']),
  runs_at: z.string().nullable(),
  /** Unread notifications waiting. */
  waiting: z.number().int().nonnegative(),
  /** When this hold began (the first round that held the agent for this reason). */
  since: z.string(),
});

/** One agent's held mentions, as stored and shown. */
export type HeldMentions = z.infer<typeof HeldSchema>;

/** How long a reading is believed without a newer round (a leader gone quiet leaves no stale holds behind). */
export const HELD_STALE_MS = 5 * 60_000;

/** What holds an agent's mentions back, from the verdict that held them (pure); undefined when it does not. */
export function heldOf(verdict: Verdict, quietHours: QuietHours | undefined, now: Date): Hold | undefined {
  if (verdict.eligible) return undefined;
  switch (verdict.reason) {
    case 'paused':
      return { reason: 'paused', runsAt: null };
    case 'backoff':
      return { reason: 'backoff', runsAt: verdict.until };
    case 'quiet_hours':
      return { reason: 'quiet_hours', runsAt: quietHours ? quietHoursEnd(quietHours, now) : null };
    case 'budget':
      return { reason: 'budget', runsAt: null };
    default:
      // not_runnable, discovery_off, min_interval, daily_limit: not what holds a mention in the intake round.
      return undefined;
  }
}

/** The next end of the quiet hours after `now` (to the minute). */
export function quietHoursEnd(q: QuietHours, now: Date): number {
  const end = Number(q.end.slice(0, 2)) * 60 + Number(q.end.slice(3, 5));
  const minutes = (end - localMinutes(now, q.timezone) + 1440) % 1440 || 1440;
  const startOfMinute = now.getTime() - (now.getTime() % 60_000);
  return startOfMinute + minutes * 60_000;
}

/** Whether a hold is news worth one line in `warren logs`: a new reason, or more mentions waiting than before. */
export function isNewHold(before: HeldMentions | undefined, now: Pick<HeldMentions, 'reason' | 'waiting'>): boolean {
  return !before || before.reason !== now.reason || now.waiting > before.waiting;
}

/** What the operator reads: why the mentions wait and when they run (`warren status`, `warren logs`). */
export function describeHold(agent: string, h: Pick<HeldMentions, 'reason' | 'runs_at'>): string {
  const at = h.runs_at ? `${h.runs_at.slice(0, 16).replace('T', ' ')}Z` : undefined;
  switch (h.reason) {
    case 'paused':
      return `paused: run after \`warren resume ${agent}\``;
    case 'backoff':
      return `failure backoff: run at ${at ?? '?'} (or now with \`warren resume ${agent}\`)`;
    case 'quiet_hours':
      return `quiet hours: run at ${at ?? 'their end'}`;
    case 'budget':
      return 'budget critical: run when the hub\'s budget allows again (daily budgets reset at 00:00 UTC)';
  }
}

/** The leader's latest reading of held mentions, in Redis, for every machine's `warren status` and watch page. */
export class HeldMentionStore {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;

  /** `space`: the daemon's key layout, or a prefix (one shard). */
  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
  }

  /** Replaces the reading with this round's (agents not held any more lose their entry): every shard's hash. */
  async replace(held: ReadonlyMap<string, HeldMentions>, now = Date.now()): Promise<void> {
    const byShard = new Map(this.#layout.shards.map((k) => [k, [] as Array<[string, string]>]));
    for (const [a, h] of held) byShard.get(this.#layout.of(a))!.push([a, JSON.stringify({ ...h, seen_at: now })]);
    await Promise.all(
      [...byShard].map(async ([k, entries]) => {
        const m = this.#redis.multi().del(k.agentHeld);
        if (entries.length) m.hset(k.agentHeld, Object.fromEntries(entries));
        await m.exec();
      }),
    );
  }

  /** The held mentions of those of `agents` the latest reading holds; readings older than HELD_STALE_MS are left out. */
  async read(agents: readonly string[], now = Date.now()): Promise<Map<string, HeldMentions>> {
    const values = new Array<string | null>(agents.length);
    await Promise.all(
      this.#layout.byShardInPages(agents, FIELDS_PER_COMMAND).map(async ({ keys, items, at }) => {
        const got = (await this.#redis.call('HMGET', [keys.agentHeld, ...items])) as Array<string | null>;
        at.forEach((pos, i) => (values[pos] = got[i] ?? null));
      }),
    );
    const out = new Map<string, HeldMentions>();
    agents.forEach((a, i) => {
      const v = values[i];
      if (!v) return;
      try {
        const json = JSON.parse(v) as { seen_at?: unknown };
        const h = HeldSchema.safeParse(json);
        if (h.success && typeof json.seen_at === 'number' && now - json.seen_at < HELD_STALE_MS) out.set(a, h.data);
      } catch {
        // an unreadable entry is not shown; the next round replaces it
      }
    });
    return out;
  }
}
