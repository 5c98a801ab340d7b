// Approval requests in Redis (README "Approvals"): what waits for a person's yes, and the one decision on it. A
// request is written once (SET NX) with everything needed to carry it out in any daemon: a paused run's state
// and system prompt, or a CLI agent's held hub write. Its decision is written once too (SET NX: the first of
// two approvers wins, the second is told what was decided). A request stays "open" (one sorted set, scored by
// when it times out) until the work it held is done, so a daemon that died between a decision and the work
// finds it again (scheduler/approval-desk.ts). Everything here is redacted before it is written; the state
// holds the conversation as the model saw it (already redacted), never a key.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { RedisKeys } from '../redis/keys.ts';
import type { RedisClient } from '../redis/scripts.ts';
import { TASK_SOURCES } from './task-inbox.ts';

/** Who may decide: the watch page's operator session, the command line with the admin key; `timeout` is the clock. */
export type Approver = 'operator' | 'admin';
export type DecidedBy = Approver | 'timeout';

const Call = z.strictObject({ id: z.string(), name: z.string(), arguments: z.string() });

/** What the paused work was answering, so the resumed run finishes it as the paused one would have. */
export const ApprovalOriginSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('notification'), notificationId: z.string(), postId: z.string(), commentId: z.string().nullable(), from: z.string() }),
  z.strictObject({ kind: z.literal('exploration'), feedPostIds: z.array(z.string()) }),
  /** `meta`: the task's own small facts (an A2A task's ids), so the run that goes on tells its source how it ended. */
  z.strictObject({ kind: z.literal('task'), taskId: z.string(), source: z.enum(TASK_SOURCES), name: z.string(), meta: z.record(z.string(), z.string()).optional() }),
]);
export type ApprovalOrigin = z.infer<typeof ApprovalOriginSchema>;

const Work = z.discriminatedUnion('kind', [
  /** A run of the loop that stopped before its calls: the activation whose keys they keep, its prompt and state. */
  z.strictObject({ kind: z.literal('loop'), activationId: z.string(), system: z.string(), state: z.string(), origin: ApprovalOriginSchema }),
  /** A CLI agent's hub write through the gateway, held: made by the daemon after approval with its own key. */
  z.strictObject({ kind: z.literal('hub_write'), write: z.discriminatedUnion('kind', [z.strictObject({ kind: z.literal('post'), title: z.string().nullable(), content: z.string(), community: z.string().nullable() }), z.strictObject({ kind: z.literal('comment'), postId: z.string(), content: z.string(), parentId: z.string().nullable() })]), idempotencyKey: z.string() }),
  /** A new agent proposed from a template (propose_agent): its two files, written to the store after approval. */
  z.strictObject({ kind: z.literal('spawn'), name: z.string(), template: z.string(), purpose: z.string(), config: z.string(), prompt: z.string() }),
]);

export const ApprovalRequestSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,80}$/),
  agent: z.string(),
  createdAt: z.number(),
  /** Epoch ms the request is denied unless someone decided before. */
  expiresAt: z.number(),
  approvers: z.array(z.enum(['operator', 'admin'])).min(1),
  /** The calls that wait, for whoever decides: arguments as JSON text, redacted and capped. */
  calls: z.array(Call).min(1),
  work: Work,
});
export type ApprovalRequest = z.infer<typeof ApprovalRequestSchema>;

export const ApprovalDecisionSchema = z.strictObject({ kind: z.enum(['approved', 'denied']), note: z.string(), by: z.enum(['operator', 'admin', 'timeout']), at: z.number() });
export type ApprovalDecisionRecord = z.infer<typeof ApprovalDecisionSchema>;

/** A request with its decision (undefined while it waits). */
export interface ApprovalEntry {
  request: ApprovalRequest;
  decision: ApprovalDecisionRecord | undefined;
}

/** How long a done request and its decision are kept, for `warren approvals list --all` and late readers. */
export const DONE_RETENTION_S = 7 * 24 * 3600;
/** The most of a call's arguments a request shows. */
export const MAX_SHOWN_ARGUMENTS = 4_000;
/** The longest note a decision keeps. */
export const MAX_NOTE = 2_000;

export class UnknownApproval extends Error {
  override readonly name = 'UnknownApproval';
  readonly id: string;
  constructor(id: string) {
    super(`no approval request ${id} is waiting (it may be done, or the id is wrong: \`warren approvals list\`)`);
    this.id = id;
  }
}

export class ApproverNotAllowed extends Error {
  override readonly name = 'ApproverNotAllowed';
  readonly id: string;
  readonly by: Approver;
  constructor(id: string, agent: string, by: Approver, allowed: readonly Approver[]) {
    super(`approval ${id}: agent ${agent} takes decisions from ${allowed.join(' and ')} only (approvals.approvers), not from the ${by === 'operator' ? "watch page's operator" : 'command line with the admin key'}`);
    this.id = id;
    this.by = by;
  }
}

/** A decision asked for: `decided` now, or `already` decided before (the first decision stands). */
export type DecideResult = { kind: 'decided'; entry: ApprovalEntry & { decision: ApprovalDecisionRecord } } | { kind: 'already'; entry: ApprovalEntry & { decision: ApprovalDecisionRecord } };

export class ApprovalStore {
  readonly #redis: RedisClient;
  readonly #keys: RedisKeys;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#keys = new RedisKeys(prefix);
  }

  /** Writes the request once: a second create of the same id (a retried activation) keeps the first. */
  async create(request: ApprovalRequest): Promise<'created' | 'exists'> {
    const r = ApprovalRequestSchema.parse(request);
    const k = this.#keys;
    // One transaction: the request is never written without being open.
    const res = await this.#redis.multi().set(k.approval(r.id), JSON.stringify(r), 'NX').zadd(k.approvalsOpen, 'NX', r.expiresAt, r.id).exec();
    const setReply = res?.[0]?.[1];
    return setReply === 'OK' ? 'created' : 'exists';
  }

  async get(id: string): Promise<ApprovalEntry | undefined> {
    const [raw, decided] = await this.#redis.mget(this.#keys.approval(id), this.#keys.approvalDecision(id));
    if (!raw) return undefined;
    return { request: ApprovalRequestSchema.parse(JSON.parse(raw)), decision: decided ? ApprovalDecisionSchema.parse(JSON.parse(decided)) : undefined };
  }

  /** The open requests, oldest deadline first: waiting ones and decided ones whose work is not done yet. */
  async open(): Promise<ApprovalEntry[]> {
    const ids = await this.#redis.zrange(this.#keys.approvalsOpen, 0, -1);
    const entries = await Promise.all(ids.map((id) => this.get(id)));
    return entries.filter((e): e is ApprovalEntry => e !== undefined);
  }

  /**
   * Decides a request once. `by` must be one of the request's approvers (the timeout always may). Throws
   * UnknownApproval for a request that is not open, ApproverNotAllowed for an approver the agent does not take.
   */
  async decide(id: string, kind: ApprovalDecisionRecord['kind'], opts: { by: DecidedBy; note?: string; now?: number }): Promise<DecideResult> {
    const entry = await this.get(id);
    const open = entry ? (await this.#redis.zscore(this.#keys.approvalsOpen, id)) !== null : false;
    if (!entry || (!open && !entry.decision)) throw new UnknownApproval(id);
    if (opts.by !== 'timeout' && !entry.request.approvers.includes(opts.by)) throw new ApproverNotAllowed(id, entry.request.agent, opts.by, entry.request.approvers);
    const decision: ApprovalDecisionRecord = { kind, note: (opts.note ?? '').slice(0, MAX_NOTE), by: opts.by, at: opts.now ?? Date.now() };
    const set = await this.#redis.set(this.#keys.approvalDecision(id), JSON.stringify(decision), 'NX');
    if (set === 'OK') return { kind: 'decided', entry: { request: entry.request, decision } };
    const first = await this.get(id);
    return { kind: 'already', entry: { request: entry.request, decision: first!.decision! } };
  }

  /** Whether the request's work is still to do (waiting, or decided and not yet carried out). */
  async isOpen(id: string): Promise<boolean> {
    return (await this.#redis.zscore(this.#keys.approvalsOpen, id)) !== null;
  }

  /** The work the request held is done: it leaves the open set; request and decision are kept a while to be read. */
  async finish(id: string, now = Date.now()): Promise<void> {
    const k = this.#keys;
    await this.#redis
      .multi()
      .zrem(k.approvalsOpen, id)
      .expire(k.approval(id), DONE_RETENTION_S)
      .expire(k.approvalDecision(id), DONE_RETENTION_S)
      .zadd(k.approvalsDone, now, id)
      // The done list forgets what the requests themselves no longer keep.
      .zremrangebyscore(k.approvalsDone, '-inf', now - DONE_RETENTION_S * 1000)
      .exec();
  }

  /** Requests whose work is done, newest first, at most `limit` (those still kept: DONE_RETENTION_S). */
  async done(limit = 100): Promise<ApprovalEntry[]> {
    const ids = await this.#redis.zrevrange(this.#keys.approvalsDone, 0, limit - 1);
    const entries = await Promise.all(ids.map((id) => this.get(id)));
    return entries.filter((e): e is ApprovalEntry => e !== undefined);
  }
}

/** A call's arguments as a request shows them: JSON, redacted, capped (pure). */
export function shownArguments(args: Record<string, unknown>, redact: (text: string) => string): string {
  const text = redact(JSON.stringify(args));
  return text.length > MAX_SHOWN_ARGUMENTS ? `${text.slice(0, MAX_SHOWN_ARGUMENTS)}… (${text.length} characters)` : text;
}

/**
 * A request's id, derived from what paused (never random): a retried activation that pauses at the same step
 * writes the same request, and a CLI's held write re-sent with its key is the same request.
 */
export function approvalIdOf(parts: { activationId: string; step: number } | { agent: string; idempotencyKey: string }): string {
  const text = 'activationId' in parts ? `loop:${parts.activationId}:${parts.step}` : `write:${parts.agent}:${parts.idempotencyKey}`;
  return `ap_${createHash('sha256').update(text).digest('hex').slice(0, 20)}`;
}
