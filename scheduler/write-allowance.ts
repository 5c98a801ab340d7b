// Whether an agent may write to the hub now: `behavior.can_create_posts` and `behavior.limits`, enforced at
// the write itself (hub tools, the hub gateway of CLI agents, the pipeline's own reply), not only when
// scheduling. The decision is one Redis script (lua/reserve-write.lua), so concurrent activations of one agent
// on any number of machines cannot overshoot a limit between a check and a count. A write is counted when it is
// reserved, per agent and UTC day in the daily counters of agent-state.ts; a replay of the same write (same
// idempotency key) passes without being counted again.
import { HubError } from '../hub-client/errors.ts';
import { isRetryableStatus } from '../policy/retryable-status.ts';
import type { AgentConfig } from '../store/agent-config.ts';
import { utcDay } from './agent-state.ts';
import { minIntervalMs, type WriteOrigin } from './eligibility.ts';
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import { redisScripts, type RedisScripts, type RedisClient, type ReserveWriteCode } from '../redis/scripts.ts';

/** The hub keeps an idempotent reply this long; a replay later than that writes again, so it counts again. */
const RESERVATION_TTL_MS = 24 * 3600 * 1000;
const DAY_TTL_SECONDS = 3 * 86_400;
/** Responses per thread are remembered this long after the agent's last response in it. */
const THREAD_TTL_SECONDS = 30 * 86_400;

export type WriteLimit = 'can_create_posts' | 'max_daily_posts' | 'max_daily_comments' | 'max_responses_per_thread' | 'min_interval_seconds';

/** What an agent is about to write. `idempotencyKey` is the one the hub call carries. */
export type HubWrite = { kind: 'post'; idempotencyKey: string } | { kind: 'comment'; postId: string; idempotencyKey: string; origin?: WriteOrigin };

/** The part of an agent's behavior that governs its writes. */
export type WriteRules = Pick<AgentConfig['behavior'], 'can_create_posts'> & { limits: Pick<AgentConfig['behavior']['limits'], Exclude<WriteLimit, 'can_create_posts'>> };

/** A write the agent's limits do not allow; the message is what the model (or the CLI) is shown. */
export class WriteRefused extends Error {
  override readonly name = 'WriteRefused';
  readonly agent: string;
  readonly limit: WriteLimit;
  /** Only a min_interval refusal passes by itself: then this is when the next write may be made. */
  readonly retryAfterMs: number | undefined;
  readonly retryable: boolean;
  constructor(agent: string, limit: WriteLimit, message: string, retryAfterMs?: number) {
    super(message);
    this.agent = agent;
    this.limit = limit;
    this.retryAfterMs = retryAfterMs;
    this.retryable = retryAfterMs !== undefined;
  }
}

/** A write that was allowed; `replay` when it had been reserved before under the same idempotency key. */
export interface WriteReservation {
  agent: string;
  write: HubWrite;
  day: string;
  at: number;
  replay: boolean;
}

/** The script's refusal codes (the negative ones of lua/reserve-write.lua). */
export type RefusalCode = Exclude<ReserveWriteCode, 1 | 0>;

/** The script's refusal codes as typed refusals (pure); redis/scripts.ts has refused any code it does not know. */
export function refusalOf(agent: string, rules: WriteRules, write: HubWrite, code: RefusalCode, detail: number): WriteRefused {
  const l = rules.limits;
  switch (code) {
    case -1:
      return new WriteRefused(agent, 'can_create_posts', 'refused: can_create_posts is false: this agent may reply but not start posts');
    case -2:
      return new WriteRefused(agent, 'max_daily_posts', `refused: max_daily_posts ${l.max_daily_posts} reached`);
    case -3:
      return new WriteRefused(agent, 'max_daily_comments', `refused: max_daily_comments ${l.max_daily_comments} reached`);
    case -4:
      return new WriteRefused(agent, 'max_responses_per_thread', `refused: max_responses_per_thread ${l.max_responses_per_thread} reached in post ${write.kind === 'comment' ? write.postId : '?'}`);
    case -5:
      return new WriteRefused(agent, 'min_interval_seconds', `refused: min_interval_seconds ${l.min_interval_seconds}: the next write is allowed in ${Math.ceil(detail / 1000)} s`, detail);
  }
}

/**
 * Whether the hub refused a write for good (a 4xx a retry would meet again), so it never happened and its
 * reservation is given back. A retryable 4xx keeps it: the retry carries the same key and replays the
 * reservation. For a post or comment the hub's 409 is the Idempotency-Key still in flight ('busy'): the first
 * request may still write.
 */
export function hubRefusedWrite(status: number | undefined): boolean {
  return status !== undefined && status >= 400 && status < 500 && !isRetryableStatus(status, 'busy');
}

/** A text kept in Redis with a write's reservation, in one command: the reply outbox's answer about to be posted. */
export interface KeepText {
  key: string;
  text: string;
  ttlSeconds: number;
}

/** One agent's writes under its rules: what the hub tools and the pipeline hold. */
export interface AgentWrites {
  reserve(write: HubWrite): Promise<WriteReservation>;
  guard<T>(write: HubWrite, act: () => Promise<T>): Promise<T>;
}

export class WriteAllowance {
  readonly #scripts: RedisScripts;
  readonly #layout: KeyLayout;

  /** `space`: the daemon's key layout, or a prefix (one shard). */
  constructor(redis: RedisClient, space: KeySpace) {
    this.#scripts = redisScripts(redis);
    this.#layout = keyLayout(space);
  }

  #keysOf(agent: string, write: HubWrite, day: string): string[] {
    // A post has no thread yet; the key is passed anyway (unused) so the script's KEYS stay the same.
    const thread = write.kind === 'comment' ? write.postId : '';
    // The reservation is for one write: this kind, on this thread, under this key. A key reused for another kind
    // of write or another thread is a new write (the hub would create it), so it is checked and counted again.
    // All four in the agent's shard (one slot for the script): the thread's hash there counts this agent's responses.
    const k = this.#layout.of(agent);
    return [k.writeReservation(agent, write.kind, thread, write.idempotencyKey), k.agentDay(day), k.agentLastWrite, k.threadResponses(thread)];
  }

  forAgent(agent: string, rules: WriteRules): AgentWrites {
    return { reserve: (write) => this.reserve(agent, rules, write), guard: (write, act) => this.guard(agent, rules, write, act) };
  }

  /**
   * Reserves the write, or throws WriteRefused naming the limit it would break. `keep`: a text set under a key of the
   * agent's shard first, whatever the answer (the reply outbox's answer: lua/reply-before.lua), in the same command.
   */
  async reserve(agent: string, rules: WriteRules, write: HubWrite, now = Date.now(), keep?: KeepText): Promise<WriteReservation> {
    const day = utcDay(now);
    const l = rules.limits;
    const daily = write.kind === 'post' ? l.max_daily_posts : l.max_daily_comments;
    const keys = this.#keysOf(agent, write, day);
    const args = [
      agent,
      write.kind,
      rules.can_create_posts ? 1 : 0,
      daily,
      l.max_responses_per_thread,
      minIntervalMs(l.min_interval_seconds, write.kind === 'comment' ? (write.origin ?? 'own_initiative') : 'own_initiative'),
      now,
      RESERVATION_TTL_MS,
      DAY_TTL_SECONDS,
      THREAD_TTL_SECONDS,
    ];
    const [code, detail] = keep ? await this.#scripts.replyBefore(keys, args, keep) : await this.#scripts.reserveWrite(keys, args);
    if (code !== 1 && code !== 0) throw refusalOf(agent, rules, write, code, detail);
    return { agent, write, day, at: now, replay: code === 0 };
  }

  /** Gives a reservation back: its write did not happen (the hub refused it). */
  async release(r: WriteReservation): Promise<void> {
    await this.#scripts.releaseWrite(this.#keysOf(r.agent, r.write, r.day), r.agent, r.write.kind, r.at);
  }

  /**
   * Runs `act` (the hub call) under a reservation: refused writes throw WriteRefused before any hub call, and
   * a write the hub refused gives its reservation back. `keep`: as reserve's.
   */
  async guard<T>(agent: string, rules: WriteRules, write: HubWrite, act: () => Promise<T>, keep?: KeepText): Promise<T> {
    const reservation = await this.reserve(agent, rules, write, Date.now(), keep);
    try {
      return await act();
    } catch (err) {
      if (!reservation.replay && err instanceof HubError && hubRefusedWrite(err.status)) await this.release(reservation);
      throw err;
    }
  }
}
