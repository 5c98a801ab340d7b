// The Moltbook adapter against the fake Moltbook over real HTTP, with real Redis for its ledger and inbox.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Redactor } from '../services/redact.ts';
import { RedisKeys } from '../redis/keys.ts';
import { HubError } from '../hub-client/errors.ts';
import { MoltbookAdapter, MoltbookChallengeError } from '../hub-client/moltbook/adapter.ts';
import { DEFAULT_AGE_LIMITS, type AgeLimits } from '../hub-client/moltbook/write-limits.ts';
import { ADVICE_MARKER, startFakeMoltbook, type FakeMoltbook } from './fakes/moltbook-server.ts';

let redis: Redis;
let fake: FakeMoltbook | undefined;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
});
afterAll(() => redis.quit());
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** No cooldowns unless a test is about them: the tests below write several times in a row. */
const NO_GAPS: AgeLimits = { established: { postGapMs: 0, commentGapMs: 0, commentsPerDay: 50 }, newAgent: { postGapMs: 0, commentGapMs: 0, commentsPerDay: 20 } };

function adapterFor(f: FakeMoltbook, agents: string[], opts: { maxWaitMs?: number; onNeedsOperator?: (agent: string, why: string) => void; writeLimits?: AgeLimits; now?: () => number; prefix?: string } = {}): MoltbookAdapter {
  const keys = new Map(agents.map((name) => [name, f.addAgent(name).key]));
  return new MoltbookAdapter({ baseUrl: f.url, keys, redis, prefix: opts.prefix ?? `molt-${randomUUID().slice(0, 8)}`, maxWaitMs: opts.maxWaitMs, onNeedsOperator: opts.onNeedsOperator, writeLimits: opts.writeLimits ?? NO_GAPS, now: opts.now });
}

describe('moltbook adapter', () => {
  it('turns comments on the agent\'s post into notifications with stable ids, and reads the post only when all are handled', async () => {
    fake = await startFakeMoltbook();
    const hub = adapterFor(fake, ['greeter']);
    fake.addAgent('alice');
    const post = fake.post('greeter', { title: 'Hello', content: 'I am new here' });
    const c1 = fake.comment('alice', post.id, 'welcome!');
    const c2 = fake.comment('alice', post.id, 'what do you do?');
    const bystander = fake.comment('alice', post.id, 'a reply to alice herself', c1.id);

    expect(await hub.agentsWithNotifications()).toMatchObject([{ name: 'greeter', notification_count: 2 }]);
    const page = await hub.listNotifications('greeter');
    expect(page.notifications.map((n) => n.id)).toEqual([`${post.id}:${c1.id}`, `${post.id}:${c2.id}`]);
    expect(page.notifications[0]).toMatchObject({ type: 'reply', post_id: post.id, comment_id: c1.id, from: { name: 'alice' }, content: 'welcome!' });
    expect(page.notifications.map((n) => n.comment_id)).not.toContain(bystander.id);
    expect(JSON.stringify(page)).not.toContain(ADVICE_MARKER);

    // One handled: the post stays unread on the hub, so its sibling is not lost.
    await hub.markRead('greeter', [`${post.id}:${c1.id}`]);
    expect(fake.unread('greeter')).toHaveLength(2);
    expect((await hub.listNotifications('greeter')).notifications.map((n) => n.comment_id)).toEqual([c2.id]);
    await hub.markRead('greeter', [`${post.id}:${c2.id}`]);
    expect(fake.unread('greeter')).toEqual([]);
    expect((await hub.listNotifications('greeter')).notifications).toEqual([]);
  });

  // Moltbook marks a whole post read at once: a comment written between warren's last read of the thread and that
  // mark would be read on the hub and never seen. The thread is read again after the mark.
  /** greeter's post with alice's comment on it, listed: the notification is pending, the post unread on the hub. */
  async function listedThread(opts: { prefix?: string; now?: () => number } = {}) {
    const molt = await startFakeMoltbook();
    fake = molt; // closed after the test
    const hub = adapterFor(molt, ['greeter'], opts);
    molt.addAgent('alice');
    const post = molt.post('greeter', { title: 'Hello', content: 'hi' });
    const first = molt.comment('alice', post.id, 'one');
    await hub.listNotifications('greeter');
    return { hub, post, first, molt };
  }
  const readByPost = (postId: string) => (method: string, path: string): boolean => method === 'POST' && path === `/notifications/read-by-post/${postId}`;
  const threadRead = (postId: string) => (method: string, path: string): boolean => method === 'GET' && path.startsWith(`/posts/${postId}/comments`);

  it('keeps a comment that arrived after the listing when the post is marked read, reading the thread once', async () => {
    const { hub, post, first, molt } = await listedThread();
    const late = molt.comment('alice', post.id, 'two, while greeter was busy');
    const before = molt.requests.length;
    await hub.markRead('greeter', [`${post.id}:${first.id}`]);
    expect(molt.requests.slice(before).map((r) => `${r.method} ${r.path.split('?')[0]}`)).toEqual([`POST /notifications/read-by-post/${post.id}`, `GET /posts/${post.id}/comments`]);
    expect((await hub.listNotifications('greeter')).notifications.map((n) => n.comment_id)).toEqual([late.id]);
  });

  it('keeps a comment that arrives just before its post is marked read after an answer', async () => {
    const { hub, post, first, molt } = await listedThread();
    let late: { id: string } | undefined;
    molt.beforeNext(readByPost(post.id), { act: () => void (late = molt.comment('alice', post.id, 'two, just before the mark')) });
    await hub.markRead('greeter', [`${post.id}:${first.id}`]);
    expect(late).toBeDefined();
    expect(await hub.agentsWithNotifications()).toMatchObject([{ name: 'greeter', notification_count: 1 }]);
    expect((await hub.listNotifications('greeter')).notifications.map((n) => n.comment_id)).toEqual([late!.id]);
  });

  it('keeps a comment that arrives just before a thread with nothing to answer is marked read', async () => {
    const { hub, post, first, molt } = await listedThread();
    // Handled, but the post not marked read (the mark failed): the next listing finds nothing to answer on it.
    molt.beforeNext(readByPost(post.id), { status: 500 });
    await expect(hub.markRead('greeter', [`${post.id}:${first.id}`])).rejects.toThrow();
    let late: { id: string } | undefined;
    molt.beforeNext(readByPost(post.id), { act: () => void (late = molt.comment('alice', post.id, 'two, just before the mark')) });
    await hub.listNotifications('greeter');
    expect(late).toBeDefined();
    expect((await hub.listNotifications('greeter')).notifications.map((n) => n.comment_id)).toEqual([late!.id]);
  });

  it('reads the thread again later when it could not right after marking it read', async () => {
    const { hub, post, first, molt } = await listedThread();
    let late: { id: string } | undefined;
    molt.beforeNext(readByPost(post.id), { act: () => void (late = molt.comment('alice', post.id, 'two, just before the mark')) });
    molt.beforeNext(threadRead(post.id), { status: 500 });
    // The answer's own work is done: the failed read is left for later, not the activation's failure.
    await hub.markRead('greeter', [`${post.id}:${first.id}`]);
    expect(molt.unread('greeter')).toEqual([]);
    expect(await hub.agentsWithNotifications()).toMatchObject([{ name: 'greeter', notification_count: 1 }]);
    expect((await hub.listNotifications('greeter')).notifications.map((n) => n.comment_id)).toEqual([late!.id]);
    expect((await hub.listNotifications('greeter')).notifications.map((n) => n.comment_id)).toEqual([late!.id]);
  });

  it('has the intent to read the thread again in Redis before the mark is sent', async () => {
    const prefix = `molt-${randomUUID().slice(0, 8)}`;
    const { hub, post, first, molt } = await listedThread({ prefix });
    let atMark: Promise<string | null> | undefined;
    // Read as the mark arrives: a daemon killed right after it would leave this for the next run.
    molt.beforeNext(readByPost(post.id), { act: () => void (atMark = redis.hget(new RedisKeys(prefix).moltbookRecheck('greeter'), post.id)) });
    await hub.markRead('greeter', [`${post.id}:${first.id}`]);
    expect(await atMark).toMatch(/^\d+\|\d+$/);
    expect(await redis.hlen(new RedisKeys(prefix).moltbookRecheck('greeter'))).toBe(0); // read again: done
  });

  it('reads a thread again from the oldest intent kept for it, not from a later mark', async () => {
    const { hub, post, first, molt } = await listedThread();
    let late: { id: string } | undefined;
    molt.beforeNext(readByPost(post.id), { act: () => void (late = molt.comment('alice', post.id, 'two, just before the mark')) });
    molt.beforeNext(threadRead(post.id), { status: 500 }); // the read after the mark fails: the intent stays
    await hub.markRead('greeter', [`${post.id}:${first.id}`]);
    // The next run's read of the intent fails too; a newer comment is listed and answered meanwhile.
    await new Promise((r) => setTimeout(r, 5));
    const third = molt.comment('alice', post.id, 'three');
    molt.beforeNext(threadRead(post.id), { status: 500 });
    expect((await hub.listNotifications('greeter')).notifications.map((n) => n.comment_id)).toEqual([third.id]);
    await hub.markRead('greeter', [`${post.id}:${third.id}`]);
    // That mark's read starts where the first intent did: the comment written before the first mark is found.
    expect((await hub.listNotifications('greeter')).notifications.map((n) => n.comment_id)).toEqual([late!.id]);
  });

  it('ends an intent the hub refuses for good at once, and one it keeps failing after a day', async () => {
    let now = Date.now();
    const prefix = `molt-${randomUUID().slice(0, 8)}`;
    const { hub, post, first, molt } = await listedThread({ prefix, now: () => now });
    const intents = (): Promise<number> => redis.hlen(new RedisKeys(prefix).moltbookRecheck('greeter'));
    molt.beforeNext(threadRead(post.id), { status: 403 });
    await hub.markRead('greeter', [`${post.id}:${first.id}`]);
    expect(await intents()).toBe(0);

    const second = molt.comment('alice', post.id, 'two');
    now += 120_000; // past home_interval: /home is read again
    expect((await hub.listNotifications('greeter')).notifications.map((n) => n.comment_id)).toEqual([second.id]);
    molt.beforeNext(threadRead(post.id), { status: 503 });
    await hub.markRead('greeter', [`${post.id}:${second.id}`]);
    expect(await intents()).toBe(1);
    expect(await hub.agentsWithNotifications()).toMatchObject([{ name: 'greeter', notification_count: 1 }]); // it wakes the agent
    now += 25 * 3_600_000;
    await hub.listNotifications('greeter');
    expect(await intents()).toBe(0);
    expect(await hub.agentsWithNotifications()).toEqual([]);
  });

  it('solves the challenge of a new comment and verifies it, so the comment is published', async () => {
    fake = await startFakeMoltbook();
    const hub = adapterFor(fake, ['greeter']);
    fake.addAgent('alice');
    const post = fake.post('alice', { title: 'Q', content: 'anyone?' });
    const c = await hub.createComment({ agent: 'greeter', postId: post.id, content: 'me!' }, { idempotencyKey: 'k1' });
    expect(fake.challenges).toHaveLength(1);
    expect(fake.challenges[0]!.used).toBe(true);
    expect(fake.commentsBy('greeter', post.id)).toMatchObject([{ id: c.id, content: 'me!', verified: true }]);
    const verify = fake.requests.find((r) => r.path === '/verify');
    expect(verify?.body).toEqual({ verification_code: fake.challenges[0]!.code, answer: '28.00' });
  });

  it('refuses to guess an unreadable challenge: the comment stays unpublished and the failure is counted', async () => {
    fake = await startFakeMoltbook({ problems: [{ plain: 'a lobster doubles its pebbles, how many now', answer: '2.00' }] });
    const hub = adapterFor(fake, ['greeter']);
    fake.addAgent('alice');
    const post = fake.post('alice', { title: 'Q', content: 'anyone?' });
    const err = await hub.createComment({ agent: 'greeter', postId: post.id, content: 'me!' }, { idempotencyKey: 'k2' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MoltbookChallengeError);
    expect((err as MoltbookChallengeError).consecutiveFailures).toBe(1);
    expect(fake.requests.some((r) => r.path === '/verify')).toBe(false);
    expect(fake.commentsBy('greeter', post.id).every((c) => !c.verified)).toBe(true);
  });

  it('pauses the agent after three challenges in a row not passed, well before the ten that suspend it', async () => {
    fake = await startFakeMoltbook({ problems: [{ plain: 'a lobster doubles its pebbles, how many now', answer: '2.00' }] });
    const paused: string[] = [];
    const hub = adapterFor(fake, ['greeter'], { onNeedsOperator: (agent, why) => void paused.push(`${agent}: ${why}`) });
    fake.addAgent('alice');
    const post = fake.post('alice', { title: 'Q', content: 'anyone?' });
    for (let i = 1; i <= 3; i++) {
      await hub.createComment({ agent: 'greeter', postId: post.id, content: `try ${i}` }).catch(() => undefined);
      expect(paused).toHaveLength(i < 3 ? 0 : 1);
    }
    expect(paused[0]).toMatch(/^greeter: 3 verification challenges in a row not passed/);
  });

  it('never repeats a POST blindly: after a 500 that created the comment, the retry finds it on the thread', async () => {
    fake = await startFakeMoltbook({ challenges: false });
    const hub = adapterFor(fake, ['greeter']);
    fake.addAgent('alice');
    const post = fake.post('alice', { title: 'Q', content: 'anyone?' });
    fake.failNextCommentAfterCreate();
    const first = await hub.createComment({ agent: 'greeter', postId: post.id, content: 'the answer' }, { idempotencyKey: 'notification:x:reply' }).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(HubError);
    expect((first as HubError).retryable).toBe(true);
    const again = await hub.createComment({ agent: 'greeter', postId: post.id, content: 'the answer' }, { idempotencyKey: 'notification:x:reply' });
    expect(fake.commentsBy('greeter', post.id)).toMatchObject([{ id: again.id, content: 'the answer' }]);
    expect(fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/comments'))).toHaveLength(1);
    // The same text in the same thread under another key is not posted twice either.
    await hub.createComment({ agent: 'greeter', postId: post.id, content: ' the   answer ' }, { idempotencyKey: 'other' });
    expect(fake.commentsBy('greeter', post.id)).toHaveLength(1);
  });

  it('honours retry_after_seconds, retry_after_minutes and Retry-After per key, while other keys go on', async () => {
    fake = await startFakeMoltbook({ challenges: false });
    const hub = adapterFor(fake, ['greeter', 'helper'], { maxWaitMs: 1_000 });
    fake.addAgent('alice');
    const post = fake.post('alice', { title: 'Q', content: 'anyone?' });
    fake.rateLimitNext({ on: 'comment', agent: 'greeter', retry_after_seconds: 20 });
    const err = (await hub.createComment({ agent: 'greeter', postId: post.id, content: 'a' }, { idempotencyKey: 'r1' }).catch((e: unknown) => e)) as HubError;
    expect(err).toMatchObject({ status: 429, retryable: true, retryAfterMs: 20_000 });
    const posts = fake.requests.length;
    const held = (await hub.createComment({ agent: 'greeter', postId: post.id, content: 'a' }, { idempotencyKey: 'r1' }).catch((e: unknown) => e)) as HubError;
    expect(held.status).toBe(429);
    expect(held.retryAfterMs).toBeGreaterThan(18_000);
    expect(fake.requests.slice(posts).filter((r) => r.method === 'POST')).toEqual([]); // held back locally, no POST
    await hub.createComment({ agent: 'helper', postId: post.id, content: 'b' }, { idempotencyKey: 'r2' });
    expect(fake.commentsBy('helper', post.id)).toHaveLength(1);

    fake.rateLimitNext({ on: 'comment', agent: 'helper', retry_after_minutes: 2 });
    expect(((await hub.createComment({ agent: 'helper', postId: post.id, content: 'c' }).catch((e: unknown) => e)) as HubError).retryAfterMs).toBe(120_000);
    fake.rateLimitNext({ on: 'any', agent: 'greeter', header_seconds: 7 });
    expect(((await hub.listNotifications('greeter').catch((e: unknown) => e)) as HubError).retryAfterMs).toBe(7_000);
  });

  it('reads every envelope variant', async () => {
    fake = await startFakeMoltbook({ challenges: false });
    const hub = adapterFor(fake, ['greeter']);
    fake.addAgent('alice');
    const post = fake.post('alice', { title: 'T', content: 'body', submolt: 'general' });
    fake.comment('alice', post.id, 'root');
    for (const e of ['named', 'data', 'results'] as const) {
      fake.setEnvelope(e);
      const p = await hub.getPost(post.id, { includeComments: true });
      expect(p).toMatchObject({ id: post.id, title: 'T', content: 'body', community: 'general', author: { name: 'alice' }, comments: [{ content: 'root' }] });
      expect((await hub.listPosts()).posts.map((x) => x.id)).toEqual([post.id]);
    }
  });

  it('stops using a key the hub refuses (401) and says the agent needs its operator', async () => {
    fake = await startFakeMoltbook();
    const paused: string[] = [];
    const hub = adapterFor(fake, ['greeter', 'helper'], { onNeedsOperator: (agent) => void paused.push(agent) });
    fake.revoke('greeter');
    expect(await hub.agentsWithNotifications()).toEqual([]);
    expect(hub.actsAs('greeter')).toBe(false);
    expect(hub.actsAs('helper')).toBe(true);
    expect(paused).toEqual(['greeter']);
    const homes = fake.requests.filter((r) => r.path === '/home').length;
    await hub.agentsWithNotifications();
    expect(fake.requests.filter((r) => r.path === '/home').length).toBe(homes + 0); // greeter not asked again; helper's home is cached
  });

  it('redacts a Moltbook key by its shape even when no config names it', async () => {
    fake = await startFakeMoltbook();
    const key = fake.addAgent('stranger').key;
    expect(new Redactor([]).redact(`failed with Authorization: Bearer ${key} (see log)`)).not.toContain(key.slice(9));
  });

  it('keeps a local budget ledger: spend recorded once per report key, warning/throttle/critical at 80/90/100 %', async () => {
    fake = await startFakeMoltbook();
    const keys = new Map([['greeter', fake.addAgent('greeter').key], ['rich', fake.addAgent('rich').key]]);
    const prefix = `molt-${randomUUID().slice(0, 8)}`;
    const hub = new MoltbookAdapter({ baseUrl: fake.url, keys, redis, prefix, budget: { defaultDailyLimitUsd: 1, defaultMonthlyLimitUsd: 100, perAgent: { rich: { daily: 10 } } } });
    expect(await hub.budgetHealth('greeter')).toMatchObject({ status: 'healthy', daily_used: 0, daily_limit: 1 });
    await hub.reportConsumption({ agent: 'greeter', tokensInput: 10, tokensOutput: 10, costUsd: 0.8 }, { idempotencyKey: 'a1' });
    await hub.reportConsumption({ agent: 'greeter', tokensInput: 10, tokensOutput: 10, costUsd: 0.8 }, { idempotencyKey: 'a1' }); // a retried report
    expect(await hub.budgetHealth('greeter')).toMatchObject({ status: 'warning', daily_used: 0.8, monthly_used: 0.8 });
    await hub.reportConsumption({ agent: 'greeter', tokensInput: 1, tokensOutput: 1, costUsd: 0.1 }, { idempotencyKey: 'a2' });
    expect((await hub.budgetHealth('greeter')).status).toBe('throttle');
    await hub.reportConsumption({ agent: 'greeter', tokensInput: 1, tokensOutput: 1, costUsd: 0.1 }, { idempotencyKey: 'a3' });
    expect(await hub.budgetHealth('greeter')).toMatchObject({ status: 'critical', healthy: false });
    // Per-agent override, and the spend is kept in Redis: a new adapter (a restarted daemon) sees it.
    await hub.reportConsumption({ agent: 'rich', tokensInput: 1, tokensOutput: 1, costUsd: 1 }, { idempotencyKey: 'b1' });
    const again = new MoltbookAdapter({ baseUrl: fake.url, keys, redis, prefix, budget: { defaultDailyLimitUsd: 1, perAgent: { rich: { daily: 10 } } } });
    expect(await again.budgetHealth('rich')).toMatchObject({ status: 'healthy', daily_used: 1, daily_limit: 10 });
    expect((await again.budgetHealth('greeter')).status).toBe('critical');
    // The fleet's limit: each agent within its own, together at it.
    const fleetPrefix = `molt-${randomUUID().slice(0, 8)}`;
    const fleet = new MoltbookAdapter({ baseUrl: fake.url, keys, redis, prefix: fleetPrefix, budget: { defaultDailyLimitUsd: 10, fleetDailyLimitUsd: 1 } });
    await fleet.reportConsumption({ agent: 'greeter', tokensInput: 1, tokensOutput: 1, costUsd: 0.5 }, { idempotencyKey: 'f1' });
    expect((await fleet.budgetHealth('rich')).status).toBe('healthy');
    await fleet.reportConsumption({ agent: 'rich', tokensInput: 1, tokensOutput: 1, costUsd: 0.5 }, { idempotencyKey: 'f2' });
    expect((await fleet.budgetHealth('greeter')).status).toBe('critical');
    expect((await fleet.budgetHealth('rich')).status).toBe('critical');
    // No request about budgets went to Moltbook: it has no such endpoint.
    expect(fake.requests).toEqual([]);
  });

  it('keeps Moltbook\'s posting limits locally: comment and post cooldowns, 50 comments a day, stricter under 24 h', async () => {
    // About the write limits warren keeps on its own clock: the fake's per-IP limit (real time) is another test's.
    fake = await startFakeMoltbook({ challenges: false, rateLimits: { requestsPerMinute: 10_000 } });
    let now = Date.parse('2026-11-24T10:00:00Z');
    const hub = adapterFor(fake, ['old'], { writeLimits: DEFAULT_AGE_LIMITS, maxWaitMs: 0, now: () => now });
    const young = fake.addAgent('young', { createdAt: new Date(now - 3_600_000).toISOString() });
    const youngHub = new MoltbookAdapter({ baseUrl: fake.url, keys: new Map([['young', young.key]]), redis, prefix: `molt-${randomUUID().slice(0, 8)}`, maxWaitMs: 0, now: () => now });
    fake.addAgent('alice');
    const post = fake.post('alice', { title: 'Open thread', content: 'say hi' });
    const held = (p: Promise<unknown>): Promise<unknown> => p.then(() => 'written', (e: unknown) => (e instanceof HubError ? { status: e.status, retryAfterMs: e.retryAfterMs } : e));
    let n = 0;
    const comment = (agentHub: MoltbookAdapter, agent: string): Promise<unknown> => held(agentHub.createComment({ agent, postId: post.id, content: `note ${++n}` }));

    expect(await comment(hub, 'old')).toBe('written');
    expect(await comment(hub, 'old')).toEqual({ status: 429, retryAfterMs: 20_000 }); // a comment per 20 s
    now += 20_000;
    expect(await comment(hub, 'old')).toBe('written');
    expect(await held(hub.createPost({ agent: 'old', title: 'Mine', content: 'one' }))).toBe('written');
    now += 29 * 60_000;
    expect(await held(hub.createPost({ agent: 'old', title: 'Mine 2', content: 'two' }))).toEqual({ status: 429, retryAfterMs: 60_000 }); // a post per 30 min
    for (; fake.commentsBy('old').length < 50; now += 20_000) expect(await comment(hub, 'old')).toBe('written');
    now += 20_000;
    const capped = (await comment(hub, 'old')) as { status: number; retryAfterMs: number };
    expect(capped.status).toBe(429);
    expect(now + capped.retryAfterMs).toBe(Date.parse('2026-11-25T00:00:00Z')); // until the next UTC day
    expect(fake.commentsBy('old')).toHaveLength(50);
    expect(await hub.commentsLeftToday('old')).toBe(0);
    now = Date.parse('2026-11-25T00:00:01Z');
    expect(await hub.commentsLeftToday('old')).toBe(50);

    // Under 24 h old (from /agents/me created_at): 60 s between comments, a post per 2 h, 20 comments a day.
    expect(await comment(youngHub, 'young')).toBe('written');
    now += 30_000;
    expect(await comment(youngHub, 'young')).toEqual({ status: 429, retryAfterMs: 30_000 });
    expect(await held(youngHub.createPost({ agent: 'young', title: 'Hi', content: 'new here' }))).toBe('written');
    now += 90 * 60_000;
    expect(await held(youngHub.createPost({ agent: 'young', title: 'Hi again', content: 'still new' }))).toEqual({ status: 429, retryAfterMs: 30 * 60_000 });
    for (; fake.commentsBy('young').length < 20; now += 60_000) expect(await comment(youngHub, 'young')).toBe('written');
    now += 60_000;
    expect(await comment(youngHub, 'young')).toMatchObject({ status: 429 });
    expect(fake.commentsBy('young')).toHaveLength(20);
    expect(fake.requests.filter((r) => r.status === 429)).toEqual([]); // all held back locally
  });
});
