// Every Lua script of warren (redis/lua/*.lua), one typed method each. Scripts are registered once per
// connection with ioredis `defineCommand`, so they run by EVALSHA (the body is sent again only after a NOSCRIPT,
// e.g. on a fresh server), also inside pipelines. The keys a script touches are passed as KEYS, so on Redis Cluster
// the command is routed to the node that owns them; they share one hash tag (redis/keys.ts).
import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';

/** A single Redis or a Redis Cluster: what every Redis user of warren takes. */
export type RedisClient = Redis | Cluster;

/** A run's inbox claim was taken over by a later attempt of the same job: this attempt must not act on its inbox. */
export class InboxClaimLost extends Error {
  override readonly name = 'InboxClaimLost';
  readonly agent: string;
  readonly jobId: string;
  readonly attempt: string;
  readonly step: 'claim' | 'settle' | 'release';
  constructor(step: 'claim' | 'settle' | 'release', agent: string, jobId: string, attempt: string) {
    super(`inbox ${step} of agent ${agent} lost: job ${jobId} attempt ${attempt} is no longer the run's latest attempt`);
    this.step = step;
    this.agent = agent;
    this.jobId = jobId;
    this.attempt = attempt;
  }
}

/**
 * A script answered with a code its caller does not know: the script (lua/<script>.lua) and this file are out of
 * step (a partial deploy, an edited script). Never read as some known answer: an unknown code of the write
 * reservation once passed for a min_interval refusal.
 */
export class UnexpectedScriptReply extends Error {
  override readonly name = 'UnexpectedScriptReply';
  /** The script's file name in lua/, without `.lua`. */
  readonly script: string;
  readonly reply: unknown;
  constructor(script: string, reply: unknown, known: readonly number[]) {
    super(`Redis script ${script}.lua answered ${JSON.stringify(reply)}; its callers know the codes ${known.join(', ')}`);
    this.script = script;
    this.reply = reply;
  }
}

/** `reply` as one of the codes `script` is known to answer, else UnexpectedScriptReply. */
function knownCode<C extends number>(script: string, reply: unknown, known: readonly C[]): C {
  if (typeof reply === 'number' && (known as readonly number[]).includes(reply)) return reply as C;
  throw new UnexpectedScriptReply(script, reply, known);
}

/** lua/reserve-write.lua's codes: 1 reserved, 0 a replay; the refusals are negative (scheduler/write-allowance.ts). */
export type ReserveWriteCode = 1 | 0 | -1 | -2 | -3 | -4 | -5;
const RESERVE_WRITE_CODES: readonly ReserveWriteCode[] = [1, 0, -1, -2, -3, -4, -5];
const CLAIM_CODES = [1, -1] as const;
const TASK_ADD_CODES = [1, 0, -1] as const;
const BOOLEAN_CODES = [0, 1] as const;

const lua = (name: string): string => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');

/**
 * A phase script (lua/<name>.lua) with the scripts it runs: each part's file becomes a Lua function of its own KEYS
 * and ARGV (`inbox-open.lua` → `inbox_open(keys, args)`), so a part runs exactly as it does alone and has one
 * source. One phase of an activation is then one command, one round trip, where it was one per part.
 */
const phase = (name: string, parts: readonly string[]): string =>
  [...parts.map((p) => `local ${p.replaceAll('-', '_')} = function(KEYS, ARGV)\n${lua(p)}\nend\n`), lua(name)].join('');

// Name on the connection → script body and its number of keys.
/** How much of the activation records Redis keeps (README "Records and Redis memory"): per list, the oldest go first. */
export interface RecordRetention {
  /** Records per agent. */
  perAgent: number;
  /** Records of all agents together (what `warren logs` without --agent reads). */
  overall: number;
  /** Bytes of one agent's records. */
  perAgentBytes: number;
  /** Bytes of the overall list. */
  overallBytes: number;
  /** Records older than this go; a list expires this long after its last record. */
  maxAgeMs: number;
}

const SCRIPTS = {
  warrenInboxHeld: { lua: lua('inbox-held'), keys: 1 },
  warrenInboxSettle: { lua: lua('inbox-settle'), keys: 2 },
  warrenInboxRelease: { lua: lua('inbox-release'), keys: 2 },
  warrenLeaseAcquire: { lua: lua('lease-acquire'), keys: 1 },
  warrenLeaseRelease: { lua: lua('lease-release'), keys: 1 },
  warrenRecordFailure: { lua: lua('record-failure'), keys: 3 },
  warrenHoldUntil: { lua: lua('hold-until'), keys: 1 },
  warrenReserveWrite: { lua: lua('reserve-write'), keys: 4 },
  warrenReleaseWrite: { lua: lua('release-write'), keys: 4 },
  warrenExplorationFacts: { lua: lua('exploration-facts'), keys: 4 },
  warrenAddActivationRecord: { lua: lua('add-activation-record'), keys: 3 },
  warrenRecordActivated: { lua: lua('record-activated'), keys: 5 },
  warrenAgentHolds: { lua: lua('agent-holds'), keys: 3 },
  warrenActivationStart: { lua: lua('activation-start'), keys: 3 },
  // The request pacer takes as many buckets as a request is paced by: the key count goes first (numberOfKeys absent).
  warrenPaceTake: { lua: lua('pace-take'), keys: undefined },
  warrenPacePenalise: { lua: lua('pace-penalise'), keys: 1 },
  warrenPaceObserve: { lua: lua('pace-observe'), keys: 1 },
  warrenTaskAdd: { lua: lua('task-add'), keys: 4 },
  warrenTaskNext: { lua: lua('task-next'), keys: 3 },
  warrenTaskSettle: { lua: lua('task-settle'), keys: 5 },
  warrenTaskRelease: { lua: lua('task-release'), keys: 1 },
  warrenTasksWaiting: { lua: lua('tasks-waiting'), keys: 1 },
  warrenA2aTaskSave: { lua: lua('a2a-task-save'), keys: 2 },
  warrenPendingAdd: { lua: lua('pending-add'), keys: 2 },
  // One per phase of an activation (issue 32: warren's own round trips per activation), each made of the scripts above.
  warrenActivationOpen: { lua: phase('activation-open', ['activation-start', 'inbox-open']), keys: undefined },
  warrenReplyBefore: { lua: phase('reply-before', ['reserve-write']), keys: 5 },
  warrenReplyAfter: { lua: phase('reply-after', ['outbox-drop', 'inbox-settle']), keys: 3 },
  warrenActivationEnd: { lua: phase('activation-end', ['record-activated', 'add-activation-record', 'outbox-drop', 'inbox-release', 'budget-seen']), keys: undefined },
} as const;

/** The body of each script as it is sent (phase scripts with their parts): tests name EVALSHA's hashes by it. */
export function scriptBodies(): ReadonlyMap<string, string> {
  return new Map(Object.entries(SCRIPTS).map(([command, s]) => [command, s.lua]));
}

type ScriptName = keyof typeof SCRIPTS;
type Arg = string | number;

/**
 * One script's keys and arguments as the store that owns them describes them (the *Call functions below), so a phase
 * script (lua/activation-end.lua) can run it with others in one command, and the script's own method alone.
 */
export interface ScriptCall {
  keys: readonly string[];
  args: readonly Arg[];
}

/** lua/record-activated.lua's keys and arguments: the activation's time and usage; `resetBackoff` also ends failures and backoff. */
export function recordActivatedCall(keys: readonly [lastActivated: string, day: string, failures: string, lastFailure: string, backoffUntil: string], agent: string, at: number, usage: { tokensInput: number; tokensOutput: number; costUsd: number }, ttlSeconds: number, resetBackoff: boolean): ScriptCall {
  return { keys, args: [agent, at, Math.round(usage.tokensInput), Math.round(usage.tokensOutput), usage.costUsd, ttlSeconds, resetBackoff ? 1 : 0] };
}

/** lua/add-activation-record.lua's keys and arguments: `record` pushed to both lists, each trimmed to `keep`, and published on `channel`. */
export function addActivationRecordCall(keys: readonly [agent: string, all: string, byteTotals: string], record: string, channel: string, keep: RecordRetention, now: number): ScriptCall {
  const cutoff = new Date(now - keep.maxAgeMs).toISOString();
  return { keys, args: [record, keep.perAgent, keep.overall, channel, keep.perAgentBytes, keep.overallBytes, cutoff, keep.maxAgeMs] };
}

/** lua/budget-seen.lua's keys and arguments: `status`, as the hub answered it `at` (epoch ms), for `agent`. */
export function budgetSeenCall(key: string, agent: string, status: string, at: number): ScriptCall {
  return { keys: [key], args: [agent, status, at] };
}

/** The parts of lua/activation-end.lua, each as its store describes it; only the record is always there. */
export interface ActivationEndParts {
  activated?: ScriptCall;
  record: ScriptCall;
  outbox?: ScriptCall;
  release?: ScriptCall;
  budget?: ScriptCall;
}

/** lua/outbox-drop.lua's keys: the reply outbox entry of an answer now on the hub. */
export function outboxDropCall(outboxKey: string): ScriptCall {
  return { keys: [outboxKey], args: [] };
}

/** lua/inbox-release.lua's keys and arguments. */
export function inboxReleaseCall(keys: readonly [hold: string, version: string], jobId: string, attempt: string): ScriptCall {
  return { keys, args: [jobId, attempt] };
}

/** lua/reserve-write.lua's answer (also reply-before.lua's), or UnexpectedScriptReply. */
function reserveWriteReply(reply: unknown): [code: ReserveWriteCode, detail: number] {
  const [code, detail] = Array.isArray(reply) ? (reply as unknown[]) : [reply];
  if (typeof detail !== 'number') throw new UnexpectedScriptReply('reserve-write', reply, RESERVE_WRITE_CODES);
  return [knownCode('reserve-write', code, RESERVE_WRITE_CODES), detail];
}
// An array argument is sent as its elements (ioredis flattens): a spread of 100,000 names would overflow the stack.
type Defined = Record<ScriptName, (...args: Array<Arg | readonly Arg[]>) => Promise<unknown>>;

const registered = new WeakMap<RedisClient, RedisScripts>();

/** The scripts on `conn`, registered on first use (once per connection). */
export function redisScripts(conn: RedisClient): RedisScripts {
  let scripts = registered.get(conn);
  if (!scripts) {
    scripts = new RedisScripts(conn);
    registered.set(conn, scripts);
  }
  return scripts;
}

export class RedisScripts {
  readonly #run: Defined;

  constructor(conn: RedisClient) {
    for (const [name, s] of Object.entries(SCRIPTS)) conn.defineCommand(name, s.keys === undefined ? { lua: s.lua } : { lua: s.lua, numberOfKeys: s.keys });
    this.#run = conn as unknown as Defined;
  }

  /** lua/inbox-held.lua: per agent [held (-1 = all), version]; the keys are made from the prefixes. */
  async inboxHeld(versionKey: string, prefixes: { jobName: string; job: string; hold: string; dedupCurrent: string; dedupNext: string }, agents: readonly string[]): Promise<number[]> {
    return (await this.#run.warrenInboxHeld(versionKey, prefixes.jobName, prefixes.job, prefixes.hold, prefixes.dedupCurrent, prefixes.dedupNext, agents)) as number[];
  }

  /**
   * lua/activation-open.lua: the run's claim of the `count` notifications it read (InboxClaimLost when a later attempt
   * of the job holds the inbox), with activation-start's answer ([paused, backoff-until, posts today, comments today],
   * null where unset) and the text each of `outboxKeys` holds (undefined where none), in their order.
   */
  async activationOpen(agent: string, start: readonly [paused: string, backoffUntil: string, day: string], inbox: readonly [hold: string, version: string, keptFollowUp: string], outboxKeys: readonly string[], run: { jobId: string; attempt: string; started: number; ttlMs: number }, count: number): Promise<{ start: Array<string | null>; texts: Array<string | undefined> }> {
    const reply = await this.#run.warrenActivationOpen(6 + outboxKeys.length, ...start, ...inbox, outboxKeys, agent, run.jobId, run.attempt, run.started, run.ttlMs, count);
    const [code, ...rest] = Array.isArray(reply) ? (reply as unknown[]) : [reply];
    if (knownCode('activation-open', code, CLAIM_CODES) === -1) throw new InboxClaimLost('claim', agent, run.jobId, run.attempt);
    if (rest.length !== 4 + outboxKeys.length || rest.some((t) => t !== null && typeof t !== 'string')) throw new UnexpectedScriptReply('activation-open', reply, CLAIM_CODES);
    const texts = rest as Array<string | null>;
    return { start: texts.slice(0, 4), texts: texts.slice(4).map((t) => t ?? undefined) };
  }

  /** lua/reply-after.lua: `outboxKey` dropped, then `count` settled. Throws InboxClaimLost when a later attempt began since. */
  async replyAfter(agent: string, keys: readonly [hold: string, version: string], outboxKey: string, jobId: string, attempt: string, count: number): Promise<void> {
    if (knownCode('reply-after', await this.#run.warrenReplyAfter(...keys, outboxKey, jobId, attempt, count), CLAIM_CODES) === -1) throw new InboxClaimLost('settle', agent, jobId, attempt);
  }

  /**
   * lua/activation-end.lua: the parts described by their stores (recordActivatedCall, addActivationRecordCall,
   * outboxDropCall, inboxReleaseCall, budgetSeenCall), run in one command. `streakEnded`: record-activated's answer
   * (false without that part); `releaseLost`: inbox-release answered that a later attempt holds the inbox now.
   */
  async activationEnd(parts: ActivationEndParts): Promise<{ streakEnded: boolean; releaseLost: boolean }> {
    const calls = [parts.activated, parts.record, parts.outbox, parts.release, parts.budget];
    const counts = calls.flatMap((c) => (c ? [c.keys.length, c.args.length] : [0, 0]));
    const keys = calls.flatMap((c) => c?.keys ?? []);
    const reply = await this.#run.warrenActivationEnd(keys.length, keys, counts, calls.flatMap((c) => c?.args ?? []));
    const [activated, released] = Array.isArray(reply) ? (reply as unknown[]) : [];
    const streakEnded = parts.activated ? knownCode('record-activated', activated, BOOLEAN_CODES) === 1 : false;
    const releaseLost = parts.release ? knownCode('inbox-release', released, CLAIM_CODES) === -1 : false;
    return { streakEnded, releaseLost };
  }


  /** Throws InboxClaimLost when a later attempt of the job began since. */
  async inboxSettle(agent: string, keys: readonly [hold: string, version: string], jobId: string, attempt: string, count: number): Promise<void> {
    if (knownCode('inbox-settle', await this.#run.warrenInboxSettle(...keys, jobId, attempt, count), CLAIM_CODES) === -1) throw new InboxClaimLost('settle', agent, jobId, attempt);
  }

  /** lua/inbox-release.lua (inboxReleaseCall). Throws InboxClaimLost when a later attempt of the job began since. */
  async inboxRelease(agent: string, call: ScriptCall, jobId: string, attempt: string): Promise<void> {
    if (knownCode('inbox-release', await this.#run.warrenInboxRelease(...call.keys, ...call.args), CLAIM_CODES) === -1) throw new InboxClaimLost('release', agent, jobId, attempt);
  }

  /** True when `token` holds the lease afterwards (it was free, or already ours and is renewed). */
  async leaseAcquire(key: string, token: string, ttlMs: number): Promise<boolean> {
    return knownCode('lease-acquire', await this.#run.warrenLeaseAcquire(key, token, ttlMs), BOOLEAN_CODES) === 1;
  }

  /** True when `token` held the lease and dropped it. */
  async leaseRelease(key: string, token: string): Promise<boolean> {
    return knownCode('lease-release', await this.#run.warrenLeaseRelease(key, token), BOOLEAN_CODES) === 1;
  }

  async recordFailure(keys: readonly [failures: string, lastFailure: string, backoffUntil: string], agent: string, at: number, notBefore: number, waits: readonly number[]): Promise<{ failures: number; backoffUntil: number }> {
    const [failures, backoffUntil] = (await this.#run.warrenRecordFailure(...keys, agent, at, notBefore, ...waits)) as [number, number];
    return { failures, backoffUntil };
  }

  async holdUntil(key: string, agent: string, until: number): Promise<void> {
    await this.#run.warrenHoldUntil(key, agent, until);
  }

  /**
   * lua/reserve-write.lua: [code, detail]; negative codes are refusals, mapped by scheduler/write-allowance.ts.
   * Any other code throws UnexpectedScriptReply.
   */
  async reserveWrite(keys: readonly string[], args: readonly Arg[]): Promise<[code: ReserveWriteCode, detail: number]> {
    return reserveWriteReply(await this.#run.warrenReserveWrite(...keys, ...args));
  }

  /**
   * lua/reply-before.lua: `keep.text` kept under `keep.key` (the reply outbox) for `keep.ttlSeconds`, then the write
   * reserved as by reserveWrite, in one command.
   */
  async replyBefore(keys: readonly string[], args: readonly Arg[], keep: { key: string; text: string; ttlSeconds: number }): Promise<[code: ReserveWriteCode, detail: number]> {
    return reserveWriteReply(await this.#run.warrenReplyBefore(...keys, keep.key, ...args, keep.text, keep.ttlSeconds));
  }

  /** True when there was a reservation to give back. */
  async releaseWrite(keys: readonly string[], agent: string, kind: string, at: number): Promise<boolean> {
    return knownCode('release-write', await this.#run.warrenReleaseWrite(...keys, agent, kind, at), BOOLEAN_CODES) === 1;
  }

  /**
   * lua/exploration-facts.lua: a line per agent joined by "\n": "-" when busy, else
   * "lastActivated,paused,backoffUntil,posts,comments", or only "lastActivated" when the other four are unset.
   */
  async explorationFacts(keys: readonly [lastActivated: string, paused: string, backoffUntil: string, day: string], dedupPrefix: string, agents: readonly string[]): Promise<string> {
    return (await this.#run.warrenExplorationFacts(...keys, dedupPrefix, agents)) as string;
  }

  /** lua/add-activation-record.lua (addActivationRecordCall): the record pushed to both lists (each trimmed to its retention) and published. */
  async addActivationRecord(call: ScriptCall): Promise<void> {
    await this.#run.warrenAddActivationRecord(...call.keys, ...call.args);
  }

  /** lua/record-activated.lua (recordActivatedCall): true when its reset ended a failure streak. */
  async recordActivated(call: ScriptCall): Promise<boolean> {
    return knownCode('record-activated', await this.#run.warrenRecordActivated(...call.keys, ...call.args), BOOLEAN_CODES) === 1;
  }

  /** lua/agent-holds.lua: per agent [paused, backoff-until], null where unset. */
  async agentHolds(keys: readonly [paused: string, backoffUntil: string, budgetSeen: string], agents: readonly string[]): Promise<Array<string | null>> {
    return (await this.#run.warrenAgentHolds(...keys, agents)) as Array<string | null>;
  }

  /** lua/activation-start.lua: [paused, backoff-until, posts today, comments today], null where unset. */
  async activationStart(keys: readonly [paused: string, backoffUntil: string, day: string], agent: string): Promise<Array<string | null>> {
    return (await this.#run.warrenActivationStart(...keys, agent)) as Array<string | null>;
  }

  /**
   * lua/pace-take.lua: one token from every bucket, or none; 0 when taken, else the ms to wait. `buckets` share a
   * hash tag with the prefix (redis/keys.ts pace), so on a cluster they live on one node.
   */
  async paceTake(buckets: ReadonlyArray<{ key: string; perMinute: number; burst: number }>, now: number, ttlMs: number): Promise<number> {
    const reply = await this.#run.warrenPaceTake(buckets.length, buckets.map((b) => b.key), now, ttlMs, buckets.flatMap((b) => [b.perMinute, b.burst]));
    if (typeof reply !== 'number' || reply < 0) throw new UnexpectedScriptReply('pace-take', reply, [0]);
    return reply;
  }

  /** lua/pace-penalise.lua: the bucket held back until `untilMs` (never shortened). */
  async pacePenalise(key: string, untilMs: number, now: number): Promise<void> {
    knownCode('pace-penalise', await this.#run.warrenPacePenalise(key, Math.ceil(untilMs), now), [1]);
  }

  /** lua/pace-observe.lua: the server's remaining allowance and reset folded into the bucket. */
  async paceObserve(key: string, remaining: number, resetAt: number, now: number, burst: number): Promise<void> {
    knownCode('pace-observe', await this.#run.warrenPaceObserve(key, remaining, Math.ceil(resetAt), now, burst), [1]);
  }

  /** lua/task-add.lua: 1 added, 0 its id was seen before, -1 the agent has as many tasks waiting as it may. */
  async taskAdd(keys: readonly [pending: string, bodies: string, seen: string, agents: string], id: string, createdAt: number, body: string, agent: string, seenTtlMs: number, mostPending: number): Promise<1 | 0 | -1> {
    return knownCode('task-add', await this.#run.warrenTaskAdd(...keys, id, createdAt, body, agent, seenTtlMs, mostPending), TASK_ADD_CODES);
  }

  /** lua/task-next.lua: the task `activationId` holds (claimed now or before), with how many activations claimed it. */
  async taskNext(keys: readonly [pending: string, bodies: string, claims: string], activationId: string, now: number, claimTtlMs: number): Promise<{ id: string; body: string | null; claims: number } | undefined> {
    const reply = await this.#run.warrenTaskNext(...keys, activationId, now, claimTtlMs);
    if (reply === null) return undefined;
    if (!Array.isArray(reply) || typeof reply[0] !== 'string' || typeof reply[2] !== 'number') throw new UnexpectedScriptReply('task-next', reply, []);
    return { id: reply[0], body: typeof reply[1] === 'string' ? reply[1] : null, claims: reply[2] };
  }

  /** lua/task-settle.lua: true when the task was still there. */
  async taskSettle(keys: readonly [pending: string, bodies: string, claims: string, seen: string, agents: string], id: string, agent: string, seenTtlMs: number): Promise<boolean> {
    return knownCode('task-settle', await this.#run.warrenTaskSettle(...keys, id, agent, seenTtlMs), BOOLEAN_CODES) === 1;
  }

  /** lua/a2a-task-save.lua: true when the state was written (never over an ended task, never backwards). */
  async a2aTaskSave(keys: readonly [task: string, index: string], id: string, body: string, state: number, rank: number, agent: string, caller: string, now: number, ttlMs: number, forwardOnly = false): Promise<boolean> {
    return knownCode('a2a-task-save', await this.#run.warrenA2aTaskSave(...keys, id, body, state, rank, agent, caller, now, ttlMs, forwardOnly ? 1 : 0), BOOLEAN_CODES) === 1;
  }

  /** lua/pending-add.lua: each of `items` put in the pending hash unless the handled set has its id; how many were. */
  async pendingAdd(keys: readonly [pending: string, handled: string], items: ReadonlyArray<readonly [id: string, json: string]>): Promise<number> {
    const reply = await this.#run.warrenPendingAdd(...keys, items.flat());
    if (typeof reply !== 'number' || reply < 0) throw new UnexpectedScriptReply('pending-add', reply, []);
    return reply;
  }

  /** lua/task-release.lua: true when `activationId` held the task and let it go. */
  async taskRelease(claims: string, id: string, activationId: string): Promise<boolean> {
    return knownCode('task-release', await this.#run.warrenTaskRelease(claims, id, activationId), BOOLEAN_CODES) === 1;
  }

  /** lua/tasks-waiting.lua: the agents with more tasks nobody holds than `task` jobs on their way to claim one. */
  async tasksWaiting(agents: string, prefixes: { pending: string; claims: string; job: string; dedupCurrent: string; dedupNext: string; jobName: string }, now: number): Promise<string[]> {
    return (await this.#run.warrenTasksWaiting(agents, prefixes.pending, prefixes.claims, now, prefixes.job, prefixes.dedupCurrent, prefixes.dedupNext, prefixes.jobName)) as string[];
  }
}
