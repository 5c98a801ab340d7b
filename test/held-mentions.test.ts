// Mentions the intake round holds back (scheduler/held-mentions.ts): why, when they run, when a hold is news, and
// the leader's reading kept in Redis for `warren status` and the watch page.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { formatStatus, type AgentStatus } from '../daemon/ops/status.ts';
import type { Verdict } from '../scheduler/eligibility.ts';
import { describeHold, HELD_STALE_MS, HeldMentionStore, heldOf, isNewHold, quietHoursEnd, type HeldMentions, type Hold } from '../scheduler/held-mentions.ts';

const now = new Date('2026-11-23T12:00:30Z');
const at = (iso: string): number => Date.parse(iso);

describe('what holds a mention back', () => {
  it.each<[string, Verdict, Hold | undefined]>([
    ['nothing: it runs', { eligible: true }, undefined],
    ['a pause: until `warren resume`', { eligible: false, reason: 'paused' }, { reason: 'paused', runsAt: null }],
    ['a failure backoff: until it ends', { eligible: false, reason: 'backoff', until: at('2026-11-23T12:10:00Z') }, { reason: 'backoff', runsAt: at('2026-11-23T12:10:00Z') }],
    ['quiet hours: until they end', { eligible: false, reason: 'quiet_hours' }, { reason: 'quiet_hours', runsAt: at('2026-11-23T13:00:00Z') }],
    ['the budget at critical: no time known', { eligible: false, reason: 'budget', budget: 'critical' }, { reason: 'budget', runsAt: null }],
    ['not runnable here is no hold of a mention', { eligible: false, reason: 'not_runnable', detail: 'x' }, undefined],
  ])('%s', (_what, verdict, hold) => {
    expect(heldOf(verdict, { start: '11:00', end: '13:00', timezone: 'UTC' }, now)).toEqual(hold);
  });

  it.each([
    ['later today', { start: '11:00', end: '13:00', timezone: 'UTC' }, '2026-11-23T13:00:00.000Z'],
    ['across midnight, in the agent\'s zone', { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' }, '2026-11-24T06:00:00.000Z'],
    ['ending now: the next end, a day on', { start: '11:00', end: '12:00', timezone: 'UTC' }, '2026-11-24T12:00:00.000Z'],
  ])('quiet hours end %s', (_what, q, end) => {
    expect(new Date(quietHoursEnd(q, now)).toISOString()).toBe(end);
  });

  const h = (reason: HeldMentions['reason'], waiting: number): HeldMentions => ({ reason, waiting, runs_at: null, since: now.toISOString() });
  it.each<[string, HeldMentions | undefined, HeldMentions, boolean]>([
    ['a first hold is news', undefined, h('budget', 1), true],
    ['the same hold again is not', h('budget', 1), h('budget', 1), false],
    ['another mention waiting is', h('budget', 1), h('budget', 2), true],
    ['a mention read meanwhile is not', h('budget', 2), h('budget', 1), false],
    ['a new reason is', h('budget', 1), h('paused', 1), true],
  ])('%s', (_what, before, next, news) => {
    expect(isNewHold(before, next)).toBe(news);
  });

  it('says what the operator can do', () => {
    expect(describeHold('greeter', { reason: 'paused', runs_at: null })).toBe('paused: run after `warren resume greeter`');
    expect(describeHold('greeter', { reason: 'backoff', runs_at: '2026-11-23T12:10:00.000Z' })).toBe('failure backoff: run at 2026-11-23 12:10Z (or now with `warren resume greeter`)');
    expect(describeHold('greeter', { reason: 'budget', runs_at: null })).toMatch(/^budget critical: run when the hub's budget allows again/);
  });
});

describe('the held reading in Redis', () => {
  const redis = new Redis(inject('redisUrl'));
  afterAll(() => redis.quit());

  it('is replaced each round and forgotten once stale', async () => {
    const store = new HeldMentionStore(redis, `held-${randomUUID().slice(0, 8)}`);
    const t = now.getTime();
    await store.replace(new Map([['a', { reason: 'budget', runs_at: null, waiting: 2, since: now.toISOString() }], ['b', { reason: 'paused', runs_at: null, waiting: 1, since: now.toISOString() }]]), t);
    expect([...(await store.read(['a', 'b', 'c'], t)).keys()]).toEqual(['a', 'b']);
    await store.replace(new Map([['b', { reason: 'paused', runs_at: null, waiting: 1, since: now.toISOString() }]]), t);
    expect(await store.read(['a', 'b'], t)).toEqual(new Map([['b', { reason: 'paused', runs_at: null, waiting: 1, since: now.toISOString() }]]));
    expect((await store.read(['b'], t + HELD_STALE_MS)).size).toBe(0);
  });
});

describe('`warren status` names the wait and what ends it', () => {
  const agent = (name: string, extra: Partial<AgentStatus>): AgentStatus => ({
    name, state: 'ready', state_detail: null, type: 'llm', model: 'm', paused: false, consecutive_failures: 0, abandoned: 0, last: null, waiting_for: null, not_runnable: null,
    next_eligible_at: null, next_exploration_at: null, today: { activations: 0, posts: 0, comments: 0, tokensInput: 0, tokensOutput: 0, costUsd: 0 }, ...extra,
  });
  it.each<[string, AgentStatus, string | undefined]>([
    ['held mentions: how many, since when, why, when they run', agent('a', { state: 'backoff', next_eligible_at: '2026-11-23T12:10:00.000Z', held: { reason: 'backoff', runs_at: '2026-11-23T12:10:00.000Z', waiting: 2, since: '2026-11-23T12:00:00.000Z' } }), 'a: 2 mentions held since 12:00Z, failure backoff: run at 2026-11-23 12:10Z (or now with `warren resume a`)'],
    ['a backoff with nothing waiting yet', agent('b', { state: 'backoff', next_eligible_at: '2026-11-23T12:10:00.000Z' }), 'b: failure backoff until 2026-11-23 12:10:00Z; `warren resume b` ends it now'],
    ['nothing waits', agent('c', {}), undefined],
  ])('%s', (_what, a, line) => {
    const text = formatStatus({ redis: { url: 'redis://x', ok: true }, hub: { url: 'http://x', ok: true }, leader: 'l', queue: null, running: [], agents: [a], defined: 1, broken: 0 }, now);
    const found = text.split('\n').find((l) => l.startsWith(`${a.name}: `));
    expect(found).toBe(line);
  });
});
