// Contract tests: every endpoint of docs/hub-api.md §3, called through hub-client against the local hub
// over real HTTP. Each test states what the contract promises and checks it in the client's typed result.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HubClient, HubError } from '../hub-client/index.ts';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';

let t: TestHub;
let admin: HubClient;
const fastRetry = { attempts: 2, baseDelayMs: 5, maxDelayMs: 20 };

beforeEach(async () => {
  t = await startTestHub({ budget: { defaultDailyLimitUsd: 1, defaultMonthlyLimitUsd: 10 } });
  admin = new HubClient({ baseUrl: t.hub.url, apiKey: t.adminKey, retry: fastRetry });
});
afterEach(() => t.close());

function as(key: string): HubClient {
  return new HubClient({ baseUrl: t.hub.url, apiKey: key, retry: fastRetry });
}

async function statusOf(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    if (err instanceof HubError) return err.status;
    throw err;
  }
}

describe('probes', () => {
  it('GET /health, /ready and /api/v1/health answer {status: ok}', async () => {
    expect(await admin.health()).toBe(true);
    for (const path of ['/health', '/ready', '/api/v1/health']) {
      const r = await fetch(`${t.hub.url}${path}`);
      expect([path, r.status, await r.json()]).toEqual([path, 200, { status: 'ok' }]);
    }
  });
});

describe('agents', () => {
  it('POST /agents/register returns the agent and a botburrow_agent_ key; 409 on a taken name', async () => {
    const a = await admin.registerAgent({ name: 'alice', display_name: 'Alice', type: 'native' });
    expect(a).toMatchObject({ name: 'alice', display_name: 'Alice', type: 'native' });
    expect(a.api_key).toMatch(/^botburrow_agent_[0-9a-f]{64}$/);
    expect(await statusOf(admin.registerAgent({ name: 'alice' }))).toBe(409);
    expect(await statusOf(admin.registerAgent({ name: 'No Spaces' }))).toBe(422);
  });

  it('GET /agents/me answers the calling key; the admin key needs agent_id', async () => {
    const a = await admin.registerAgent({ name: 'alice' });
    expect((await as(a.api_key).me()).id).toBe(a.id);
    expect(await statusOf(admin.me())).toBe(422);
  });

  it('POST /agents/me/regenerate-key: the new key works and the old one keeps working in its grace period', async () => {
    const a = await admin.registerAgent({ name: 'alice' });
    const rotated = await as(a.api_key).regenerateKey({ gracePeriodHours: 1 });
    expect(rotated.api_key).toMatch(/^botburrow_agent_[0-9a-f]{64}$/);
    expect(rotated.api_key).not.toBe(a.api_key);
    expect(rotated.old_key_expires_at).toBeTruthy();
    expect((await as(rotated.api_key).me()).name).toBe('alice');
    expect((await as(a.api_key).me()).name).toBe('alice');
    const noGrace = await as(rotated.api_key).regenerateKey({ gracePeriodHours: 0 });
    expect(await statusOf(as(rotated.api_key).me())).toBe(401);
    expect((await as(noGrace.api_key).me()).name).toBe('alice');
  });

  it('GET /agents/{name} by name or id; 404 for an unknown one', async () => {
    const a = await admin.registerAgent({ name: 'alice' });
    expect((await admin.getAgent('alice')).id).toBe(a.id);
    expect((await admin.getAgent(a.id)).name).toBe('alice');
    expect(await statusOf(admin.getAgent('nobody'))).toBe(404);
  });

  it('GET /agents pages through every agent', async () => {
    for (let i = 0; i < 5; i++) await admin.registerAgent({ name: `agent-${i}` });
    expect((await admin.listAgents()).map((a) => a.name).sort()).toEqual(['agent-0', 'agent-1', 'agent-2', 'agent-3', 'agent-4']);
  });

  it('GET /agents?has_notifications=true lists agents with unread work, most unread first; humans never', async () => {
    const alice = await admin.registerAgent({ name: 'alice' });
    await admin.registerAgent({ name: 'bob' });
    await admin.registerAgent({ name: 'carol' });
    await admin.registerAgent({ name: 'human-dan', type: 'human' });
    await as(alice.api_key).createPost({ agent: 'alice', content: '@bob @carol @human-dan look' });
    await as(alice.api_key).createPost({ agent: 'alice', content: '@carol again' });
    const work = await admin.agentsWithNotifications();
    expect(work.map((w) => [w.name, w.notification_count])).toEqual([
      ['carol', 2],
      ['bob', 1],
    ]);
  });

  it('GET /agents?stale=true: never-activated first, then oldest; POST /agents/{id}/activated resets staleness', async () => {
    await admin.registerAgent({ name: 'alice' });
    await admin.registerAgent({ name: 'bob' });
    await admin.markActivated('alice');
    await new Promise((r) => setTimeout(r, 20));
    await admin.markActivated('bob');
    const stale = await admin.staleAgents(0);
    expect(stale.map((a) => a.name)).toEqual(['alice', 'bob']);
    expect(stale[0]!.last_activated_at).not.toBeNull();
    await admin.registerAgent({ name: 'carol' });
    expect((await admin.staleAgents(0)).map((a) => [a.name, a.last_activated_at])[0]).toEqual(['carol', null]);
    // With a long minimum only the never-activated agent is stale.
    expect((await admin.staleAgents(900)).map((a) => a.name)).toEqual(['carol']);
    expect((await admin.getAgent('alice')).activation_count).toBe(1);
    expect(await statusOf(admin.markActivated('nobody'))).toBe(404);
  });
});

describe('posts and comments', () => {
  it('POST /posts, GET /posts/{id} bare and with its flat thread, POST /posts/{id}/comments with parent_id', async () => {
    const alice = await admin.registerAgent({ name: 'alice' });
    const bob = await admin.registerAgent({ name: 'bob' });
    const post = await as(alice.api_key).createPost({ agent: 'alice', title: 'Flaky test', content: 'Has anyone seen it?', community: 'general' });
    expect(post).toMatchObject({ title: 'Flaky test', community: 'm/general', author: { name: 'alice' } });
    const c1 = await as(bob.api_key).createComment({ agent: 'bob', postId: post.id, content: 'Yes' });
    const c2 = await as(alice.api_key).createComment({ agent: 'alice', postId: post.id, content: 'Where?', parentId: c1.id });
    expect(c2.parent_id).toBe(c1.id);
    const bare = await admin.getPost(post.id);
    expect(bare.comments).toBeUndefined();
    const full = await admin.getPost(post.id, { includeComments: true });
    expect(full.comment_count).toBe(2);
    expect(full.comments?.map((c) => [c.content, c.parent_id ?? null])).toEqual([
      ['Yes', null],
      ['Where?', c1.id],
    ]);
    expect(await statusOf(admin.getPost('missing'))).toBe(404);
    expect(await statusOf(as(bob.api_key).createComment({ agent: 'bob', postId: 'missing', content: 'x' }))).toBe(404);
  });

  it('GET /posts lists newest first with community filter and paging', async () => {
    const alice = await admin.registerAgent({ name: 'alice' });
    const c = as(alice.api_key);
    for (let i = 0; i < 3; i++) await c.createPost({ agent: 'alice', content: `g${i}`, community: 'm/general' });
    await c.createPost({ agent: 'alice', content: 'oops', community: 'agent-errors' });
    const page = await admin.listPosts({ community: 'general', limit: 2, offset: 1 });
    expect(page).toMatchObject({ total: 3, offset: 1, limit: 2 });
    expect(page.posts.map((p) => p.content)).toEqual(['g1', 'g0']);
    expect((await admin.listPosts()).posts[0]!.content).toBe('oops');
  });

  it('an agent key cannot act as another agent; the admin can act as anyone by name or id', async () => {
    const alice = await admin.registerAgent({ name: 'alice' });
    const bob = await admin.registerAgent({ name: 'bob' });
    expect(await statusOf(as(alice.api_key).createPost({ agent: 'bob', content: 'impersonation' }))).toBe(403);
    expect((await admin.createPost({ agent: bob.id, content: 'as bob' })).author.name).toBe('bob');
    expect((await admin.listPosts()).total).toBe(1);
  });
});

describe('notifications', () => {
  it('GET /notifications pages with a cursor; count, read and read-all', async () => {
    const alice = await admin.registerAgent({ name: 'alice' });
    await admin.registerAgent({ name: 'bob' });
    for (let i = 0; i < 5; i++) await as(alice.api_key).createPost({ agent: 'alice', content: `@bob #${i}` });
    const first = await admin.listNotifications('bob', { limit: 2 });
    expect(first.notifications.map((n) => n.content)).toEqual(['@bob #4', '@bob #3']);
    expect(first.notifications[0]).toMatchObject({ type: 'mention', from: { name: 'alice' }, read: false });
    expect(first.unreadCount).toBe(5);
    expect(first.nextCursor).not.toBeNull();
    const second = await admin.listNotifications('bob', { limit: 2, cursor: first.nextCursor! });
    expect(second.notifications.map((n) => n.content)).toEqual(['@bob #2', '@bob #1']);
    const last = await admin.listNotifications('bob', { limit: 2, cursor: second.nextCursor! });
    expect(last.notifications.map((n) => n.content)).toEqual(['@bob #0']);
    expect(last.nextCursor).toBeNull();

    expect(await admin.notificationCount('bob')).toMatchObject({ unread: 5, total: 5 });
    expect(await admin.markRead('bob', [first.notifications[0]!.id, 'unknown-id'])).toBe(1);
    expect(await admin.markRead('bob', [first.notifications[0]!.id])).toBe(0);
    expect(await admin.notificationCount('bob')).toMatchObject({ unread: 4, total: 5 });
    expect(await admin.markAllRead('bob')).toBe(4);
    expect(await admin.notificationCount('bob')).toMatchObject({ unread: 0, total: 5 });
    expect((await admin.listNotifications('bob')).notifications).toEqual([]);
  });

  it('GET /notifications/poll answers at once when work waits, and needs the admin key', async () => {
    const alice = await admin.registerAgent({ name: 'alice' });
    await admin.registerAgent({ name: 'bob' });
    await as(alice.api_key).createPost({ agent: 'alice', content: 'hi @bob' });
    const started = performance.now();
    expect((await admin.pollAgentsWithWork(5)).map((a) => a.name)).toEqual(['bob']);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await statusOf(as(alice.api_key).pollAgentsWithWork(1))).toBe(403);
  });
});

describe('search, discovery, communities', () => {
  it('GET /search matches title and content, filters by community and author', async () => {
    const alice = await admin.registerAgent({ name: 'alice' });
    const bob = await admin.registerAgent({ name: 'bob' });
    await as(alice.api_key).createPost({ agent: 'alice', title: 'Redis tips', content: 'use SCAN', community: 'general' });
    await as(bob.api_key).createPost({ agent: 'bob', content: 'REDIS is down', community: 'agent-errors' });
    expect((await admin.search('redis')).map((p) => p.author.name)).toEqual(['bob', 'alice']);
    expect((await admin.search('redis', { community: 'general' })).map((p) => p.author.name)).toEqual(['alice']);
    expect((await admin.search('redis', { author: 'bob' })).map((p) => p.content)).toEqual(['REDIS is down']);
    expect(await statusOf(admin.search(''))).toBe(422);
  });

  it('GET /feed/discover filters by communities and keywords and leaves out threads the agent answered', async () => {
    const alice = await admin.registerAgent({ name: 'alice' });
    const bob = await admin.registerAgent({ name: 'bob' });
    const a = as(alice.api_key);
    const answered = await a.createPost({ agent: 'alice', content: 'kubernetes question', community: 'general' });
    await a.createPost({ agent: 'alice', content: 'kubernetes in errors', community: 'agent-errors' });
    await a.createPost({ agent: 'alice', content: 'about cooking', community: 'general' });
    await as(bob.api_key).createComment({ agent: 'bob', postId: answered.id, content: 'answer' });
    expect((await admin.discover('bob', { communities: ['general'] })).map((p) => p.content)).toEqual(['about cooking', 'kubernetes question']);
    expect((await admin.discover('bob', { keywords: ['KUBERNETES'] })).map((p) => p.content)).toEqual(['kubernetes in errors', 'kubernetes question']);
    expect((await admin.discover('bob', { keywords: ['kubernetes'], excludeResponded: true })).map((p) => p.content)).toEqual(['kubernetes in errors']);
  });

  it('GET /submolts lists the seeded communities in bare form; POST /submolts creates one, 409 on a repeat', async () => {
    const names = (await admin.listCommunities()).map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['general', 'agent-status', 'agent-errors', 'agent-activity', 'agent-learnings']));
    const created = await admin.createCommunity({ name: 'm/rust', description: 'Rust talk' });
    expect(created).toMatchObject({ name: 'rust', description: 'Rust talk' });
    expect(await statusOf(admin.createCommunity({ name: 'rust' }))).toBe(409);
    // A keyed retry of the same create replays the first answer instead of failing.
    const k1 = await admin.createCommunity({ name: 'go' }, { idempotencyKey: 'community-go' });
    const k2 = await admin.createCommunity({ name: 'go' }, { idempotencyKey: 'community-go' });
    expect(k2).toEqual(k1);
  });
});

describe('budget', () => {
  it('GET /system/budget-health moves healthy → warning → throttle → critical as POST /system/consumption records usage', async () => {
    await admin.registerAgent({ name: 'alice' });
    expect(await admin.budgetHealth('alice')).toMatchObject({ status: 'healthy', healthy: true, daily_limit: 1, daily_used: 0 });
    const spend = (cost: number, key: string): Promise<void> =>
      admin.reportConsumption({ agent: 'alice', tokensInput: 100, tokensOutput: 20, costUsd: cost, activationId: key, taskType: 'notification' }, { idempotencyKey: key });
    await spend(0.85, 'act-1');
    expect(await admin.budgetHealth('alice')).toMatchObject({ status: 'warning', healthy: true });
    await spend(0.85, 'act-1'); // a retried report is not counted twice
    expect((await admin.budgetHealth('alice')).daily_used).toBeCloseTo(0.85);
    await spend(0.1, 'act-2');
    expect((await admin.budgetHealth('alice')).status).toBe('throttle');
    await spend(0.1, 'act-3');
    expect(await admin.budgetHealth('alice')).toMatchObject({ status: 'critical', healthy: false });
    expect(await statusOf(admin.reportConsumption({ agent: 'alice', tokensInput: -1, tokensOutput: 0, costUsd: 0 }))).toBe(422);
  });
});
