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
import type { Redis } from 'ioredis';
import { agentDedupKeys } from './activation-queue.ts';

/** What a run holds of its agent's inbox, and the claim version of its last decrease. */
export interface InboxHold {
  /** Unread notifications somebody will handle; `Infinity` when a queued or starting run will read them all. */
  held: number;
  version: number;
}

// For each agent: [held (-1 = all), version]. KEYS are unused: the job hash key comes from the
// deduplication key's value, as in BullMQ's own scripts, so this is for a single Redis, not a cluster.
const HELD = `
local out = {}
for i = 2, #ARGV, 4 do
  local claimKey, currentKey, nextKey, jobPrefix = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local claim = redis.call('HMGET', claimKey, 'job', 'count', 'version')
  local held = 0
  local job = redis.call('GET', currentKey)
  if job then
    if claim[1] == job and claim[2] then
      held = tonumber(claim[2])
    elseif redis.call('HGET', jobPrefix .. job, 'name') == ARGV[1] then
      held = -1
    end
    if redis.call('HGET', nextKey, 'name') == ARGV[1] then held = -1 end
  end
  out[#out + 1] = held
  out[#out + 1] = tonumber(claim[3]) or 0
end
return out`;

// KEYS: claim, version counter. ARGV: job id, attempt, then the script's own. Writes of the attempt that began
// last only: an attempt that lost its lock and still runs changes nothing.
const CLAIM = `
local owner = redis.call('HMGET', KEYS[1], 'job', 'attempt')
if owner[1] ~= ARGV[1] or owner[2] ~= ARGV[2] then return -1 end
redis.call('HSET', KEYS[1], 'count', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

// Decreases bump the version: a scheduler whose unread counts were taken before it must not trust them.
const SETTLE = `
local owner = redis.call('HMGET', KEYS[1], 'job', 'attempt')
if owner[1] ~= ARGV[1] or owner[2] ~= ARGV[2] then return -1 end
if redis.call('HEXISTS', KEYS[1], 'count') == 1 then redis.call('HINCRBY', KEYS[1], 'count', -tonumber(ARGV[3])) end
redis.call('HSET', KEYS[1], 'version', redis.call('INCR', KEYS[2]))
return 1`;

// The run is over: it holds nothing it has not read; until BullMQ finishes the job it is still "starting".
const RELEASE = `
local owner = redis.call('HMGET', KEYS[1], 'job', 'attempt')
if owner[1] ~= ARGV[1] or owner[2] ~= ARGV[2] then return -1 end
redis.call('HDEL', KEYS[1], 'count')
redis.call('HSET', KEYS[1], 'version', redis.call('INCR', KEYS[2]))
return 1`;

// A (re)started run has not read the inbox yet: whatever an earlier attempt claimed is void, and a notification
// follow-up BullMQ kept behind an earlier attempt is redundant, since this attempt reads everything unread now.
// KEYS[3]: BullMQ's kept follow-up of the agent.
const BEGIN = `
redis.call('HSET', KEYS[1], 'job', ARGV[1], 'attempt', ARGV[2])
redis.call('HDEL', KEYS[1], 'count')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if redis.call('HGET', KEYS[3], 'name') == 'notification' then redis.call('DEL', KEYS[3]) end
return 1`;

export class InboxClaims {
  readonly #redis: Redis;
  readonly #prefix: string;

  /** `prefix` is the daemon's Redis prefix, which is also BullMQ's. */
  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  #key(agent: string): string {
    // `inbox-hold`, not the earlier `inbox-claim` (a string): a key left by an older worker never meets these scripts.
    return `${this.#prefix}:inbox-hold:${agent}`;
  }

  get #versionKey(): string {
    return `${this.#prefix}:inbox-hold-version`;
  }

  /**
   * The claim of one attempt (`attempt`: unique per attempt, e.g. BullMQ's lock token) of one run (job) of one
   * agent. `ttlMs` bounds a claim whose worker died.
   */
  forRun(agent: string, jobId: string, attempt: string, ttlMs: number): InboxClaim {
    const keys = [this.#key(agent), this.#versionKey] as const;
    const redis = this.#redis;
    return {
      begin: async () => void (await redis.eval(BEGIN, 3, ...keys, agentDedupKeys(this.#prefix, agent).next, jobId, attempt, ttlMs)),
      claim: async (count) => void (await redis.eval(CLAIM, 2, ...keys, jobId, attempt, ttlMs, count)),
      settle: async (count) => void (count > 0 ? await redis.eval(SETTLE, 2, ...keys, jobId, attempt, count) : undefined),
      release: async () => void (await redis.eval(RELEASE, 2, ...keys, jobId, attempt)),
    };
  }

  /** Read before the intake; holds changed after it may be compared with stale unread counts. */
  async version(): Promise<number> {
    return Number((await this.#redis.get(this.#versionKey)) ?? 0);
  }

  /** The holds of many agents, in one atomic round trip (agents nobody holds anything of are left out). */
  async heldByMany(agents: readonly string[]): Promise<Map<string, InboxHold>> {
    const out = new Map<string, InboxHold>();
    if (agents.length === 0) return out;
    const args = agents.flatMap((a) => {
      const dedup = agentDedupKeys(this.#prefix, a);
      return [this.#key(a), dedup.current, dedup.next, dedup.jobPrefix];
    });
    const values = (await this.#redis.eval(HELD, 0, 'notification', ...args)) as number[];
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
  /** The run read `count` unread notifications. */
  claim(count: number): Promise<void>;
  /** `count` claimed notifications were marked read. */
  settle(count: number): Promise<void>;
  /** The run is over. */
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
