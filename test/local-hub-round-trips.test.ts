// What lets an activation make fewer hub calls (docs/hub-api.md §5.2, §5.3): the inbox carrying the agent's
// budget-health answer, and a reply that marks its notification read in the same transaction; the hub client
// asking for both, and an activation on warren's hub making five calls where it made seven.
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runActivation } from '../activation/activation.ts';
import { MemoryReplyOutbox } from '../activation/reply-outbox.ts';
import type { HubAdapter } from '../hub-client/adapter.ts';
import { HubClient } from '../hub-client/client.ts';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { StubExecutor } from './support/stub-executor.ts';

let t: TestHub;
beforeEach(async () => {
  t = await startTestHub({ budget: { defaultDailyLimitUsd: 10 } });
});
afterEach(() => t.close());

type Inbox = { notifications: Array<{ id: string; post_id: string }>; unread_count: number; budget?: Record<string, unknown> };
const inbox = (key: string, query: Record<string, string | boolean> = {}) => t.call<Inbox>('GET', '/notifications', { key, query: { unread: true, ...query } });

describe('inbox with the budget', () => {
  it('carries the same answer as budget-health when asked, and nothing more when not', async () => {
    const bob = await t.register('bob');
    const alice = await t.register('alice');
    await t.call('POST', '/posts', { key: alice.key, body: { content: '@bob hello' } });
    await t.call('POST', '/system/consumption', { key: bob.key, body: { agent_id: 'bob', tokens_input: 1, tokens_output: 1, cost_usd: 8.5, tool_type: 'gpt' } });
    expect((await inbox(bob.key)).body.budget).toBeUndefined();
    const withBudget = await inbox(t.adminKey, { agent_id: 'bob', include_budget: true });
    expect(withBudget.body.notifications).toHaveLength(1);
    const health = await t.call('GET', '/system/budget-health', { key: t.adminKey, query: { agent_id: 'bob' } });
    expect(withBudget.body.budget).toEqual(health.body);
    expect(withBudget.body.budget).toMatchObject({ agent_id: 'bob', status: 'warning', daily_used: 8.5 });
    // By id, as budget-health echoes the reference it was given.
    expect((await inbox(t.adminKey, { agent_id: bob.id, include_budget: true })).body.budget).toMatchObject({ agent_id: bob.id });
    expect((await inbox(t.adminKey, { agent_id: 'bob', include_budget: 'maybe' })).status).toBe(422);
  });
});

describe('a reply that marks its notification read', () => {
  const mentionBob = async (): Promise<{ bob: { id: string; key: string }; alice: { id: string; key: string }; postId: string; notificationId: string }> => {
    const bob = await t.register('bob');
    const alice = await t.register('alice');
    const post = await t.call<{ id: string }>('POST', '/posts', { key: alice.key, body: { content: '@bob question?' } });
    const n = (await inbox(bob.key)).body.notifications[0]!;
    return { bob, alice, postId: post.body.id, notificationId: n.id };
  };

  it('stores the comment and marks the notification in one call, and says how many it marked', async () => {
    const { bob, postId, notificationId } = await mentionBob();
    const reply = await t.call('POST', `/posts/${postId}/comments`, { key: bob.key, body: { content: 'answer' }, query: { mark_read: notificationId } });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ post_id: postId, content: 'answer', marked_read: 1 });
    expect((await inbox(bob.key)).body.unread_count).toBe(0);
    // Without the parameter the answer is the comment alone, as before.
    const plain = await t.call('POST', `/posts/${postId}/comments`, { key: bob.key, body: { content: 'more' } });
    expect(plain.body).not.toHaveProperty('marked_read');
  });

  it('marks nothing when the comment is refused, and only the author’s own notifications', async () => {
    const { bob, alice, postId, notificationId } = await mentionBob();
    const refused = await t.call('POST', '/posts/no-such-post/comments', { key: bob.key, body: { content: 'x' }, query: { mark_read: notificationId } });
    expect(refused.status).toBe(404);
    expect((await inbox(bob.key)).body.unread_count).toBe(1);
    // Alice replying cannot mark Bob's notification.
    const other = await t.call('POST', `/posts/${postId}/comments`, { key: alice.key, body: { content: 'me too' }, query: { mark_read: notificationId } });
    expect(other.body).toMatchObject({ marked_read: 0 });
    expect((await inbox(bob.key)).body.unread_count).toBe(1);
  });

  it('replays with the first answer (the notification was marked then), whatever mark_read says now', async () => {
    const { bob, postId, notificationId } = await mentionBob();
    const headers = { 'idempotency-key': `notification:${notificationId}:reply` };
    const first = await t.call('POST', `/posts/${postId}/comments`, { key: bob.key, body: { content: 'once' }, query: { mark_read: notificationId }, headers });
    const again = await t.call('POST', `/posts/${postId}/comments`, { key: bob.key, body: { content: 'once' }, query: { mark_read: notificationId }, headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(first.body).toMatchObject({ marked_read: 1 });
    const total = await t.call<{ comment_count: number }>('GET', `/posts/${postId}`, { key: bob.key });
    expect(total.body.comment_count).toBe(1);
  });

  it('bounds the list', async () => {
    const { bob, postId } = await mentionBob();
    const ids = Array.from({ length: 101 }, (_, i) => `n${i}`).join(',');
    expect((await t.call('POST', `/posts/${postId}/comments`, { key: bob.key, body: { content: 'x' }, query: { mark_read: ids } })).status).toBe(422);
  });
});

describe('the client and an activation on warren’s hub', () => {
  const agent: AgentDefinition = {
    name: 'bob',
    config: AgentConfigSchema.parse({ name: 'bob', description: 'Answers.', type: 'llm', brain: { model: 'm' }, capabilities: { grants: ['hub:read', 'hub:write'] } }),
    systemPrompt: 'You are {{name}}.',
    files: { config: 'config.yaml', prompt: 'system-prompt.md' },
  };
  /** The client, with every adapter method it is asked recorded in order. */
  const counted = (calls: string[]): HubAdapter => {
    const client = new HubClient({ baseUrl: t.hub.url, apiKey: t.adminKey });
    return new Proxy(client, {
      get(target, prop) {
        const v = Reflect.get(target, prop) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          calls.push(String(prop));
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  };
  const job = { agent: 'bob', trigger: 'notification' as const, enqueuedAt: Date.now() };

  it('the client reads the budget with the inbox and reports what a reply marked read', async () => {
    await t.register('bob');
    const alice = await t.register('alice');
    const post = await t.call<{ id: string }>('POST', '/posts', { key: alice.key, body: { content: '@bob hi' } });
    const client = new HubClient({ baseUrl: t.hub.url, apiKey: t.adminKey });
    expect((await client.listNotifications('bob')).budget).toBeUndefined();
    const page = await client.listNotifications('bob', { includeBudget: true });
    expect(page.budget).toMatchObject({ status: 'healthy', daily_limit: 10 });
    const n = page.notifications[0]!;
    expect((await client.createComment({ agent: 'bob', postId: post.body.id, content: 'no mark' })).marked_read).toBeUndefined();
    const reply = await client.createComment({ agent: 'bob', postId: post.body.id, content: 'hello', markRead: [n.id] });
    expect(reply.marked_read).toBe(1);
    expect((await client.notificationCount('bob')).unread).toBe(0);
  });

  it('an answered notification takes the inbox (with the budget), the thread, the reply (marking it read), usage and activated', async () => {
    await t.register('bob');
    const alice = await t.register('alice');
    const post = await t.call<{ id: string }>('POST', '/posts', { key: alice.key, body: { content: '@bob hi' } });
    const calls: string[] = [];
    const executor = new StubExecutor([{ termination: 'final', text: 'Hello Alice!' }]);
    const deps = { hub: counted(calls), agents: { get: (n: string) => (n === 'bob' ? agent : undefined) }, executors: { resolve: () => ({ executor }) }, outbox: new MemoryReplyOutbox(), logger: pino({ level: 'silent' }), redact: (text: string) => text };
    const outcome = await runActivation(deps, 'act-1', job, new AbortController().signal);
    expect(outcome.outcome).toMatchObject({ kind: 'answered', text: 'Hello Alice!' });
    expect(calls).toEqual(['listNotifications', 'getPost', 'createComment', 'reportConsumption', 'markActivated']);
    expect((await t.call<{ unread: number }>('GET', '/notifications/count', { key: t.adminKey, query: { agent_id: 'bob' } })).body.unread).toBe(0);
    const thread = await t.call<{ comments: Array<{ content: string }> }>('GET', `/posts/${post.body.id}`, { key: t.adminKey, query: { include_comments: true } });
    expect(thread.body.comments.map((c) => c.content)).toEqual(['Hello Alice!']);
  });

  it('the budget that came with the inbox still stops an activation at critical', async () => {
    await t.register('bob');
    const alice = await t.register('alice');
    await t.call('POST', '/posts', { key: alice.key, body: { content: '@bob hi' } });
    await t.call('POST', '/system/consumption', { key: t.adminKey, body: { agent_id: 'bob', tokens_input: 1, tokens_output: 1, cost_usd: 10 } });
    const calls: string[] = [];
    const executor = new StubExecutor([]);
    const deps = { hub: counted(calls), agents: { get: () => agent }, executors: { resolve: () => ({ executor }) }, outbox: new MemoryReplyOutbox(), logger: pino({ level: 'silent' }), redact: (text: string) => text };
    expect((await runActivation(deps, 'act-2', job, new AbortController().signal)).outcome).toEqual({ kind: 'skipped', reason: 'budget_critical' });
    expect(calls).toEqual(['listNotifications']);
  });
});
