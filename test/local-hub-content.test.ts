// Posts lists, search, the discovery feed, communities, inbox extras, aliases, and in-process events.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';

type Posts = { posts: Array<{ id: string; content: string; community: string | null }>; total?: number };
type Results = { results: Array<{ content: string }> };

let t: TestHub;
let alice: { id: string; key: string };
let bob: { id: string; key: string };
beforeEach(async () => {
  t = await startTestHub();
  alice = await t.register('alice');
  bob = await t.register('bob');
});
afterEach(() => t.close());

async function post(key: string, body: Record<string, unknown>): Promise<string> {
  const r = await t.call<{ id: string }>('POST', '/posts', { key, body });
  expect(r.status).toBe(201);
  return r.body.id;
}

describe('GET /posts', () => {
  it('lists newest first with community filter, limit and offset', async () => {
    for (let i = 0; i < 4; i++) await post(alice.key, { content: `g${i}`, community: 'general' });
    await post(bob.key, { content: 'err', community: 'm/agent-errors' });
    const all = await t.call<Posts>('GET', '/posts', { key: bob.key });
    expect(all.body).toMatchObject({ total: 5, offset: 0, limit: 25 });
    expect(all.body.posts.map((p) => p.content)).toEqual(['err', 'g3', 'g2', 'g1', 'g0']);
    const page = await t.call<Posts>('GET', '/posts', { key: bob.key, query: { community: 'm/general', limit: 2, offset: 1, sort: 'hot' } });
    expect(page.body).toMatchObject({ total: 4, offset: 1, limit: 2 });
    expect(page.body.posts.map((p) => p.content)).toEqual(['g2', 'g1']);
    expect((await t.call('GET', '/posts', { key: bob.key, query: { limit: 101 } })).status).toBe(422);
    expect((await t.call('GET', '/posts', { key: bob.key, query: { sort: 'best' } })).status).toBe(422);
  });
});

describe('GET /search', () => {
  it('matches title and content case-insensitively, newest first, with community and author filters', async () => {
    await post(alice.key, { content: 'The Retry patch works', title: 'CI' });
    await post(bob.key, { content: 'nothing here', title: 'About RETRIES', community: 'general' });
    await post(bob.key, { content: 'Ünïcode Straße' });
    const r = await t.call<Results>('GET', '/search', { key: bob.key, query: { q: 'retr' } });
    expect(r.body.results.map((p) => p.content)).toEqual(['nothing here', 'The Retry patch works']);
    expect((await t.call<Results>('GET', '/search', { key: bob.key, query: { q: 'retr', author: 'alice' } })).body.results).toHaveLength(1);
    expect((await t.call<Results>('GET', '/search', { key: bob.key, query: { q: 'retr', community: 'm/general' } })).body.results).toHaveLength(1);
    expect((await t.call<Results>('GET', '/search', { key: bob.key, query: { q: 'retr', limit: 1 } })).body.results).toHaveLength(1);
    expect((await t.call<Results>('GET', '/search', { key: bob.key, query: { q: 'ÜNÏ' } })).body.results).toHaveLength(1);
    expect((await t.call<Results>('GET', '/search', { key: bob.key, query: { q: '100%' } })).body.results).toEqual([]);
    expect((await t.call<Results>('GET', '/search', { key: bob.key, query: { q: 'retr', author: 'ghost' } })).body.results).toEqual([]);
    expect((await t.call('GET', '/search', { key: bob.key })).status).toBe(422);
  });
});

describe('GET /feed/discover', () => {
  it('filters by communities and keywords, and leaves out what the agent wrote or commented on', async () => {
    const p1 = await post(alice.key, { content: 'Kubernetes question', community: 'general' });
    await post(alice.key, { content: 'rust tip', community: 'agent-learnings' });
    await post(bob.key, { content: 'my own kubernetes note', community: 'general' });
    await post(alice.key, { content: 'cooking', community: 'general' });
    await t.call('POST', `/posts/${p1}/comments`, { key: bob.key, body: { content: 'answered' } });
    const feed = (query: Record<string, string | number | boolean>) => t.call<Posts>('GET', '/feed/discover', { key: bob.key, query });
    expect((await feed({})).body.posts).toHaveLength(4);
    expect((await feed({ communities: 'm/general,agent-learnings', keywords: 'KUBERNETES,rust' })).body.posts.map((p) => p.content)).toEqual(['my own kubernetes note', 'rust tip', 'Kubernetes question']);
    expect((await feed({ communities: 'general', keywords: 'kubernetes', exclude_responded: true })).body.posts).toEqual([]);
    expect((await feed({ exclude_responded: true })).body.posts.map((p) => p.content)).toEqual(['cooking', 'rust tip']);
    expect((await feed({ limit: 1 })).body.posts).toHaveLength(1);
    expect((await feed({ exclude_authors: 'alice' })).body.posts.map((p) => p.content)).toEqual(['my own kubernetes note']);
    expect((await feed({ min_age: 3600 })).body.posts).toEqual([]);
    expect((await t.call<Posts>('GET', '/discover', { key: t.adminKey, query: { agent_id: 'bob', max_age: 3600 } })).body.posts).toHaveLength(4);
    expect((await t.call('GET', '/feed/discover', { key: t.adminKey })).status).toBe(422); // agent_id required
  });
});

describe('communities', () => {
  it('lists bare names and creates new ones (201), refusing duplicates (409)', async () => {
    const created = await t.call('POST', '/submolts', { key: bob.key, body: { name: 'm/Swarm-Updates', description: 'spawning' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'swarm-updates', description: 'spawning', subscriber_count: 0 });
    expect((await t.call('POST', '/submolts', { key: bob.key, body: { name: 'general' } })).status).toBe(409);
    expect((await t.call('POST', '/submolts', { key: bob.key, body: { name: 'no spaces' } })).status).toBe(422);
    const list = await t.call<{ submolts: Array<{ name: string }> }>('GET', '/submolts', { key: bob.key });
    expect(list.body.submolts.map((c) => c.name)).toEqual(['agent-activity', 'agent-errors', 'agent-learnings', 'agent-status', 'general', 'swarm-updates']);
  });
});

describe('inbox extras and aliases', () => {
  it('counts, marks all read, and answers under /inbox too', async () => {
    await post(alice.key, { content: '@bob one' });
    await post(alice.key, { content: '@bob two' });
    expect((await t.call('GET', '/notifications/count', { key: bob.key })).body).toEqual({ unread: 2, total: 2 });
    expect((await t.call<{ notifications: unknown[] }>('GET', '/inbox', { key: bob.key })).body.notifications).toHaveLength(2);
    expect((await t.call('POST', '/inbox/read-all', { key: bob.key, body: {} })).body).toEqual({ success: true, marked: 2 });
    expect((await t.call('POST', '/notifications/read-all', { key: t.adminKey, body: { agent_id: 'bob' } })).body).toEqual({ success: true, marked: 0 });
    expect((await t.call('GET', '/inbox/count', { key: t.adminKey, query: { agent_id: bob.id } })).body).toEqual({ unread: 0, total: 2 });
  });

  it('accepts /posts/{id}/reply as /comments', async () => {
    const id = await post(alice.key, { content: 'q' });
    const r = await t.call('POST', `/posts/${id}/reply`, { key: bob.key, body: { content: 'a' } });
    expect(r.status).toBe(201);
    expect((await t.call('GET', '/notifications/count', { key: alice.key })).body).toEqual({ unread: 1, total: 1 });
  });
});

describe('events', () => {
  it('emits agent, post, comment and notification after each commit, and nothing for refused writes', async () => {
    const seen: string[] = [];
    t.hub.events.on('agent', (a) => seen.push(`agent:${String(a.name)}`));
    t.hub.events.on('post', (p) => seen.push(`post:${String(p.content)}`));
    t.hub.events.on('comment', (c) => seen.push(`comment:${String(c.content)}`));
    t.hub.events.on('notification', (n) => seen.push(`notification:${n.agent.name}:${String(n.notification.type)}`));
    await t.register('carol');
    const id = await post(alice.key, { content: 'hi @bob' });
    await t.call('POST', `/posts/${id}/comments`, { key: bob.key, body: { content: 'hello' } });
    await t.call('POST', `/posts/${id}/comments`, { key: bob.key, body: { content: 'bad', parent_id: 'nope' } });
    expect(seen).toEqual(['agent:carol', 'post:hi @bob', 'notification:bob:mention', 'comment:hello', 'notification:alice:reply']);
  });

  it('a throwing listener does not fail the committed write', async () => {
    t.hub.events.on('post', () => {
      throw new Error('listener broke');
    });
    expect((await t.call('POST', '/posts', { key: alice.key, body: { content: 'still fine' } })).status).toBe(201);
  });
});
