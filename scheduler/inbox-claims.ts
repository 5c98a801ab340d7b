// Which of an agent's unread notifications are already somebody's work. The hub keeps notifications unread
// until they are answered, so without this the scheduler would queue a follow-up for work already under
// way, and that follow-up would find nothing to do.
//
// The answer is read atomically from BullMQ's own per-agent deduplication state plus the running
// activation's claim, so there is no moment between two runs in which the inbox looks unowned:
// - a queued or started notification activation that has not read the inbox yet holds all of it (it will
//   read everything unread now), and so does a notification follow-up BullMQ keeps for after the run;
// - once a run has read its inbox it claims that many (one command with what it reads of its agent as it starts,
//   lua/activation-open.lua), and settles the claim as it marks them read;
// - an exploration activation holds nothing.
// Counts, not ids, so the scheduler can compare them with the unread counts its intake already has.
//
// With shards (redis/key-layout.ts) an agent's hold, its shard's hold version and BullMQ's deduplication keys all sit
// in the agent's shard: a version is only comparable with the holds of its own shard (InboxHoldVersions).
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import { inboxReleaseCall, outboxDropCall, redisScripts, type RedisClient, type RedisScripts, type ScriptCall } from '../redis/scripts.ts';
import { startFactsOf, startKeysOf, type ActivationStartFacts } from './agent-state.ts';
import { AGENTS_PER_SCRIPT } from '../redis/agent-pages.ts';

/** What a run holds of its agent's inbox, and the claim version of its last decrease. */
export interface InboxHold {
  /** Unread notifications somebody will handle; `Infinity` when a queued or starting run will read them all. */
  held: number;
  version: number;
}

/** The hold version of every shard, read before an intake: `of(agent)` is what that agent's hold is compared with. */
export interface InboxHoldVersions {
  of(agent: string): number;
}

/** `version()` asked of a layout with more than one shard, where no one number stands for every agent's version. */
export class InboxVersionPerShard extends Error {
  override readonly name = 'InboxVersionPerShard';
  readonly shards: number;
  constructor(shards: number) {
    super(`the inbox hold version is kept per shard (${shards} shards): read versions() and compare each agent with versions.of(agent)`);
    this.shards = shards;
  }
}

export class InboxClaims {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;
  readonly #scripts: RedisScripts;

  /** `space`: the daemon's key layout, or its Redis prefix (one shard); a shard's prefix is also its BullMQ queue's. */
  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
    this.#scripts = redisScripts(redis);
  }

  /**
   * The claim of one attempt of one run (job) of one agent: `attempt` unique per attempt (BullMQ's lock token),
   * `started` its start number (BullMQ's attemptsStarted: a later attempt's is higher). `ttlMs` bounds a claim whose
   * worker died.
   */
  forRun(agent: string, jobId: string, attempt: { token: string; started: number }, ttlMs: number): InboxClaim {
    const k = this.#layout.of(agent);
    const keys = [k.inboxHold(agent), k.inboxHoldVersion] as const;
    const scripts = this.#scripts;
    const redis = this.#redis;
    const run = { jobId, attempt: attempt.token, started: attempt.started, ttlMs };
    const { token } = attempt;
    // Until open() is sent the run has no claim of its own (its job holds the whole inbox): nothing to release.
    let opened = false;
    // Sent with the activation's end (ending()) instead of alone: release() then has nothing left to send.
    let released = false;
    /** An answer on the hub whose outbox entry goes with the end (settleWithEnd). */
    let dropAtEnd: string | undefined;
    return {
      open: async (count, outboxKeys = []) => {
        opened = true; // sent: it may have run even if its answer is lost
        const { start, texts } = await scripts.activationOpen(agent, startKeysOf(k), [...keys, k.dedup(agent).next], outboxKeys, run, count);
        return { facts: startFactsOf(start), kept: texts };
      },
      settle: async (count, outboxKey) => {
        if (outboxKey !== undefined) return scripts.replyAfter(agent, keys, outboxKey, jobId, token, count);
        if (count > 0) await scripts.inboxSettle(agent, keys, jobId, token, count);
      },
      settleWithEnd: (outboxKey) => {
        // One answer only: the end carries one outbox entry, and a settle that waits for it holds the claim until then.
        if (dropAtEnd !== undefined) throw new Error(`settleWithEnd called twice in one run of ${agent} (${dropAtEnd}, ${outboxKey}): only the run's last answer may wait for its end`);
        dropAtEnd = outboxKey;
      },
      ending: () => ({ call: opened ? inboxReleaseCall(keys, jobId, token) : undefined, outbox: dropAtEnd === undefined ? undefined : outboxDropCall(dropAtEnd), sent: () => void (released = true) }),
      release: async () => {
        if (released || !opened) return;
        // The end's command did not run: what it would have carried goes alone, the answer first (as in reply-after.lua).
        if (dropAtEnd !== undefined) await redis.del(dropAtEnd);
        await scripts.inboxRelease(agent, inboxReleaseCall(keys, jobId, token), jobId, token);
      },
    };
  }

  /**
   * Read before the intake; holds changed after it may be compared with stale unread counts. One shard only (throws
   * InboxVersionPerShard otherwise): with more, versions().
   */
  async version(): Promise<number> {
    const shards = this.#layout.shards;
    if (shards.length !== 1) throw new InboxVersionPerShard(shards.length);
    return Number((await this.#redis.get(shards[0]!.inboxHoldVersion)) ?? 0);
  }

  /** version() of every shard (read at once, one GET per shard: their keys are in different slots). */
  async versions(): Promise<InboxHoldVersions> {
    const layout = this.#layout;
    const values = await Promise.all(layout.shards.map(async (k) => Number((await this.#redis.get(k.inboxHoldVersion)) ?? 0)));
    return { of: (agent) => values[layout.indexOf(agent)]! };
  }

  /** The holds of many agents, in one atomic round trip per shard (agents nobody holds anything of are left out). */
  async heldByMany(agents: readonly string[]): Promise<Map<string, InboxHold>> {
    const holds = new Array<InboxHold | undefined>(agents.length);
    // One script per page of a shard: the keys it makes from the prefixes are all in that shard's slot.
    await Promise.all(
      this.#layout.byShardInPages(agents, AGENTS_PER_SCRIPT).map(async ({ keys: k, items, at }) => {
        const values = await this.#scripts.inboxHeld(k.inboxHoldVersion, { jobName: 'notification', job: k.dedup('').jobPrefix, hold: k.inboxHoldPrefix, dedupCurrent: k.dedupCurrentPrefix, dedupNext: k.dedupNextPrefix }, items);
        at.forEach((pos, i) => {
          const held = values[2 * i] ?? 0;
          const version = values[2 * i + 1] ?? 0;
          if (held !== 0 || version !== 0) holds[pos] = { held: held === -1 ? Infinity : held, version };
        });
      }),
    );
    const out = new Map<string, InboxHold>();
    agents.forEach((a, i) => {
      const h = holds[i];
      if (h) out.set(a, h);
    });
    return out;
  }
}

/** What opening a claim answers besides the claim itself. */
export interface InboxOpened {
  /** Whether the agent is held back, and its posts and comments today (AgentStateStore.activationStart's answer). */
  facts: ActivationStartFacts;
  /** What each of the outbox keys holds (the answers an earlier attempt kept, activation/reply-outbox.ts), in their order. */
  kept: Array<string | undefined>;
}

/** One run's side of the claim; the activation opens and settles it, the worker releases it. */
export interface InboxClaim {
  /**
   * The run read `count` unread notifications: it holds that many from now (until then its job held all of them).
   * In the same command, what the activation reads of its agent as it starts and what each of `outboxKeys` holds.
   * Throws InboxClaimLost when a later attempt of the run holds the inbox.
   */
  open(count: number, outboxKeys?: readonly string[]): Promise<InboxOpened>;
  /**
   * `count` claimed notifications were marked read; `outboxKey`: the answer now on the hub, dropped from the reply
   * outbox in the same command (first, so even a lost claim leaves it behind no longer). Throws InboxClaimLost when
   * a later attempt began.
   */
  settle(count: number, outboxKey?: string): Promise<void>;
  /**
   * settle() for the run's last answer, now on the hub, when nothing but the end follows: nothing is sent now. The answer leaves the
   * reply outbox with the activation's end, just before the release lets go of every notification the run claimed
   * (so no settling of its own is needed): one command fewer. Only where nothing but the end follows (a stale
   * attempt learns it lost the claim from the end's release, with no further work to stop); once per run (throws
   * on a second call).
   */
  settleWithEnd(outboxKey: string): void;
  /**
   * The release as a part of the activation's end (lua/activation-end.lua: one command with its state and record),
   * with the outbox entry settleWithEnd left for it (no release where the claim was never opened); `sent()` once that
   * command ran, so release() sends nothing more.
   */
  ending(): { call: ScriptCall | undefined; outbox: ScriptCall | undefined; sent(): void };
  /** The run is over. Throws InboxClaimLost when a later attempt holds the inbox. */
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
