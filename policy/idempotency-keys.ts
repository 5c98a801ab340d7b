// Every idempotency key warren sends is made here, so that a retried or recovered activation sends the very same
// key for the very same write and the hub replays its first answer instead of writing twice (docs/hub-api.md §11).
// A key is derived from what the write is part of (the activation and its step, or the notification it answers),
// never drawn at random (a retry could not make it again) and never from the text alone (two activations saying
// the same thing are two writes).
//
// The shapes are those earlier versions sent, kept on purpose: the hub remembers a key for 24 hours and the
// reply outbox keeps an answer across attempts, so a write sent before an upgrade and retried after it must
// carry the same key to be deduplicated. That is why they do not share one prefix (`notification:<id>:reply`
// has none, the tool calls' keys are rooted in the activation id). A new kind of key gets a new shape here;
// an existing one never changes shape.
import { createHash } from 'node:crypto';

/** 32 hex characters of a SHA-256: short enough for a header, long enough never to collide by chance. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

// ---- the activation's own writes: `warren:<activation>:<step>` ----

/** Telling the hub the agent ran (staleness), once per activation. */
export function activatedKey(activationId: string): string {
  return `warren:${activationId}:activated`;
}

/** The usage report of one attempt: each attempt's tokens are spent, so each is reported once. */
export function consumptionKey(activationId: string, attempt: number): string {
  return `warren:${activationId}:consumption:${attempt}`;
}

/** An exploration's reply to the post it chose: one per activation and post. */
export function explorationReplyKey(activationId: string, postId: string): string {
  return `warren:${activationId}:explore:${postId}:reply`;
}

/** The error post of a final failure. */
export function errorPostKey(activationId: string): string {
  return `warren:${activationId}:error-post`;
}

/** The comment that counts a repeat of a failure already posted (activation/error-reporter.ts). */
export function errorRepeatKey(activationId: string): string {
  return `warren:${activationId}:error-repeat`;
}

/**
 * A status post to m/agent-status (activation/status-post.ts), keyed by the event it reports: its identity is
 * made of the agent, the kind of event and what it is rooted in (the activation that paused the agent or found
 * the MCP server failing, the UTC day of a budget crossing), so every daemon that sees the same event sends the
 * same key. Hashed: a server name may hold what no header takes.
 */
export function statusPostKey(eventIdentity: string): string {
  return `warren:status:${digest(eventIdentity)}`;
}

/**
 * An agent's activity summary to m/agent-activity (activation/activity-summary-ticker.ts), keyed by the agent and
 * the tick of its summary schedule: every daemon that decides the same tick sends the same key.
 */
export function activitySummaryKey(agent: string, tick: number): string {
  return `warren:activity-summary:${agent}:${tick}`;
}

// ---- keyed by the notification, whichever activation handles it ----

/**
 * The pipeline's reply to a notification. Keyed by the notification, not the activation: a retry, a recovered
 * job and a later follow-up run that answers the same notification all send this key, so the hub keeps one reply.
 */
export function notificationReplyKey(notificationId: string): string {
  return `notification:${notificationId}:reply`;
}

/**
 * The one short line an agent leaves in a thread when it could not answer the notification (activation/failure-reply.ts):
 * keyed by the notification, so however often its activations fail, the hub keeps one such line.
 */
export function failureReplyKey(notificationId: string): string {
  return `notification:${notificationId}:could-not-answer`;
}

/** Marking notifications read, by what is marked: any attempt marking the same set sends the same request. */
export function markReadKey(notificationIds: readonly string[]): string {
  return `warren:read:${digest([...notificationIds].sort().join(','))}`;
}

// ---- tool calls: the loop's, and those of `warren mcp hub` for CLI agents ----

/**
 * The key of one tool call of the in-process loop: the activation, the step and the call's place in it (1, 2, …).
 * A resumed or retried activation makes the same calls at the same steps, so they carry the same keys. Tools
 * derive their writes' keys from it (hubToolWriteKey; memory_save sends it as it is).
 */
export function toolCallKey(activationId: string, step: number, call: number): string {
  return `${activationId}:${step}:${call}`;
}

/**
 * The key of one tool call of `warren mcp hub`: the activation, the tool and its arguments. A CLI's calls have no
 * step warren can see; a retried activation starts a new server and CLI, and the same write in it (same tool,
 * same arguments) gets the same key. `canonicalArgs`: the arguments as canonical JSON (keys sorted), so the key
 * does not depend on their order.
 */
export function mcpToolCallKey(activationId: string, tool: string, canonicalArgs: string): string {
  return `${activationId}:mcp:${tool}:${digest(canonicalArgs)}`;
}

/**
 * What `warren mcp hub` roots its keys in when no activation was given (a server someone started by hand): this
 * server process, by its pid and start time. The same write twice to it is made once; nothing else shares the root.
 */
export function standaloneMcpRoot(agent: string, pid: number, startedAtMs: number): string {
  return `mcp-${agent}-${pid}-${startedAtMs.toString(36)}`;
}

/** The hub write of a hub tool (hub_post, hub_reply), from its call's key. */
export function hubToolWriteKey(callKey: string): string {
  return `warren:${callKey}`;
}

/**
 * The key of a write a CLI sent to the hub gateway without one, when it is held for approval: the activation its
 * token serves and the write's place among the held writes it sent (1, 2, …). A held write must have a key the
 * daemon makes it with after approval; a CLI that wants a resent write to be the same one sends its own key.
 */
export function gatewayHeldWriteKey(activationId: string, sequence: number): string {
  return `warren:${activationId}:gateway:${sequence}`;
}

// ---- Moltbook, which takes no keys: the adapter's own write ledger ----

/**
 * What the Moltbook adapter keys its write ledger by when its caller gave no key (every write of an activation
 * gives one): the agent, where it writes (a post id, or `post` for a new post) and the content's hash. Moltbook
 * takes no Idempotency-Key, so this key never leaves warren; the adapter finds a write again by the agent's own
 * identical text in the same place anyway, which this key only mirrors.
 */
export function moltbookLedgerKey(agent: string, where: string, contentHash: string): string {
  return `content:${agent}:${where}:${contentHash}`;
}

// ---- A2A: a remote delegation's message (agent-loop/remote-delegation.ts) ----

/**
 * The message a remote delegation call sends, from its call's key. A2A servers do not deduplicate by message id,
 * so a retried call finds its first task by the context id below instead, and checks a follow-up by this id in
 * the task's history.
 */
export function a2aMessageId(callKey: string): string {
  return `warren:${callKey}:a2a`;
}

/** The context a remote delegation call opens for a new task: the remote side lists it, so a retry finds its task. */
export function a2aContextId(callKey: string): string {
  return `warren:${callKey}:a2a-context`;
}
