// Which of an agent's unread notifications are already somebody's work. The hub keeps notifications unread
// until they are answered, so without this the scheduler would queue a follow-up for work already under
// way, and that follow-up would find nothing to do.
//
// The answer is read atomically from BullMQ's own per-agent deduplication state plus the running
// activation's claim, so there is no moment between two runs in which the inbox looks unowned:
// - a queued or started notification activation that has not read the inbox yet holds all of it (it will
//   read everything unread now), and so does a notification follow-up BullMQ keeps for after the run;
// - once a run has read its inbox it claims that many, and settles the claim as it marks them read;
// - an exploration activation holds nothing.
// Counts, not ids, so the scheduler can compare them with the unread counts its intake already has.
import { RedisKeys } from '../redis/keys.ts';
import { redisScripts, type RedisClient, type RedisScripts } from '../redis/scripts.ts';

/** What a run holds of its agent's inbox, and the claim version of its last decrease. */
export interface InboxHold {
  /** Unread notifications somebody will handle; `Infinity` when a queued or starting run will read them all. */
  held: number;
  version: number;
}

export class InboxClaims {
  readonly #redis: RedisClient;
  readonly #keys: RedisKeys;
  readonly #scripts: RedisScripts;

  /** `prefix` is the daemon's Redis prefix, which is also BullMQ's. */
  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#keys = new RedisKeys(prefix);
    this.#scripts = redisScripts(redis);
  }

  /**
   * The claim of one attempt (`attempt`: unique per attempt, e.g. BullMQ's lock token) of one run (job) of one
   * agent. `ttlMs` bounds a claim whose worker died.
   */
  forRun(agent: string, jobId: string, attempt: string, ttlMs: number): InboxClaim {
    const keys = [this.#keys.inboxHold(agent), this.#keys.inboxHoldVersion] as const;
    const scripts = this.#scripts;
    return {
      begin: () => scripts.inboxBegin([...keys, this.#keys.dedup(agent).next], jobId, attempt, ttlMs),
      claim: (count) => scripts.inboxClaim(agent, keys, jobId, attempt, ttlMs, count),
      settle: async (count) => (count > 0 ? scripts.inboxSettle(agent, keys, jobId, attempt, count) : undefined),
      release: () => scripts.inboxRelease(agent, keys, jobId, attempt),
    };
  }

  /** Read before the intake; holds changed after it may be compared with stale unread counts. */
  async version(): Promise<number> {
    return Number((await this.#redis.get(this.#keys.inboxHoldVersion)) ?? 0);
  }

  /** The holds of many agents, in one atomic round trip (agents nobody holds anything of are left out). */
  async heldByMany(agents: readonly string[]): Promise<Map<string, InboxHold>> {
    const out = new Map<string, InboxHold>();
    if (agents.length === 0) return out;
    const k = this.#keys;
    const values = await this.#scripts.inboxHeld(k.inboxHoldVersion, { jobName: 'notification', job: k.dedup('').jobPrefix, hold: k.inboxHoldPrefix, dedupCurrent: k.dedupCurrentPrefix, dedupNext: k.dedupNextPrefix }, agents);
    agents.forEach((a, i) => {
      const held = values[2 * i] ?? 0;
      const version = values[2 * i + 1] ?? 0;
      if (held !== 0 || version !== 0) out.set(a, { held: held === -1 ? Infinity : held, version });
    });
    return out;
  }
}

/** One run's side of the claim; the worker begins and releases it, the activation claims and settles. */
export interface InboxClaim {
  /** The run started and has not read the inbox: it holds all of it. */
  begin(): Promise<void>;
  /** The run read `count` unread notifications. Throws InboxClaimLost when a later attempt of the run began. */
  claim(count: number): Promise<void>;
  /** `count` claimed notifications were marked read. Throws InboxClaimLost when a later attempt began. */
  settle(count: number): Promise<void>;
  /** The run is over. Throws InboxClaimLost when a later attempt began (which then holds the inbox). */
  release(): Promise<void>;
}

/**
 * Whether an agent has unread notifications beyond those somebody holds (pure). `versionBeforeIntake` is
 * the claim version read before the unread counts were: a hold that shrank since may have shrunk by
 * notifications those counts still include, so the agent is looked at again next round instead.
 * Work is delayed by at most a round, never doubled, never lost.
 */
export function hasUnclaimedWork(unread: number, hold: InboxHold | undefined, versionBeforeIntake: number): boolean {
  if (hold && hold.version > versionBeforeIntake) return false;
  return unread > (hold?.held ?? 0);
}
