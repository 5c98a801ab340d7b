// Per-agent scheduling state shared through Redis, so schedulers, workers and `warren status` on different
// machines agree: failures (for backoff), last activation, pause flag, and today's counters.
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { BUDGET_STATUSES, type BudgetStatus } from '../hub-client/types.ts';
import { budgetSeenCall, recordActivatedCall, redisScripts, type RedisClient, type RedisScripts, type ScriptCall } from '../redis/scripts.ts';
import { AGENTS_PER_SCRIPT, FIELDS_PER_COMMAND } from '../redis/agent-pages.ts';

export interface AgentState {
  failures: number;
  lastFailureAt: number | undefined;
  /** Epoch ms the failure backoff ends (scheduler/backoff.ts), when one is running. */
  backoffUntil: number | undefined;
  lastActivatedAt: number | undefined;
  paused: boolean;
  /** Notifications given up on after repeated terminal failures (ever). */
  abandoned: number;
}

/** What holds an agent back: `warren pause`, or a failure backoff until then. */
export type AgentHold = Pick<AgentState, 'paused' | 'backoffUntil'>;

/** The hub's budget status as an activation read it, and when (epoch ms). */
export interface BudgetSeen {
  status: BudgetStatus;
  at: number;
}

/** What an intake round reads of each agent: what holds it back, and the budget status its last run read. */
export interface IntakeHold extends AgentHold {
  budgetSeen?: BudgetSeen;
}

/** 'status|epoch ms' as lua/budget-seen.lua stores it; undefined when unset or not a reading this version knows. */
function budgetSeenOf(value: string | null | undefined): BudgetSeen | undefined {
  const [status, at] = value?.split('|') ?? [];
  const known = BUDGET_STATUSES.find((s) => s === status);
  return known && Number.isFinite(Number(at)) ? { status: known, at: Number(at) } : undefined;
}

/** What an activation reads of its agent as it starts: what holds it back, and its posts and comments today. */
export interface ActivationStartFacts {
  hold: AgentHold;
  today: { posts: number; comments: number };
}

/** lua/activation-start.lua's keys for an agent (its shard's). */
export function startKeysOf(k: RedisKeys, day = utcDay()): [paused: string, backoffUntil: string, day: string] {
  return [k.agentPaused, k.agentBackoffUntil, k.agentDay(day)];
}

/** lua/activation-start.lua's answer (also part of activation-open.lua's): [paused, backoff-until, posts, comments], null where unset. */
export function startFactsOf([paused, until, posts, comments]: ReadonlyArray<string | null | undefined>): ActivationStartFacts {
  return { hold: holdOf(paused, until), today: { posts: Number(posts ?? 0), comments: Number(comments ?? 0) } };
}

/** A hold as the scripts answer it: the paused flag and the backoff's end, each null (or absent) when unset. */
function holdOf(paused: string | null | undefined, until: string | null | undefined): AgentHold {
  return { paused: paused === '1', backoffUntil: until ? Number(until) : undefined };
}

/** What exploration needs of an idle agent (AgentStateStore.explorationFacts). */
export interface ExplorationFacts extends Pick<AgentState, 'lastActivatedAt' | 'paused' | 'backoffUntil'> {
  /** Posts and comments made today. */
  today: { posts: number; comments: number };
}

export interface DailyCounters {
  activations: number;
  posts: number;
  comments: number;
  tokensInput: number;
  tokensOutput: number;
  costUsd: number;
}

/** Daily counters outlive their day a little, so `warren status` around midnight still reads yesterday's. */
const DAILY_TTL_SECONDS = 3 * 86_400;

/** The UTC day of `at`, e.g. 2026-11-23 (the hub's budget days are UTC too). */
export function utcDay(at: number | Date = Date.now()): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** Shared by every agent that wrote nothing today (most, most of the time): frozen, so sharing is safe. */
const NOTHING_TODAY: ExplorationFacts['today'] = Object.freeze({ posts: 0, comments: 0 });

/** One line of lua/exploration-facts.lua: undefined when busy. */
function parseFactsLine(line: string): ExplorationFacts | undefined {
  if (line === '-') return undefined;
  if (!line.includes(',')) return { lastActivatedAt: line ? Number(line) : undefined, paused: false, backoffUntil: undefined, today: NOTHING_TODAY };
  const [la, paused, bu, posts, comments] = line.split(',');
  return {
    lastActivatedAt: la ? Number(la) : undefined,
    paused: paused === '1',
    backoffUntil: bu ? Number(bu) : undefined,
    today: { posts: Number(posts || 0), comments: Number(comments || 0) },
  };
}

// Layout: one Redis hash per fact, one field per agent (and one hash per UTC day for the counters), so reading
// every agent's state is a few HMGETs with one reply each, not thousands of replies (10,000 agents: ~20 ms).
const DAY_FIELDS = ['activations', 'posts', 'comments', 'tokens_input', 'tokens_output', 'cost_usd'] as const;

// With shards (redis/key-layout.ts) each shard has these hashes for its own agents: an agent's state comes from its
// shard's keys, and a read over many agents is one read per shard, merged in the order asked. `once` is the fleet's.
export class AgentStateStore {
  readonly #redis: RedisClient;
  readonly #scripts: RedisScripts;
  readonly #layout: KeyLayout;

  /** `space`: the daemon's key layout, or a prefix (one shard). */
  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#scripts = redisScripts(redis);
    this.#layout = keyLayout(space);
  }

  #of(agent: string): RedisKeys {
    return this.#layout.of(agent);
  }

  /**
   * Counts a terminal failure and starts the wait for the new count, atomically (two workers failing at once
   * both count, and the longer wait stands). `waits[n-1]` is the wait after n failures (the last one repeats),
   * computed by the caller's policy (scheduler/backoff.ts); `notBefore` an earliest end (a provider's reset).
   */
  async recordFailure(agent: string, waits: readonly number[], opts: { at?: number; notBefore?: number } = {}): Promise<{ failures: number; backoffUntil: number }> {
    const at = opts.at ?? Date.now();
    const k = this.#of(agent);
    return this.#scripts.recordFailure([k.agentFailures, k.agentLastFailure, k.agentBackoffUntil], agent, at, opts.notBefore ?? 0, waits);
  }

  /** Holds the agent back until `until` without counting a failure (the hub failed, not the agent). */
  async holdUntil(agent: string, until: number): Promise<void> {
    await this.#scripts.holdUntil(this.#of(agent).agentBackoffUntil, agent, until);
  }

  /** True the first time it is asked for `key` (within `ttlMs`): what makes handling a final failure happen once. Fleet-wide. */
  async once(key: string, ttlMs: number): Promise<boolean> {
    return (await this.#redis.set(this.#layout.home.once(key), '1', 'PX', ttlMs, 'NX')) === 'OK';
  }

  /** A notification the agent was given up on (activation/notification-failures.ts); shown by `warren status`. */
  async recordAbandoned(agent: string, count = 1): Promise<void> {
    await this.#redis.hincrby(this.#of(agent).agentAbandoned, agent, count);
  }

  /**
   * `warren resume` also ends a backoff: the operator says the cause is fixed. The last failure's time stays until
   * the agent's next good run: it marks a streak that may have paused the agent, so that run ends the pause's status
   * too (recordActivated's answer; the fleet's ledger is asked only then).
   */
  async clearBackoff(agent: string): Promise<void> {
    const k = this.#of(agent);
    await this.#redis.multi().hdel(k.agentFailures, agent).hdel(k.agentBackoffUntil, agent).exec();
  }

  /**
   * The end of an activation (any outcome): what exploration's staleness order is based on, and today's usage.
   * `resetBackoff`: the run succeeded, so the failure count and any backoff end, in the same round trip. Resolves
   * true when that ended a failure streak (only then may the agent be paused by its failures: StatusPoster.ranWell).
   * Posts and comments are not counted here: every write counts itself as it is admitted (write-allowance.ts).
   */
  async recordActivated(agent: string, usage: { tokensInput: number; tokensOutput: number; costUsd: number }, opts: { at?: number; resetBackoff?: boolean } = {}): Promise<boolean> {
    return this.#scripts.recordActivated(this.activatedCall(agent, usage, opts));
  }

  /** recordActivated as a part of the activation's end script (RedisScripts.activationEnd). */
  activatedCall(agent: string, usage: { tokensInput: number; tokensOutput: number; costUsd: number }, opts: { at?: number; resetBackoff?: boolean } = {}): ScriptCall {
    const at = opts.at ?? Date.now();
    const k = this.#of(agent);
    return recordActivatedCall([k.agentLastActivated, k.agentDay(utcDay(at)), k.agentFailures, k.agentLastFailure, k.agentBackoffUntil], agent, at, usage, DAILY_TTL_SECONDS, opts.resetBackoff ?? false);
  }

  /** The budget status a run read (`at`: when) as a part of the activation's end script (RedisScripts.activationEnd). */
  budgetSeenCall(agent: string, seen: BudgetSeen): ScriptCall {
    return budgetSeenCall(this.#of(agent).agentBudgetSeen, agent, seen.status, seen.at);
  }

  async setPaused(agent: string, paused: boolean): Promise<void> {
    const key = this.#of(agent).agentPaused;
    if (paused) await this.#redis.hset(key, agent, 1);
    else await this.#redis.hdel(key, agent);
  }

  /**
   * What a daemon found about the agents it checked: `reasons` holds those it will not run (and why), every
   * other of `checked` loses its mark. Read by `warren status` and `warren doctor` on any machine.
   */
  async setNotRunnable(checked: readonly string[], reasons: ReadonlyMap<string, string>): Promise<void> {
    const cleared = checked.filter((a) => !reasons.has(a));
    // One transaction per page of a shard that has any of them (a MULTI's keys share one slot; a MULTI runs whole,
    // so one over a whole fleet's marks would hold Redis for all of them).
    await Promise.all(
      this.#layout.byShardInPages([...cleared, ...reasons.keys()], FIELDS_PER_COMMAND).map(async ({ keys, items }) => {
        const m = this.#redis.multi();
        const gone = items.filter((a) => !reasons.has(a));
        const marked = items.flatMap((a) => (reasons.has(a) ? [[a, reasons.get(a)!] as const] : []));
        if (gone.length) m.hdel(keys.agentNotRunnable, ...gone);
        if (marked.length) m.hset(keys.agentNotRunnable, Object.fromEntries(marked));
        await m.exec();
      }),
    );
  }

  /**
   * The loaded agents no executor of the daemon can run, with why (a key not set, a CLI not installed), replacing
   * what the last load said. Read by `warren status` and `warren agents`.
   */
  async setSkipped(reasons: ReadonlyMap<string, string>): Promise<void> {
    // Every shard's hash is replaced, those without any of the agents emptied.
    const byShard = new Map(this.#layout.shards.map((k) => [k, [] as Array<[string, string]>]));
    for (const entry of reasons) byShard.get(this.#of(entry[0]))!.push(entry);
    await Promise.all(
      [...byShard].map(async ([k, entries]) => {
        const m = this.#redis.multi().del(k.agentSkipped);
        if (entries.length) m.hset(k.agentSkipped, Object.fromEntries(entries));
        await m.exec();
      }),
    );
  }

  /** The agents the daemon skipped at its last load, with the reason. */
  skipped(agents: readonly string[]): Promise<Map<string, string>> {
    return this.#reasons((k) => k.agentSkipped, agents);
  }

  /** The agents marked not runnable, with the reason. */
  notRunnable(agents: readonly string[]): Promise<Map<string, string>> {
    return this.#reasons((k) => k.agentNotRunnable, agents);
  }

  /** The reasons a hash (each shard's `key`) keeps for those of `agents` it has one for. */
  async #reasons(key: (k: RedisKeys) => string, agents: readonly string[]): Promise<Map<string, string>> {
    const values = new Array<string | null>(agents.length);
    await Promise.all(
      this.#layout.byShardInPages(agents, FIELDS_PER_COMMAND).map(async ({ keys, items, at }) => {
        const got = (await this.#redis.call('HMGET', [key(keys), ...items])) as Array<string | null>;
        at.forEach((pos, i) => (values[pos] = got[i] ?? null));
      }),
    );
    const out = new Map<string, string>();
    agents.forEach((a, i) => {
      const v = values[i];
      if (v) out.set(a, v);
    });
    return out;
  }

  /**
   * States of many agents in one round trip. Field lists go to HMGET as one array (`call`): spread into
   * hmget(...fields), 100,000 agents overflowed the call stack.
   */
  async getMany(agents: readonly string[]): Promise<Map<string, AgentState>> {
    const states = new Array<AgentState>(agents.length);
    // One pipeline per page of a shard (its six hashes share the shard's slot).
    await Promise.all(
      this.#layout.byShardInPages(agents, FIELDS_PER_COMMAND).map(async ({ keys: k, items, at }) => {
        const rows = (await this.#redis
          .pipeline()
          .call('HMGET', [k.agentFailures, ...items])
          .call('HMGET', [k.agentLastFailure, ...items])
          .call('HMGET', [k.agentLastActivated, ...items])
          .call('HMGET', [k.agentPaused, ...items])
          .call('HMGET', [k.agentBackoffUntil, ...items])
          .call('HMGET', [k.agentAbandoned, ...items])
          .exec()) ?? [];
        const [failures, lastFailure, lastActivated, paused, until, abandoned] = rows.map((r) => (r[1] as Array<string | null> | undefined) ?? []);
        at.forEach((pos, i) => {
          const lf = lastFailure?.[i];
          const la = lastActivated?.[i];
          const bu = until?.[i];
          states[pos] = {
            failures: Number(failures?.[i] ?? 0),
            lastFailureAt: lf ? Number(lf) : undefined,
            backoffUntil: bu ? Number(bu) : undefined,
            lastActivatedAt: la ? Number(la) : undefined,
            paused: paused?.[i] === '1',
            abandoned: Number(abandoned?.[i] ?? 0),
          };
        });
      }),
    );
    const out = new Map<string, AgentState>();
    agents.forEach((a, i) => out.set(a, states[i]!));
    return out;
  }

  /**
   * What exploration decides on, for many agents in one command (lua/exploration-facts.lua), in the order asked:
   * undefined for an agent with an activation queued or running (not idle), else its state and today's posts and
   * comments. Fewer facts than getMany, and one command instead of eight: at 10,000 agents most of a round's CPU
   * went to building and parsing those.
   */
  async explorationFacts(agents: readonly string[], day = utcDay()): Promise<Array<ExplorationFacts | undefined>> {
    const out = new Array<ExplorationFacts | undefined>(agents.length);
    // A page per command (of one shard: a script's keys share its slot), all sent at once: Redis runs other clients'
    // commands between two pages, so a round over 100,000 agents never blocks it for the whole read (one script
    // over all of them held it for the whole read).
    await Promise.all(
      this.#layout.byShardInPages(agents, AGENTS_PER_SCRIPT).map(async ({ keys: k, items, at }) => {
        const keys = [k.agentLastActivated, k.agentPaused, k.agentBackoffUntil, k.agentDay(day)] as const;
        parseFactsReply(await this.#scripts.explorationFacts(keys, k.dedupCurrentPrefix, items), items.length, out, at);
      }),
    );
    return out;
  }

  /**
   * What an activation reads of its agent as it starts (lua/activation-start.lua, one command): whether it is held
   * back (`warren pause`, a backoff) and its posts and comments today (the context's "left today" lines). A
   * notification run reads it with its inbox claim instead (InboxClaim.begin).
   */
  async activationStart(agent: string, day = utcDay()): Promise<ActivationStartFacts> {
    return startFactsOf(await this.#scripts.activationStart(startKeysOf(this.#of(agent), day), agent));
  }

  /**
   * What holds each of many agents back, and the budget status its last run read, in one command
   * (lua/agent-holds.lua): what an intake round decides on.
   */
  async holdMany(agents: readonly string[]): Promise<Map<string, IntakeHold>> {
    const holds = new Array<IntakeHold>(agents.length);
    await Promise.all(
      this.#layout.byShardInPages(agents, AGENTS_PER_SCRIPT).map(async ({ keys: k, items, at }) => {
        const values = await this.#scripts.agentHolds([k.agentPaused, k.agentBackoffUntil, k.agentBudgetSeen], items);
        at.forEach((pos, i) => {
          const budgetSeen = budgetSeenOf(values[3 * i + 2]);
          holds[pos] = { ...holdOf(values[3 * i], values[3 * i + 1]), ...(budgetSeen ? { budgetSeen } : {}) };
        });
      }),
    );
    const out = new Map<string, IntakeHold>();
    agents.forEach((a, i) => out.set(a, holds[i]!));
    return out;
  }

  /** Posts and comments the agent made today (the context's "left today" lines): two of dailyMany's six fields. */
  async contributionsToday(agent: string, day = utcDay()): Promise<{ posts: number; comments: number }> {
    const [posts, comments] = await this.#redis.hmget(this.#of(agent).agentDay(day), `${agent}|posts`, `${agent}|comments`);
    return { posts: Number(posts ?? 0), comments: Number(comments ?? 0) };
  }

  /** Today's counters of many agents in one round trip. */
  async dailyMany(agents: readonly string[], day = utcDay()): Promise<Map<string, DailyCounters>> {
    const counters = new Array<DailyCounters>(agents.length);
    await Promise.all(
      this.#layout.byShardInPages(agents, Math.floor(FIELDS_PER_COMMAND / DAY_FIELDS.length)).map(async ({ keys, items, at }) => {
        const values = (await this.#redis.call('HMGET', [keys.agentDay(day), ...items.flatMap((a) => DAY_FIELDS.map((f) => `${a}|${f}`))])) as Array<string | null>;
        at.forEach((pos, i) => {
          const v = (k: number): number => Number(values[i * DAY_FIELDS.length + k] ?? 0);
          counters[pos] = { activations: v(0), posts: v(1), comments: v(2), tokensInput: v(3), tokensOutput: v(4), costUsd: v(5) };
        });
      }),
    );
    const out = new Map<string, DailyCounters>();
    agents.forEach((a, i) => out.set(a, counters[i]!));
    return out;
  }
}

/**
 * One page's reply (a line per agent) into `out`: `at` are the page's agents' positions in the caller's list. A
 * reply of another length is a broken script.
 */
function parseFactsReply(reply: string, count: number, out: Array<ExplorationFacts | undefined>, at: readonly number[]): void {
  let from = 0;
  for (let i = 0; i < count; i++) {
    if (from > reply.length) throw new Error(`exploration facts: ${i} lines for ${count} agents`);
    const nl = reply.indexOf('\n', from);
    const end = nl < 0 ? reply.length : nl;
    out[at[i]!] = parseFactsLine(reply.slice(from, end));
    from = end + 1;
  }
  if (from !== reply.length + 1) throw new Error(`exploration facts: more lines than ${count} agents`);
}
