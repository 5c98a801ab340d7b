// Posts each agent's activity summary (observability.post_summaries) to m/agent-activity at the ticks of its
// `observability.summary_schedule`, as the agent and under its write limits like any post of its own. Every
// scheduling daemon runs a ticker: the ledger's claim makes a tick one post whichever daemons decide it, and the
// hub's idempotency key (agent and tick) makes a retried post one post. The decision and the text are pure
// (activity-summary.ts); this shell reads warren's records (no model call) and writes. The clock is injected, as the
// schedule ticker's is: tests advance it instead of waiting for the minute.
import type { Logger } from 'pino';
import type { HubAdapter } from '../hub-client/adapter.ts';
import type { MemoryStore } from '../memory/memory-store.ts';
import { activitySummaryKey } from '../policy/idempotency-keys.ts';
import type { HeldMentionStore } from '../scheduler/held-mentions.ts';
import { nextTick } from '../scheduler/schedule-ticks.ts';
import { WriteRefused, type WriteAllowance, type WriteLimit } from '../scheduler/write-allowance.ts';
import type { RecordRetention } from '../redis/scripts.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { MAX_RECORD_CHARS, type ActivationRecord, type ActivationRecords } from './activation-records.ts';
import { ACTIVITY_COMMUNITY, activityFigures, formatActivitySummary, SUMMARY_TIMEZONE, summaryDue, type ActivityFigures } from './activity-summary.ts';
import type { ActivitySummaryLedger } from './activity-summary-ledger.ts';
import { RoundLoop } from '../scheduler/round-loop.ts';

export interface ActivitySummaryTickerOptions {
  /** The loaded definitions (read each round: the switch and the schedule reload with them). */
  definitions: () => readonly AgentDefinition[];
  /** Agents this daemon runs: only theirs are summarised. */
  runnable: () => ReadonlySet<string>;
  ledger: ActivitySummaryLedger;
  records: Pick<ActivationRecords, 'recent' | 'recentHeld' | 'retention'>;
  held: Pick<HeldMentionStore, 'read'>;
  hub: Pick<HubAdapter, 'createPost' | 'budgetHealth' | 'capabilities'>;
  writes: Pick<WriteAllowance, 'guard'>;
  /** The agents' memory store (read only for agents with memory on). */
  memory?: Pick<MemoryStore, 'count' | 'size'>;
  /** The process's redaction: the post goes to the hub. */
  redact: (text: string) => string;
  /** Epoch ms now, for the schedule; Date.now in production. */
  clock?: () => number;
  /** How long after a failed post (the hub, Redis) it is tried again; RETRY_MS by default. */
  retryMs?: number;
  logger: Logger;
}

export type SummaryResult =
  | { agent: string; tick: number; posted: string; figures: ActivityFigures }
  | { agent: string; tick: number; skipped: 'claimed' | 'failed' }
  | { agent: string; tick: number; skipped: 'refused'; limit: WriteLimit };

/** A round every second, as the schedule ticker's: a summary goes out within about a second of its tick. */
const ROUND_MS = 1_000;
/** A post that failed (the hub, Redis) is tried again after this. */
const RETRY_MS = 30_000;

export class ActivitySummaryTicker {
  readonly #opts: ActivitySummaryTickerOptions;
  readonly #clock: () => number;
  readonly #loop: RoundLoop;
  /** Per agent, the time before which no summary is due (its next tick), for the cron it was decided with. */
  readonly #quietUntil = new Map<string, { cron: string; until: number }>();
  /** Per agent, when a failed post may be tried again (real time: the hub's and the limits' clock). */
  readonly #retryAt = new Map<string, number>();

  constructor(opts: ActivitySummaryTickerOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? Date.now;
    this.#loop = new RoundLoop(() => this.round(), ROUND_MS, (err) => opts.logger.warn({ err }, 'activity summary round failed; will retry'));
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** One round: posts the summaries due now. */
  async round(): Promise<SummaryResult[]> {
    const { ledger, logger } = this.#opts;
    // A public network (Moltbook) gets none of warren's own reports, as it gets no error or status posts.
    if (this.#opts.hub.capabilities?.errorPosts === false) return [];
    const now = this.#clock();
    const runnable = this.#opts.runnable();
    const defs = this.#opts.definitions().filter((d) => d.config.observability.post_summaries && runnable.has(d.name));
    const looking = defs.filter((d) => {
      const q = this.#quietUntil.get(d.name);
      return !(q && q.cron === d.config.observability.summary_schedule && now < q.until) && (this.#retryAt.get(d.name) ?? 0) <= Date.now();
    });
    const out: SummaryResult[] = [];
    if (looking.length > 0) {
      const done = await ledger.done(looking.map((d) => d.name));
      for (const def of looking) {
        const cron = def.config.observability.summary_schedule;
        try {
          const d = summaryDue({ cron, done: done.get(def.name), now });
          if (d.kind === 'first_seen') await ledger.start(def.name, d.tick);
          if (d.kind !== 'due') {
            const from = d.kind === 'first_seen' ? d.tick : done.get(def.name)!;
            this.#quietUntil.set(def.name, { cron, until: nextTick({ cron, timezone: SUMMARY_TIMEZONE }, from) });
            continue;
          }
          const result = await this.#summarise(def, d.tick, d.from);
          out.push(result);
          // Posted, refused for the period, or another daemon's to post: nothing more is due before the next tick.
          if (!('skipped' in result) || result.skipped !== 'failed') this.#quietUntil.set(def.name, { cron, until: nextTick({ cron, timezone: SUMMARY_TIMEZONE }, d.tick) });
        } catch (err) {
          // One agent's trouble never stops the others' summaries; it is decided again next round.
          logger.warn({ err, agent: def.name }, 'could not decide the activity summary');
        }
      }
    }
    logger.debug({ now: new Date(now).toISOString(), agents: defs.length, posted: out.filter((r) => 'posted' in r).length }, 'activity summary round');
    return out;
  }

  async #summarise(def: AgentDefinition, tick: number, from: number): Promise<SummaryResult> {
    const { ledger, logger, hub, redact } = this.#opts;
    const agent = def.name;
    if (!(await ledger.claim(agent, tick))) return { agent, tick, skipped: 'claimed' };
    try {
      const figures = activityFigures(await this.#facts(def, from, tick));
      const post = formatActivitySummary(agent, figures);
      const idempotencyKey = activitySummaryKey(agent, tick);
      const created = await this.#opts.writes.guard(agent, def.config.behavior, { kind: 'post', idempotencyKey }, () =>
        hub.createPost({ agent, community: ACTIVITY_COMMUNITY, title: redact(post.title), content: redact(post.content) }, { idempotencyKey }),
      );
      await ledger.finish(agent, tick);
      logger.info({ agent, post: created.id, tick: new Date(tick).toISOString(), activations: figures.activations }, 'activity summary posted to m/agent-activity');
      return { agent, tick, posted: created.id, figures };
    } catch (err) {
      if (err instanceof WriteRefused && !err.retryable) {
        // The agent may not post now (can_create_posts, max_daily_posts): this period goes without its summary,
        // and the next one counts from its end, as it would after a posted summary.
        await ledger.finish(agent, tick);
        logger.warn({ agent, tick: new Date(tick).toISOString(), limit: err.limit }, `activity summary not posted: ${err.message}`);
        return { agent, tick, skipped: 'refused', limit: err.limit };
      }
      await ledger.release(agent, tick).catch(() => undefined);
      const wait = err instanceof WriteRefused ? (err.retryAfterMs ?? RETRY_MS) : (this.#opts.retryMs ?? RETRY_MS);
      this.#retryAt.set(agent, Date.now() + wait);
      logger.warn({ agent, tick: new Date(tick).toISOString(), err: redact(err instanceof Error ? err.message : String(err)), retry_in_ms: wait }, 'could not post the activity summary; will try again');
      return { agent, tick, skipped: 'failed' };
    }
  }

  /** What the summary is built from: the agent's records, its holds, the hub's budget figures, its memory. */
  async #facts(def: AgentDefinition, from: number, to: number): Promise<Parameters<typeof activityFigures>[0]> {
    const { records, held, hub, memory, logger, redact } = this.#opts;
    const agent = def.name;
    const keep = records.retention;
    const limit = keep.perAgent;
    const [kept, holds, heldNow, budget, mem] = await Promise.all([
      records.recent({ agent, limit }),
      records.recentHeld({ agent, limit }),
      held.read([agent]).then((m) => m.get(agent)),
      // The figures are a courtesy: a hub without budgets (or down a moment) leaves them out.
      hub.budgetHealth(agent).catch(() => undefined),
      def.config.memory?.enabled && memory
        ? Promise.all([memory.count(agent), memory.size(agent)])
            .then(([entries, bytes]) => ({ entries, bytes }))
            .catch((err: unknown) => void logger.warn({ agent, err: err instanceof Error ? err.message : String(err) }, 'could not read the memory size for the activity summary'))
        : undefined,
    ]);
    return {
      from,
      to,
      // Redacted before the fingerprints are made of them (they lower the case, which would hide a secret from redaction).
      records: kept.map((r) => (r.error === undefined ? r : { ...r, error: redact(r.error) })),
      historyFull: mayBeTrimmed(kept, from, keep),
      held: holds,
      ...(heldNow ? { heldNow } : {}),
      ...(budget ? { budget } : {}),
      ...(mem ? { memory: mem } : {}),
    };
  }
}

/**
 * Whether older records of the agent may have been dropped (its list at a bound of its retention), so the kept ones
 * may not reach back to `from`. Erring towards yes: the summary then says from when it counts.
 */
function mayBeTrimmed(kept: readonly ActivationRecord[], from: number, keep: Pick<RecordRetention, 'perAgent' | 'perAgentBytes' | 'maxAgeMs'>): boolean {
  if (kept.length >= keep.perAgent) return true;
  if (from < Date.now() - keep.maxAgeMs) return true;
  // A record that went for the bytes left fewer than its own size (at most MAX_RECORD_CHARS) below the bound.
  const bytes = kept.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)), 0);
  return bytes > keep.perAgentBytes - MAX_RECORD_CHARS;
}
