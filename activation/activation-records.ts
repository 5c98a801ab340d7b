// What `warren status` and `warren logs` read: one record per finished activation, kept in Redis with a
// bounded history (per agent and overall), and announced on a channel for `warren logs --follow`.
// With shards each agent's lists live in its shard (beside that shard's list of all its agents and byte totals, so
// the add script's keys share one slot); the fleet's list is every shard's merged newest first, the channels home.
import type { ActivationJob } from '../scheduler/activation-job.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import { addActivationRecordCall, redisScripts, type ActivationEndParts, type RecordRetention, type RedisClient, type RedisScripts, type ScriptCall } from '../redis/scripts.ts';
import type { ActivationEvent } from '../agent-loop/events.ts';
import type { OutcomeKind } from '../executors/run-outcome.ts';
import type { PhaseTimings } from './phase-timer.ts';
import { describeHold, type HeldMentions } from '../scheduler/held-mentions.ts';
import type { OversizedOutput } from '../policy/output-bounds.ts';

export interface ActivationRecord {
  activation_id: string;
  agent: string;
  trigger: ActivationJob['trigger'];
  /** How it ended (executors/run-outcome.ts). */
  outcome: OutcomeKind;
  /** Why, in a word or two: the executor's termination reason, `budget_critical`, the error class… */
  reason: string;
  started_at: string;
  duration_ms: number;
  usage: { input_tokens: number; output_tokens: number; cached_tokens: number; cost_usd: number };
  replies: number;
  posts: number;
  handled_notifications: number;
  attempt: number;
  /** Milliseconds per phase (budget, inbox, thread, context, executor, post, mark_read, report). */
  timings?: PhaseTimings;
  error?: string;
  /** Notifications given up on by this activation's failure (marked read unanswered). */
  abandoned?: string[];
  /** What a held mention waits for, in words (`held-…` records: the scheduler held the mentions back, nothing ran). */
  detail?: string;
  /** Events left out to keep the record within MAX_RECORD_CHARS (from the middle of the run). */
  events_dropped?: number;
  /** An `oversized` failure: which output passed which bound, how many bytes were read, and its head. */
  oversized?: OversizedOutput;
  /**
   * A task-triggered run: the task it answered (a webhook delivery's `task_id` from its 202, `schedule:…`,
   * `a2a:…`, `approval:…`), so the run of a delivery can be found by the id its sender was given.
   */
  task_id?: string;
  events: ActivationEvent[];
}

const MAX_EVENTS = 200;

/**
 * The record `warren logs` shows for mentions the scheduler holds back (scheduler/held-mentions.ts), once per new
 * hold: outcome `skipped`, reason `held: <why>`, and when they run. Nothing ran, so nothing is counted.
 */
export function heldRecord(agent: string, held: HeldMentions, now: Date = new Date()): ActivationRecord {
  const n = held.waiting;
  return {
    activation_id: `held-${agent}-${now.getTime().toString(36)}`,
    agent,
    trigger: 'notification',
    outcome: 'skipped',
    reason: `held: ${held.reason}`,
    started_at: now.toISOString(),
    duration_ms: 0,
    usage: { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: 0 },
    replies: 0,
    posts: 0,
    handled_notifications: 0,
    attempt: 1,
    detail: `${n} mention${n === 1 ? '' : 's'} waiting; ${describeHold(agent, held)}`,
    events: [],
  };
}
/** Characters of one text of a stored record (an answer, a tool call's arguments, a message): its head is kept. */
export const RECORD_FIELD_CHARS = 2_000;

/** The most one stored record takes, in characters of its JSON text: events past it are left out from the middle. */
export const MAX_RECORD_CHARS = 64 * 1024;

/**
 * What Redis keeps of the records unless warren.yaml's `records:` says otherwise (README "Records and Redis
 * memory"): an agent's history is at most 100 records, 128 KiB and 7 days, so an active agent's records never take
 * more than 128 KiB (or one record, 64 KiB at most, when a single one is larger).
 */
export const DEFAULT_RECORD_RETENTION: RecordRetention = {
  perAgent: 100,
  overall: 1_000,
  perAgentBytes: 128 * 1024,
  overallBytes: 8 * 1024 * 1024,
  maxAgeMs: 7 * 24 * 3_600_000,
};

export class ActivationRecords {
  readonly #redis: RedisClient;
  readonly #scripts: RedisScripts;
  readonly #layout: KeyLayout;
  readonly #keep: RecordRetention;
  /** What each shard's list of all agents keeps: its share of `overall` (the fleet's bound holds over the shards). */
  readonly #keepPerShard: RecordRetention;
  readonly #now: () => number;

  constructor(redis: RedisClient, space: KeySpace, opts: { retention?: Partial<RecordRetention>; now?: () => number } = {}) {
    this.#redis = redis;
    this.#scripts = redisScripts(redis);
    this.#layout = keyLayout(space);
    this.#keep = { ...DEFAULT_RECORD_RETENTION, ...opts.retention };
    const n = this.#layout.shards.length;
    this.#keepPerShard = { ...this.#keep, overall: Math.max(1, Math.ceil(this.#keep.overall / n)), overallBytes: Math.max(1, Math.ceil(this.#keep.overallBytes / n)) };
    this.#now = opts.now ?? Date.now;
  }

  /** What is kept of the records (older ones are dropped past it; with shards each shard keeps its share of `overall`). */
  get retention(): RecordRetention {
    return this.#keep;
  }

  /** Pub/sub channel (a namespace apart from keys, one for the fleet) on which each new record is announced. */
  get channel(): string {
    return this.#layout.home.activationRecordsChannel;
  }

  /**
   * Stores `record` as `redact` leaves its JSON text (whatever an event quoted, a secret included, is hidden the
   * same way in every field), serialised once. Returns what was stored.
   */
  async add(record: ActivationRecord, redact: (text: string) => string = (t) => t): Promise<string> {
    const { call, text } = this.addCall(record, redact);
    await this.#scripts.addActivationRecord(call);
    return text;
  }

  /**
   * add() at the end of a finished activation, in one command with the other parts of that end (lua/activation-end.lua):
   * the agent's state (AgentStateStore.activatedCall), the answer's outbox entry and the release of the run's inbox
   * claim (InboxClaim.ending) and the budget status the run read (AgentStateStore.budgetSeenCall).
   */
  async addEnding(record: ActivationRecord, redact: (text: string) => string, parts: Omit<ActivationEndParts, 'record'>): Promise<{ text: string; streakEnded: boolean; releaseLost: boolean }> {
    const { call, text } = this.addCall(record, redact);
    return { text, ...(await this.#scripts.activationEnd({ ...parts, record: call })) };
  }

  /** add()'s script call (its keys and arguments), with the text it stores. */
  addCall(record: ActivationRecord, redact: (text: string) => string = (t) => t): { call: ScriptCall; text: string } {
    const text = redact(JSON.stringify(boundedRecord(record, redact)));
    // Every key from the agent's shard: the agent's list, the shard's list of all agents, the shard's byte totals.
    const keys = this.#layout.of(record.agent);
    return { call: addActivationRecordCall([keys.activationRecords(record.agent), keys.allActivationRecords, keys.recordBytes], text, this.channel, this.#keepPerShard, this.#now()), text };
  }

  /** Channel on which each held-mentions line (heldRecord) is announced. */
  get heldChannel(): string {
    return this.#layout.home.heldRecordsChannel;
  }

  /**
   * Stores a held-mentions line (heldRecord) in lists of its own: `warren logs` shows them among the records, while
   * what reads the records as activations (the agent's last outcome in `warren status`, the failure tests) does not
   * meet them.
   */
  async addHeld(record: ActivationRecord): Promise<void> {
    const keys = this.#layout.of(record.agent);
    await this.#scripts.addActivationRecord(addActivationRecordCall([keys.heldRecords(record.agent), keys.allHeldRecords, keys.recordBytes], JSON.stringify(record), this.heldChannel, this.#keepPerShard, this.#now()));
  }

  /** Held-mentions lines, newest first. */
  recentHeld(opts: { agent?: string; limit?: number } = {}): Promise<ActivationRecord[]> {
    const limit = opts.limit ?? 20;
    if (opts.agent) return this.#read(this.#layout.of(opts.agent).heldRecords(opts.agent), limit);
    return this.#readAll((k) => k.allHeldRecords, limit);
  }

  /** Newest first. */
  recent(opts: { agent?: string; limit?: number } = {}): Promise<ActivationRecord[]> {
    const limit = opts.limit ?? 20;
    if (opts.agent) return this.#read(this.#layout.of(opts.agent).activationRecords(opts.agent), limit);
    return this.#readAll((k) => k.allActivationRecords, limit);
  }

  /** The fleet's list: each shard's newest `limit`, merged newest first. */
  async #readAll(list: (keys: RedisKeys) => string, limit: number): Promise<ActivationRecord[]> {
    const perShard = await Promise.all(this.#layout.shards.map((k) => this.#read(list(k), limit)));
    return mergeNewestFirst(perShard, limit);
  }

  async #read(key: string, limit: number): Promise<ActivationRecord[]> {
    const rows = await this.#redis.lrange(key, 0, limit - 1);
    return rows.flatMap((r) => {
      try {
        return [JSON.parse(r) as ActivationRecord];
      } catch {
        return [];
      }
    });
  }

  /** The newest record of each agent. */
  async lastOf(agents: readonly string[]): Promise<Map<string, ActivationRecord>> {
    const out = new Map<string, ActivationRecord>();
    if (agents.length === 0) return out;
    // One pipeline per shard: a cluster client refuses a pipeline whose keys span slots.
    await Promise.all(
      this.#layout.byShard(agents).map(async ({ keys, items: names }) => {
        const pipe = this.#redis.pipeline();
        for (const a of names) pipe.lindex(keys.activationRecords(a), 0);
        const rows = (await pipe.exec()) ?? [];
        names.forEach((a, i) => {
          const text = rows[i]?.[1];
          if (typeof text === 'string') out.set(a, JSON.parse(text) as ActivationRecord);
        });
      }),
    );
    // In the caller's order.
    return new Map(agents.flatMap((a) => (out.has(a) ? [[a, out.get(a)!] as const] : [])));
  }
}

/** When a record was stored, about: its end (records are pushed as activations end, not as they start). */
function endedAt(r: ActivationRecord): number {
  const start = Date.parse(r.started_at);
  return (Number.isNaN(start) ? 0 : start) + (Number(r.duration_ms) || 0);
}

/**
 * Lists each newest first (as stored) merged into one, newest first, at most `limit`: each list keeps its own order
 * (a merge, not a sort), so one list comes back as it is.
 */
export function mergeNewestFirst(lists: readonly (readonly ActivationRecord[])[], limit: number): ActivationRecord[] {
  if (lists.length === 1) return lists[0]!.slice(0, limit);
  const at = lists.map(() => 0);
  const out: ActivationRecord[] = [];
  while (out.length < limit) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      const r = lists[i]![at[i]!];
      if (r && (best < 0 || endedAt(r) > endedAt(lists[best]![at[best]!]!))) best = i;
    }
    if (best < 0) break;
    out.push(lists[best]![at[best]!++]!);
  }
  return out;
}

/**
 * The record as stored: every long text cut to its head (with its full length), and the events that fit in
 * MAX_RECORD_CHARS, the first and the last ones (how it started and how it ended). A text is redacted before it is
 * cut, so a secret at the cut is not left half shown.
 */
export function boundedRecord(record: ActivationRecord, redact: (text: string) => string = (t) => t): ActivationRecord {
  const cut = (t: string): string => (t.length > RECORD_FIELD_CHARS ? `${redact(t).slice(0, RECORD_FIELD_CHARS)}…` : t);
  const head = { ...record, events: [] as ActivationEvent[], ...(record.error !== undefined ? { error: cut(record.error) } : {}) };
  let budget = MAX_RECORD_CHARS - JSON.stringify(head).length;
  const candidates = record.events.length > MAX_EVENTS ? [...record.events.slice(0, MAX_EVENTS / 2), ...record.events.slice(-MAX_EVENTS / 2)] : record.events;
  const events = candidates.map((e) => boundedEvent(e, cut));
  const sizes = events.map((e) => JSON.stringify(e).length + 1);
  // From both ends towards the middle, while they fit.
  const keep = new Array<boolean>(events.length).fill(false);
  for (let lo = 0, hi = events.length - 1, fromStart = true; lo <= hi; fromStart = !fromStart) {
    const i = fromStart ? lo++ : hi--;
    if (sizes[i]! > budget) break;
    budget -= sizes[i]!;
    keep[i] = true;
  }
  const kept = events.filter((_, i) => keep[i]);
  const dropped = record.events.length - kept.length;
  return { ...head, events: kept, ...(dropped > 0 ? { events_dropped: dropped } : {}) };
}

/** One event with its long texts cut: the answer and the tool call's arguments keep their full length beside them. */
function boundedEvent(e: ActivationEvent, cut: (t: string) => string): ActivationEvent {
  switch (e.type) {
    case 'agent_response':
      return e.text.length > RECORD_FIELD_CHARS ? { ...e, text: cut(e.text), full_length: e.text.length } : e;
    case 'tool_call': {
      const json = JSON.stringify(e.arguments);
      return json.length > RECORD_FIELD_CHARS ? { ...e, arguments: {}, arguments_excerpt: cut(json), full_length: json.length } : e;
    }
    default: {
      // Any other text an event carries (a message, a task, an excerpt, a CLI's detail) is cut the same way.
      let out: ActivationEvent | undefined;
      for (const [k, v] of Object.entries(e)) {
        if (typeof v === 'string' && v.length > RECORD_FIELD_CHARS) out = { ...(out ?? e), [k]: cut(v) };
      }
      return out ?? e;
    }
  }
}
