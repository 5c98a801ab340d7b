// How each key moves when the shard count changes (redis/key-kinds.ts): every member of RedisKeys is placed, and
// the key it makes is read back as the kind and agent it was made for.
import { describe, expect, it } from 'vitest';
import { fieldAgent, keyKind, PLACED_MEMBERS, type KeyKind, type KeyMember } from '../redis/key-kinds.ts';
import { RedisKeys } from '../redis/keys.ts';

const PREFIX = '{w}:s1';
const A = 'agent-7_x';
const k = new RedisKeys(PREFIX);

/** Each member's keys as stores make them, with what they must be read as. A new member fails `every member`. */
const SAMPLES: Record<KeyMember, Array<[string, KeyKind]>> = {
  dedup: [
    [k.dedup(A).current, { kind: 'bullmq' }],
    [k.dedup(A).next, { kind: 'bullmq' }],
    [`${k.dedup(A).jobPrefix}17`, { kind: 'bullmq' }],
  ],
  dedupCurrentPrefix: [[k.dedupCurrentPrefix + A, { kind: 'bullmq' }]],
  dedupNextPrefix: [[k.dedupNextPrefix + A, { kind: 'bullmq' }]],
  inboxHold: [[k.inboxHold(A), { kind: 'agent', agent: A }]],
  inboxHoldPrefix: [[k.inboxHoldPrefix + A, { kind: 'agent', agent: A }]],
  inboxHoldVersion: [[k.inboxHoldVersion, { kind: 'stays', why: 'shard' }]],
  leader: [[k.leader, { kind: 'stays', why: 'shard' }]],
  agentFailures: [[k.agentFailures, { kind: 'agent-fields', fields: 'agent' }]],
  agentLastFailure: [[k.agentLastFailure, { kind: 'agent-fields', fields: 'agent' }]],
  agentBackoffUntil: [[k.agentBackoffUntil, { kind: 'agent-fields', fields: 'agent' }]],
  agentAbandoned: [[k.agentAbandoned, { kind: 'agent-fields', fields: 'agent' }]],
  agentLastActivated: [[k.agentLastActivated, { kind: 'agent-fields', fields: 'agent' }]],
  agentBudgetSeen: [[k.agentBudgetSeen, { kind: 'agent-fields', fields: 'agent' }]],
  agentPaused: [[k.agentPaused, { kind: 'agent-fields', fields: 'agent' }]],
  agentNotRunnable: [[k.agentNotRunnable, { kind: 'agent-fields', fields: 'agent' }]],
  agentSkipped: [[k.agentSkipped, { kind: 'agent-fields', fields: 'agent' }]],
  agentHeld: [[k.agentHeld, { kind: 'agent-fields', fields: 'agent' }]],
  scheduleChecked: [[k.scheduleChecked, { kind: 'agent-fields', fields: 'agent/' }]],
  scheduleFired: [[k.scheduleFired, { kind: 'agent-fields', fields: 'agent/' }]],
  agentDay: [[k.agentDay('2026-11-27'), { kind: 'agent-fields', fields: 'agent|' }]],
  once: [[k.once('final:act-1:2'), { kind: 'stays', why: 'home' }]],
  writeReservation: [
    [k.writeReservation(A, 'comment', 'post-9', 'idem:1'), { kind: 'agent', agent: A }],
    [k.writeReservation(A, 'post', '', 'idem-2'), { kind: 'agent', agent: A }],
  ],
  agentLastWrite: [[k.agentLastWrite, { kind: 'agent-fields', fields: 'agent' }]],
  threadResponses: [[k.threadResponses('post:9'), { kind: 'agent-fields', fields: 'agent' }]],
  tasks: [[k.tasks(A), { kind: 'agent', agent: A }]],
  tasksPrefix: [[k.tasksPrefix + A, { kind: 'agent', agent: A }]],
  taskBodies: [[k.taskBodies(A), { kind: 'agent', agent: A }]],
  taskClaims: [[k.taskClaims(A), { kind: 'agent', agent: A }]],
  taskClaimsPrefix: [[k.taskClaimsPrefix + A, { kind: 'agent', agent: A }]],
  taskSeen: [[k.taskSeen(A, 'caller: any text'), { kind: 'agent', agent: A }]],
  agentsWithTasks: [[k.agentsWithTasks, { kind: 'agent-members' }]],
  outbox: [[k.outbox(A, 'n:1:x'), { kind: 'agent', agent: A }]],
  notificationFailures: [[k.notificationFailures(A), { kind: 'agent', agent: A }]],
  errorPosts: [[k.errorPosts(A, 'TypeError: x'), { kind: 'agent', agent: A }]],
  statusPost: [[k.statusPost('agent.paused:x'), { kind: 'stays', why: 'home' }]],
  statusPaused: [[k.statusPaused, { kind: 'stays', why: 'home' }]],
  activationRecords: [[k.activationRecords(A), { kind: 'agent', agent: A }]],
  allActivationRecords: [[k.allActivationRecords, { kind: 'all-records' }]],
  recordBytes: [[k.recordBytes, { kind: 'agent-fields', fields: 'key' }]],
  heldRecords: [[k.heldRecords(A), { kind: 'agent', agent: A }]],
  allHeldRecords: [[k.allHeldRecords, { kind: 'all-records' }]],
  moltbookPending: [[k.moltbookPending(A), { kind: 'agent', agent: A }]],
  moltbookHandled: [[k.moltbookHandled(A), { kind: 'agent', agent: A }]],
  moltbookWrite: [[k.moltbookWrite('abc'), { kind: 'stays', why: 'home' }]],
  moltbookChallengeFailures: [[k.moltbookChallengeFailures(A), { kind: 'agent', agent: A }]],
  moltbookDmSeen: [[k.moltbookDmSeen(A), { kind: 'agent', agent: A }]],
  moltbookRecheck: [[k.moltbookRecheck(A), { kind: 'agent', agent: A }]],
  moltbookAnswered: [[k.moltbookAnswered(A), { kind: 'agent', agent: A }]],
  moltbookLastWrite: [
    [k.moltbookLastWrite(A, 'post'), { kind: 'agent', agent: A }],
    [k.moltbookLastWrite(A, 'comment'), { kind: 'agent', agent: A }],
  ],
  moltbookCommentsOn: [[k.moltbookCommentsOn(A, '2026-11-27'), { kind: 'agent', agent: A }]],
  moltbookSpend: [
    [k.moltbookSpend(A, 'd', '2026-11-27'), { kind: 'agent', agent: A }],
    [k.moltbookSpend(A, 'm', '2026-11'), { kind: 'agent', agent: A }],
    [k.moltbookSpend(undefined, 'd', '2026-11-27'), { kind: 'stays', why: 'home' }],
  ],
  moltbookSpendSeen: [[k.moltbookSpendSeen('r-1'), { kind: 'stays', why: 'home' }]],
  approval: [[k.approval('ap-1'), { kind: 'stays', why: 'home' }]],
  approvalDecision: [[k.approvalDecision('ap-1'), { kind: 'stays', why: 'home' }]],
  approvalsOpen: [[k.approvalsOpen, { kind: 'stays', why: 'home' }]],
  approvalsDone: [[k.approvalsDone, { kind: 'stays', why: 'home' }]],
  pace: [[k.pace(`moltbook:agent:${A}`), { kind: 'stays', why: 'home' }]],
  activationRecordsChannel: [[k.activationRecordsChannel, { kind: 'stays', why: 'home' }]],
  heldRecordsChannel: [[k.heldRecordsChannel, { kind: 'stays', why: 'home' }]],
  loadedDefinitions: [[k.loadedDefinitions, { kind: 'stays', why: 'home' }]],
  a2aTask: [[k.a2aTask('t-1'), { kind: 'stays', why: 'home' }]],
  a2aTasks: [[k.a2aTasks, { kind: 'stays', why: 'home' }]],
  a2aDay: [[k.a2aDay(A, '2026-11-27'), { kind: 'agent', agent: A }]],
  a2aChannel: [[k.a2aChannel, { kind: 'stays', why: 'home' }]],
  shardCount: [[k.shardCount, { kind: 'stays', why: 'home' }]],
  schedulerRoster: [[k.schedulerRoster, { kind: 'stays', why: 'home' }]],
  reloadChannel: [[k.reloadChannel, { kind: 'stays', why: 'home' }]],
  adminKeyCheck: [[k.adminKeyCheck, { kind: 'stays', why: 'home' }]],
  activitySummaries: [[k.activitySummaries, { kind: 'agent-fields', fields: 'agent' }]],
  activitySummaryClaim: [[k.activitySummaryClaim(A, 1_764_201_600_000), { kind: 'agent', agent: A }]],
  spawnNotes: [[k.spawnNotes(A), { kind: 'agent', agent: A }]],
  blueskyPending: [[k.blueskyPending(A), { kind: 'agent', agent: A }]],
  blueskyHandled: [[k.blueskyHandled(A), { kind: 'agent', agent: A }]],
  blueskySince: [[k.blueskySince(A), { kind: 'agent', agent: A }]],
  blueskyAnswered: [[k.blueskyAnswered(A), { kind: 'agent', agent: A }]],
  blueskyRkey: [[k.blueskyRkey('idem-1'), { kind: 'stays', why: 'home' }]],
};

/** RedisKeys' members as the running class has them (methods and getters), so a member added without a kind fails. */
function prototypeMembers(): string[] {
  return Object.getOwnPropertyNames(RedisKeys.prototype).filter((n) => n !== 'constructor');
}

describe('key kinds', () => {
  it('every member of RedisKeys has samples and a rule', () => {
    const members = prototypeMembers();
    expect(members.length).toBeGreaterThan(60);
    expect(members.filter((m) => !(m in SAMPLES))).toEqual([]);
    expect(members.filter((m) => !PLACED_MEMBERS.has(m))).toEqual([]);
    expect([...PLACED_MEMBERS].filter((m) => !members.includes(m))).toEqual([]);
  });

  it.each(Object.entries(SAMPLES).flatMap(([member, samples]) => samples.map(([key, kind]) => [member, key, kind] as const)))('%s: %s', (_member, key, kind) => {
    expect(key.startsWith(`${PREFIX}:`)).toBe(true);
    expect(keyKind(key.slice(PREFIX.length + 1))).toEqual(kind);
  });

  it('a key no member makes is unknown', () => {
    expect(keyKind('s0:tasks:a')).toEqual({ kind: 'unknown' });
    expect(keyKind('something-else')).toEqual({ kind: 'unknown' });
  });

  it.each([
    ['agent', A, A],
    ['agent|', `${A}|posts`, A],
    ['agent|', 'no-bar', undefined],
    ['agent/', `${A}/daily-digest`, A],
    ['key', k.activationRecords(A), A],
    ['key', k.heldRecords(A), A],
    ['key', k.allActivationRecords, undefined],
    ['key', new RedisKeys('{w}:s2').activationRecords(A), undefined],
  ] as const)('field of %s %s belongs to %s', (owner, field, agent) => {
    expect(fieldAgent(owner, field, PREFIX)).toBe(agent);
  });
});
