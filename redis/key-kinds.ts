// How each key under a shard's prefix moves when `redis.shards` changes (daemon/shards/shard-migration.ts). Pure: it
// reads key names only. Built from every member of RedisKeys (redis/keys.ts): SHARD keys name their agent (moved
// whole), or are per-shard hashes and sets whose fields or members name agents (moved field by field), or are the
// fleet-wide record lists of a shard (merged by agent), or BullMQ's own keys (moved as jobs); HOME keys and the
// shard's own lease and version never move. With one shard the shard's prefix is the home prefix, so HOME keys are
// met under it too. test/key-kinds.test.ts fails when RedisKeys gains a member this file does not place.
import type { RedisKeys } from './keys.ts';

/** Agent names as definitions allow them (lowercase letters, digits, dashes, underscores): never a colon. */
const AGENT = '([a-z0-9_-]+)';

/** How the fields of a per-shard hash name their agent. */
export type FieldOwner =
  /** The field is the agent's name. */
  | 'agent'
  /** `<agent>|<counter>` (the day counters). */
  | 'agent|'
  /** `<agent>/<schedule>` (schedule state). */
  | 'agent/'
  /** The field is a key name under the shard's prefix (record byte totals): the key's own kind names the agent. */
  | 'key';

export type KeyKind =
  /** The agent's own key: moved whole to the agent's shard. */
  | { kind: 'agent'; agent: string }
  /** A hash of the shard whose fields belong to agents: each field moves to its agent's shard (same key name there). */
  | { kind: 'agent-fields'; fields: FieldOwner }
  /** A set of the shard whose members are agent names. */
  | { kind: 'agent-members' }
  /** The shard's list of every agent's records: merged into the new shards' lists by each record's agent. */
  | { kind: 'all-records' }
  /** BullMQ's keys of the shard's queue: its jobs are moved (enqueued again on the agent's shard), not its keys. */
  | { kind: 'bullmq' }
  /** Not moved: a fleet-wide (HOME) key, or the shard's own lease and hold version (dropped with a dropped shard). */
  | { kind: 'stays'; why: 'home' | 'shard' }
  /** No member of RedisKeys makes it: left where it is, and reported. */
  | { kind: 'unknown' };

/** The members of RedisKeys that name keys (every one but the prefix itself). */
export type KeyMember = Exclude<keyof RedisKeys, 'prefix'>;

interface Rule {
  /** The RedisKeys members that make keys of this shape. */
  members: readonly KeyMember[];
  /** Against the key name after `<prefix>:`; for kind `agent` the first group is the agent. */
  pattern: RegExp;
  kind: KeyKind['kind'];
  fields?: FieldOwner;
  why?: 'home' | 'shard';
}

/** In order: the first rule that matches decides (the exact record lists come before the per-agent ones). */
const RULES: readonly Rule[] = [
  { members: ['dedup', 'dedupCurrentPrefix', 'dedupNextPrefix'], pattern: /^activations:/, kind: 'bullmq' },

  // SHARD: the shard itself.
  { members: ['leader'], pattern: /^scheduler:leader$/, kind: 'stays', why: 'shard' },
  { members: ['inboxHoldVersion'], pattern: /^inbox-hold-version$/, kind: 'stays', why: 'shard' },

  // SHARD: lists of every agent's records, and the hash of byte totals (field: a list's key name).
  { members: ['allActivationRecords'], pattern: /^activation-records$/, kind: 'all-records' },
  { members: ['allHeldRecords'], pattern: /^held-records$/, kind: 'all-records' },
  { members: ['recordBytes'], pattern: /^record-bytes$/, kind: 'agent-fields', fields: 'key' },

  // SHARD: hashes and sets of the shard whose fields or members are agents.
  {
    members: ['agentFailures', 'agentLastFailure', 'agentBackoffUntil', 'agentAbandoned', 'agentLastActivated', 'agentBudgetSeen', 'agentPaused', 'agentNotRunnable', 'agentSkipped', 'agentHeld', 'agentLastWrite', 'activitySummaries'],
    pattern: /^(agent-failures|agent-last-failure|agent-backoff-until|agent-abandoned|agent-last-activated|agent-budget-seen|agent-paused|agent-not-runnable|agent-skipped|agent-held|agent-last-write|activity-summaries)$/,
    kind: 'agent-fields',
    fields: 'agent',
  },
  { members: ['threadResponses'], pattern: /^thread-responses:/, kind: 'agent-fields', fields: 'agent' },
  { members: ['agentDay'], pattern: /^agent-day:[^:]+$/, kind: 'agent-fields', fields: 'agent|' },
  { members: ['scheduleChecked', 'scheduleFired'], pattern: /^schedule-(checked|fired)$/, kind: 'agent-fields', fields: 'agent/' },
  { members: ['agentsWithTasks'], pattern: /^agents-with-tasks$/, kind: 'agent-members' },

  // SHARD: an agent's own keys (its name right after the key's kind).
  { members: ['inboxHold', 'inboxHoldPrefix'], pattern: new RegExp(`^inbox-hold:${AGENT}$`), kind: 'agent' },
  { members: ['writeReservation'], pattern: new RegExp(`^write-reservation:${AGENT}:`), kind: 'agent' },
  { members: ['tasks', 'tasksPrefix'], pattern: new RegExp(`^tasks:${AGENT}$`), kind: 'agent' },
  { members: ['taskBodies'], pattern: new RegExp(`^task-bodies:${AGENT}$`), kind: 'agent' },
  { members: ['taskClaims', 'taskClaimsPrefix'], pattern: new RegExp(`^task-claims:${AGENT}$`), kind: 'agent' },
  { members: ['taskSeen'], pattern: new RegExp(`^task-seen:${AGENT}:[0-9a-f]+$`), kind: 'agent' },
  { members: ['outbox'], pattern: new RegExp(`^outbox:${AGENT}:`), kind: 'agent' },
  { members: ['notificationFailures'], pattern: new RegExp(`^notification-failures:${AGENT}$`), kind: 'agent' },
  { members: ['errorPosts'], pattern: new RegExp(`^error-posts:${AGENT}:[0-9a-f]+$`), kind: 'agent' },
  { members: ['activationRecords'], pattern: new RegExp(`^activation-records:${AGENT}$`), kind: 'agent' },
  { members: ['heldRecords'], pattern: new RegExp(`^held-records:${AGENT}$`), kind: 'agent' },
  {
    members: ['moltbookPending', 'moltbookHandled', 'moltbookRecheck', 'moltbookChallengeFailures', 'moltbookDmSeen', 'moltbookAnswered', 'moltbookLastWrite'],
    pattern: new RegExp(`^moltbook:(?:pending|handled|recheck|challenge-failures|dm-seen|answered|last-post|last-comment):${AGENT}$`),
    kind: 'agent',
  },
  { members: ['moltbookCommentsOn'], pattern: new RegExp(`^moltbook:comments:${AGENT}:[^:]+$`), kind: 'agent' },
  // An agent's spend (`moltbookSpend(agent, …)`); the fleet's (`budget-fleet`) is HOME, below.
  { members: ['moltbookSpend'], pattern: new RegExp(`^moltbook:budget:${AGENT}:[dm]:[^:]+$`), kind: 'agent' },
  { members: ['a2aDay'], pattern: new RegExp(`^a2a-day:${AGENT}:[^:]+$`), kind: 'agent' },
  { members: ['activitySummaryClaim'], pattern: new RegExp(`^activity-summary-claim:${AGENT}:\\d+$`), kind: 'agent' },
  { members: ['spawnNotes'], pattern: new RegExp(`^spawn-notes:${AGENT}$`), kind: 'agent' },
  { members: ['blueskyPending', 'blueskyHandled', 'blueskySince', 'blueskyAnswered'], pattern: new RegExp(`^bluesky:(?:pending|handled|since|answered):${AGENT}$`), kind: 'agent' },

  // HOME: the fleet's keys and channels.
  { members: ['once'], pattern: /^once:/, kind: 'stays', why: 'home' },
  { members: ['statusPost'], pattern: /^status-posts:/, kind: 'stays', why: 'home' },
  { members: ['statusPaused'], pattern: /^status-paused$/, kind: 'stays', why: 'home' },
  { members: ['moltbookWrite'], pattern: /^moltbook:write:/, kind: 'stays', why: 'home' },
  { members: ['moltbookSpend'], pattern: /^moltbook:budget-fleet:/, kind: 'stays', why: 'home' },
  { members: ['moltbookSpendSeen'], pattern: /^moltbook:budget-seen:/, kind: 'stays', why: 'home' },
  { members: ['approval'], pattern: /^approval:/, kind: 'stays', why: 'home' },
  { members: ['approvalDecision'], pattern: /^approval-decision:/, kind: 'stays', why: 'home' },
  { members: ['approvalsOpen', 'approvalsDone'], pattern: /^approvals-(open|done)$/, kind: 'stays', why: 'home' },
  { members: ['pace'], pattern: /^pace:/, kind: 'stays', why: 'home' },
  { members: ['activationRecordsChannel', 'heldRecordsChannel'], pattern: /^live:/, kind: 'stays', why: 'home' },
  { members: ['loadedDefinitions'], pattern: /^definitions-loaded$/, kind: 'stays', why: 'home' },
  { members: ['a2aTask'], pattern: /^a2a-task:/, kind: 'stays', why: 'home' },
  { members: ['a2aTasks'], pattern: /^a2a-tasks$/, kind: 'stays', why: 'home' },
  { members: ['a2aChannel'], pattern: /^a2a$/, kind: 'stays', why: 'home' },
  { members: ['shardCount'], pattern: /^shard-count$/, kind: 'stays', why: 'home' },
  { members: ['schedulerRoster'], pattern: /^scheduler-roster$/, kind: 'stays', why: 'home' },
  { members: ['reloadChannel'], pattern: /^reload$/, kind: 'stays', why: 'home' },
  { members: ['adminKeyCheck'], pattern: /^admin-key-check$/, kind: 'stays', why: 'home' },
  { members: ['blueskyRkey'], pattern: /^bluesky:rkey:/, kind: 'stays', why: 'home' },
];

/** Every member some rule places (test/key-kinds.test.ts compares it with RedisKeys' prototype). */
export const PLACED_MEMBERS: ReadonlySet<string> = new Set(RULES.flatMap((r) => r.members));

/** How a key moves, from its name after `<prefix>:` (pure). */
export function keyKind(rest: string): KeyKind {
  for (const r of RULES) {
    const m = r.pattern.exec(rest);
    if (!m) continue;
    switch (r.kind) {
      case 'agent':
        return { kind: 'agent', agent: m[1]! };
      case 'agent-fields':
        return { kind: 'agent-fields', fields: r.fields! };
      case 'stays':
        return { kind: 'stays', why: r.why! };
      case 'agent-members':
      case 'all-records':
      case 'bullmq':
        return { kind: r.kind };
      case 'unknown':
        return { kind: 'unknown' };
    }
  }
  return { kind: 'unknown' };
}

/** The agent a field of a per-shard hash belongs to (for `key` fields: `prefix`, the shard's, is taken off first). */
export function fieldAgent(owner: FieldOwner, field: string, prefix: string): string | undefined {
  switch (owner) {
    case 'agent':
      return field;
    case 'agent|':
    case 'agent/': {
      const at = field.indexOf(owner === 'agent|' ? '|' : '/');
      return at > 0 ? field.slice(0, at) : undefined;
    }
    case 'key': {
      if (!field.startsWith(`${prefix}:`)) return undefined;
      const k = keyKind(field.slice(prefix.length + 1));
      return k.kind === 'agent' ? k.agent : undefined;
    }
  }
}
