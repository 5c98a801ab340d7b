// Every Redis key and channel name warren uses, in one place. All of them start with the daemon's prefix, which is
// also BullMQ's: on Redis Cluster that prefix is a hash tag (`{warren}`), so BullMQ's keys and warren's own share
// one slot, and a script may read both (the inbox holds read BullMQ's deduplication keys).
//
// With `redis.shards` above 1 (redis/key-layout.ts) there is one RedisKeys per shard and one for the fleet (home).
// SHARD keys belong to an agent (its name is in the key or a field of a per-shard hash) and come from
// `layout.of(agent)`: the BullMQ queue and its deduplication keys, inbox holds and their version, the scheduler
// lease, the agent-state hashes, held mentions, schedules, day counters, write limits, tasks, the outbox,
// notification failures, error posts, records, activity summaries, spawn notes, A2A day counts, and the hub
// adapters' per-agent state. A script's keys all come from one shard. HOME keys are the fleet's and come from
// `layout.home`: `once`, status posts, approvals (and the admin key's check), pacing, Moltbook's write ledger and fleet spend, Bluesky record
// keys, A2A tasks, the loaded definitions, the shard count, and every pub/sub channel.
import { createHash } from 'node:crypto';

/** The BullMQ queue of activations: its name is part of BullMQ's keys under the prefix. */
export const ACTIVATION_QUEUE = 'activations';

/**
 * The prefix keys are made with: as configured on a single Redis; on a cluster wrapped in braces (`warren` →
 * `{warren}`) unless it already holds a hash tag, since BullMQ and warren's multi-key scripts need one slot.
 */
export function keyPrefix(prefix: string, cluster: boolean): string {
  if (!cluster || /\{[^}]+\}/.test(prefix)) return prefix;
  return `{${prefix}}`;
}

/** BullMQ's deduplication id of an agent's activations (one queued or running, plus one kept follow-up). */
export function dedupId(agent: string): string {
  return `agent:${agent}`;
}

/** The key names under one prefix (pure). */
export class RedisKeys {
  readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  /**
   * Where BullMQ keeps an agent's deduplication state (the key layout of its Lua scripts, 6.x): the job that holds
   * the deduplication id, the follow-up it keeps for after an active job, and the prefix of job hashes.
   * test/inbox-claims.test.ts fails if an upgrade moves them.
   */
  dedup(agent: string): { current: string; next: string; jobPrefix: string } {
    return { current: `${this.dedupCurrentPrefix}${agent}`, next: `${this.dedupNextPrefix}${agent}`, jobPrefix: `${this.prefix}:${ACTIVATION_QUEUE}:` };
  }
  /** `dedup(agent).current` without the agent name: for a script that makes the keys of many agents itself. */
  get dedupCurrentPrefix(): string {
    return `${this.prefix}:${ACTIVATION_QUEUE}:de:${dedupId('')}`;
  }
  /** `dedup(agent).next` without the agent name. */
  get dedupNextPrefix(): string {
    return `${this.prefix}:${ACTIVATION_QUEUE}:dn:${dedupId('')}`;
  }

  // Inbox holds (scheduler/inbox-claims.ts). `inbox-hold`, not the earlier `inbox-claim` (a string): a key left by
  // an older worker never meets these scripts.
  inboxHold(agent: string): string {
    return `${this.inboxHoldPrefix}${agent}`;
  }
  /** `inboxHold(agent)` without the agent name. */
  get inboxHoldPrefix(): string {
    return `${this.prefix}:inbox-hold:`;
  }
  get inboxHoldVersion(): string {
    return `${this.prefix}:inbox-hold-version`;
  }

  get leader(): string {
    return `${this.prefix}:scheduler:leader`;
  }

  // Agent state (scheduler/agent-state.ts): one hash per fact, one field per agent.
  get agentFailures(): string {
    return `${this.prefix}:agent-failures`;
  }
  get agentLastFailure(): string {
    return `${this.prefix}:agent-last-failure`;
  }
  get agentBackoffUntil(): string {
    return `${this.prefix}:agent-backoff-until`;
  }
  get agentAbandoned(): string {
    return `${this.prefix}:agent-abandoned`;
  }
  /** The hub's budget status each agent's last activation read, and when (`status|epoch ms`): scheduler/budget-cache.ts. */
  get agentBudgetSeen(): string {
    return `${this.prefix}:agent-budget-seen`;
  }
  get agentLastActivated(): string {
    return `${this.prefix}:agent-last-activated`;
  }
  get agentPaused(): string {
    return `${this.prefix}:agent-paused`;
  }
  get agentNotRunnable(): string {
    return `${this.prefix}:agent-not-runnable`;
  }
  get agentSkipped(): string {
    return `${this.prefix}:agent-skipped`;
  }
  /** Mentions the scheduler holds back, per agent: why, and when they run (scheduler/held-mentions.ts). */
  get agentHeld(): string {
    return `${this.prefix}:agent-held`;
  }
  /** Schedules (scheduler/schedule-state.ts): up to when each was looked at, and its last tick queued; field `<agent>/<schedule>`. */
  get scheduleChecked(): string {
    return `${this.prefix}:schedule-checked`;
  }
  get scheduleFired(): string {
    return `${this.prefix}:schedule-fired`;
  }
  /** The hash of one UTC day's counters, one field per agent and counter (`<agent>|posts`). */
  agentDay(day: string): string {
    return `${this.prefix}:agent-day:${day}`;
  }
  once(key: string): string {
    return `${this.prefix}:once:${key}`;
  }

  // Write limits (scheduler/write-allowance.ts).
  writeReservation(agent: string, kind: string, thread: string, idempotencyKey: string): string {
    return `${this.prefix}:write-reservation:${agent}:${kind}:${thread}:${idempotencyKey}`;
  }
  get agentLastWrite(): string {
    return `${this.prefix}:agent-last-write`;
  }
  threadResponses(thread: string): string {
    return `${this.prefix}:thread-responses:${thread}`;
  }

  // Tasks from outside the hub (scheduler/task-inbox.ts): schedules, webhooks, A2A, approvals.
  /** An agent's tasks waiting or running, ordered by when they came (a zset). */
  tasks(agent: string): string {
    return `${this.tasksPrefix}${agent}`;
  }
  get tasksPrefix(): string {
    return `${this.prefix}:tasks:`;
  }
  /** The tasks' bodies, by id (a hash). */
  taskBodies(agent: string): string {
    return `${this.prefix}:task-bodies:${agent}`;
  }
  /** Who holds which task (a hash: id -> "activation|until|claims"). */
  taskClaims(agent: string): string {
    return `${this.taskClaimsPrefix}${agent}`;
  }
  get taskClaimsPrefix(): string {
    return `${this.prefix}:task-claims:`;
  }
  /** A task id seen (hashed: ids carry caller-chosen text). */
  taskSeen(agent: string, taskId: string): string {
    return `${this.prefix}:task-seen:${agent}:${createHash('sha256').update(taskId).digest('hex').slice(0, 32)}`;
  }
  get agentsWithTasks(): string {
    return `${this.prefix}:agents-with-tasks`;
  }

  // The activation pipeline's memory (daemon/*).
  outbox(agent: string, notificationId: string): string {
    return `${this.prefix}:outbox:${agent}:${notificationId}`;
  }
  notificationFailures(agent: string): string {
    return `${this.prefix}:notification-failures:${agent}`;
  }
  /** Hashed: a fingerprint holds (redacted) error text, which has no place in a key name. */
  errorPosts(agent: string, fingerprint: string): string {
    return `${this.prefix}:error-posts:${agent}:${createHash('sha256').update(fingerprint).digest('hex').slice(0, 24)}`;
  }
  /** A status post claimed (activation/status-post-ledger.ts), by the event's identity, hashed as error posts are. */
  statusPost(identity: string): string {
    return `${this.prefix}:status-posts:${createHash('sha256').update(identity).digest('hex').slice(0, 24)}`;
  }
  /** Agents paused by their failures, with the activation that paused them: the pause a "resumed" post closes. */
  get statusPaused(): string {
    return `${this.prefix}:status-paused`;
  }
  activationRecords(agent: string): string {
    return `${this.prefix}:activation-records:${agent}`;
  }
  get allActivationRecords(): string {
    return `${this.prefix}:activation-records`;
  }
  /** The bytes each records list holds (a hash, field = the list's key): the byte bound of their retention. */
  get recordBytes(): string {
    return `${this.prefix}:record-bytes`;
  }
  /** Lines for mentions held back (no activation ran), beside the records, for `warren logs` (activation-records.ts). */
  heldRecords(agent: string): string {
    return `${this.prefix}:held-records:${agent}`;
  }
  get allHeldRecords(): string {
    return `${this.prefix}:held-records`;
  }

  // Moltbook (hub-client/moltbook/state.ts).
  moltbookPending(agent: string): string {
    return `${this.prefix}:moltbook:pending:${agent}`;
  }
  moltbookHandled(agent: string): string {
    return `${this.prefix}:moltbook:handled:${agent}`;
  }
  /** Posts marked read on the hub whose thread is still to be read again for comments that came just before (post → since, epoch ms). */
  moltbookRecheck(agent: string): string {
    return `${this.prefix}:moltbook:recheck:${agent}`;
  }
  moltbookWrite(key: string): string {
    return `${this.prefix}:moltbook:write:${key}`;
  }
  moltbookChallengeFailures(agent: string): string {
    return `${this.prefix}:moltbook:challenge-failures:${agent}`;
  }
  /** Per DM conversation of the agent, the newest message time seen (hub-client/moltbook/direct-messages.ts). */
  moltbookDmSeen(agent: string): string {
    return `${this.prefix}:moltbook:dm-seen:${agent}`;
  }
  /** Posts the agent has commented on (exploration does not offer them again). */
  moltbookAnswered(agent: string): string {
    return `${this.prefix}:moltbook:answered:${agent}`;
  }
  /** When the agent last posted or commented (the cooldowns of hub-client/moltbook/write-limits.ts). */
  moltbookLastWrite(agent: string, kind: 'post' | 'comment'): string {
    return `${this.prefix}:moltbook:last-${kind}:${agent}`;
  }
  /** The agent's comments on a UTC day (YYYY-MM-DD). */
  moltbookCommentsOn(agent: string, day: string): string {
    return `${this.prefix}:moltbook:comments:${agent}:${day}`;
  }
  /** Spend in USD of an agent (or, with no agent, the fleet) on a UTC day (`d`, YYYY-MM-DD) or month (`m`, YYYY-MM). */
  moltbookSpend(agent: string | undefined, period: 'd' | 'm', bucket: string): string {
    return agent === undefined ? `${this.prefix}:moltbook:budget-fleet:${period}:${bucket}` : `${this.prefix}:moltbook:budget:${agent}:${period}:${bucket}`;
  }
  /** A usage report already counted (by its idempotency key). */
  moltbookSpendSeen(reportKey: string): string {
    return `${this.prefix}:moltbook:budget-seen:${reportKey}`;
  }

  // Approvals (scheduler/approval-store.ts): one request and its decision per id, and the requests not yet done.
  approval(id: string): string {
    return `${this.prefix}:approval:${id}`;
  }
  approvalDecision(id: string): string {
    return `${this.prefix}:approval-decision:${id}`;
  }
  /** Sorted set: the ids of requests not yet done (undecided, or decided and not yet carried out), by when they time out. */
  get approvalsOpen(): string {
    return `${this.prefix}:approvals-open`;
  }
  /** Sorted set: the ids of requests whose work is done, by when it was, kept as long as the requests (`warren approvals list --all`). */
  get approvalsDone(): string {
    return `${this.prefix}:approvals-done`;
  }
  /** A request pacer's bucket (hub-client/request-pacer.ts), e.g. `moltbook:agent:<name>` or `moltbook:host:<host>`. */
  pace(bucket: string): string {
    return `${this.prefix}:pace:${bucket}`;
  }

  // Pub/sub channels (not keys: a cluster broadcasts them to every node).
  get activationRecordsChannel(): string {
    return `${this.prefix}:live:activation-records`;
  }
  get heldRecordsChannel(): string {
    return `${this.prefix}:live:held-records`;
  }
  /** The definitions the daemon loaded (daemon/ops/loaded-definitions.ts): a hash, agent → its file hash and load time. */
  get loadedDefinitions(): string {
    return `${this.prefix}:definitions-loaded`;
  }
  // A2A tasks served by the agents (daemon/a2a/*).
  /** One A2A task: its body and state, agent, caller and times (a hash). */
  a2aTask(taskId: string): string {
    return `${this.prefix}:a2a-task:${taskId}`;
  }
  /** Every A2A task by when it came (a zset), for ListTasks and status. */
  get a2aTasks(): string {
    return `${this.prefix}:a2a-tasks`;
  }
  /** Tasks an agent took from A2A callers on one UTC day (a counter). */
  a2aDay(agent: string, day: string): string {
    return `${this.prefix}:a2a-day:${agent}:${day}`;
  }
  /** Where a task's news (working, ended, cancel asked) reaches every daemon. */
  get a2aChannel(): string {
    return `${this.prefix}:a2a`;
  }
  /** The number of shards the fleet's keys were laid out for (home; a daemon refuses to start on another count). */
  get shardCount(): string {
    return `${this.prefix}:shard-count`;
  }
  /** The scheduling daemons alive, for sharing the shards' leases (a hash: lease token → "<until ms>|<shards>"). */
  get schedulerRoster(): string {
    return `${this.prefix}:scheduler-roster`;
  }
  get reloadChannel(): string {
    return `${this.prefix}:reload`;
  }
  /** A salted scrypt digest of the hub's admin key the daemons run with: `warren approvals` checks a key against it. */
  get adminKeyCheck(): string {
    return `${this.prefix}:admin-key-check`;
  }
  // Activity summaries (activation/activity-summary-ledger.ts).
  /** The tick of each agent's last activity summary (a hash, agent → epoch ms). */
  get activitySummaries(): string {
    return `${this.prefix}:activity-summaries`;
  }
  /** One daemon's claim to post an agent's summary of one tick. */
  activitySummaryClaim(agent: string, tick: number): string {
    return `${this.prefix}:activity-summary-claim:${agent}:${tick}`;
  }
  /** Outcomes of an agent's proposals (activation/spawn-notes.ts), by approval id, until its next run reads them. */
  spawnNotes(agent: string): string {
    return `${this.prefix}:spawn-notes:${agent}`;
  }
  // Bluesky (hub-client/bluesky/state.ts).
  /** Notifications found for an agent and not handled yet (a hash: notification uri → JSON). */
  blueskyPending(agent: string): string {
    return `${this.prefix}:bluesky:pending:${agent}`;
  }
  /** Notification uris an agent has handled (a set). */
  blueskyHandled(agent: string): string {
    return `${this.prefix}:bluesky:handled:${agent}`;
  }
  /** From when an agent's notifications are work (ISO time, set on its first scan): warren's own cursor. */
  blueskySince(agent: string): string {
    return `${this.prefix}:bluesky:since:${agent}`;
  }
  /** Posts an agent has replied to (a set): exploration does not offer them again. */
  blueskyAnswered(agent: string): string {
    return `${this.prefix}:bluesky:answered:${agent}`;
  }
  /** The record key a write got on its first attempt, by warren's idempotency key (a string). */
  blueskyRkey(key: string): string {
    return `${this.prefix}:bluesky:rkey:${key}`;
  }
}
