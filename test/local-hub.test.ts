// The local hub over real HTTP: auth rules, notification generation, mark-read, activated, idempotency,
// and that rejected requests change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMentions, notificationsFor } from '../local-hub/notification-rules.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';

let hub: RunningHub;
const ADMIN = 'hub-test-admin';
beforeAll(async () => {
  hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: ADMIN });
});
afterAll(() => hub.close());

async function call(method: string, path: string, opts: { key?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  const res = await fetch(`${hub.url}${path}`, { method, headers, body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
async function register(name: string, type = 'native'): Promise<string> {
  const r = await call('POST', '/api/v1/agents/register', { key: ADMIN, body: { name, type } });
  expect(r.status).toBe(201);
  return r.body.api_key as string;
}
async function unread(agent: string): Promise<Array<Record<string, unknown>>> {
  const r = await call('GET', `/api/v1/notifications?agent_id=${agent}&unread=true`, { key: ADMIN });
  return r.body.notifications as Array<Record<string, unknown>>;
}

describe('notification rules (pure)', () => {
  it('finds mentions at the start or after a non-word character only', () => {
    expect(parseMentions('@Bob hi, ping @carol-2 and @bob again; mail a@b.com (@dave)')).toEqual(['bob', 'carol-2', 'dave']);
  });
  it('gives one notification per recipient, mention over reply, never the author', () => {
    const ids: Record<string, string> = { alice: 'A', bob: 'B' };
    const r = notificationsFor({ authorId: 'A', content: '@alice @bob @nobody', postAuthorId: 'B', parentAuthorId: 'C' }, (n) => ids[n]);
    expect([...r]).toEqual([['B', 'mention'], ['C', 'reply']]);
  });
});

describe('local hub', () => {
  let aliceKey = '';
  let bobKey = '';
  beforeAll(async () => {
    aliceKey = await register('alice', 'human');
    bobKey = await register('bob');
  });

  it('registers agents with a key shown once and never exposed again', async () => {
    expect(aliceKey).toMatch(/^botburrow_agent_[0-9a-f]{64}$/);
    const me = await call('GET', '/api/v1/agents/me', { key: aliceKey });
    expect(me.body).toMatchObject({ name: 'alice', type: 'human' });
    expect(JSON.stringify(me.body)).not.toMatch(/key_hash|api_key|botburrow_agent_/);
    expect((await call('POST', '/api/v1/agents/register', { key: ADMIN, body: { name: 'alice' } })).status).toBe(409);
    expect((await call('POST', '/api/v1/agents/register', { key: ADMIN, body: { name: 'A!' } })).status).toBe(422);
    expect((await call('POST', '/api/v1/agents/register', { key: bobKey, body: { name: 'eve' } })).status).toBe(403);
  });

  it('authenticates: missing key 401, wrong admin key 403, malformed key 403, unknown key 401, X-Admin-Key accepted', async () => {
    const missing = await fetch(`${hub.url}/api/v1/agents`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect((await call('GET', '/api/v1/agents', { headers: { 'x-admin-key': 'nope' } })).status).toBe(403);
    expect((await call('GET', '/api/v1/agents', { key: 'not-a-key' })).status).toBe(403);
    expect((await call('GET', '/api/v1/agents', { key: `botburrow_agent_${'0'.repeat(64)}` })).status).toBe(401);
    expect((await call('GET', '/api/v1/agents?has_notifications=true', { headers: { 'x-admin-key': ADMIN } })).status).toBe(200);
  });

  it('lets an agent key act only as itself; the admin acts as anyone by name or id, and must say who', async () => {
    expect((await call('POST', '/api/v1/posts', { key: aliceKey, body: { content: 'x', agent_id: 'bob' } })).status).toBe(403);
    expect((await call('POST', '/api/v1/posts', { key: ADMIN, body: { content: 'x' } })).body).toEqual({ detail: 'agent_id required' });
    expect((await call('POST', '/api/v1/posts', { key: ADMIN, body: { content: 'x', agent_id: 'ghost' } })).status).toBe(404);
    const bob = await call('GET', '/api/v1/agents/bob', { key: aliceKey });
    const asBob = await call('POST', '/api/v1/posts', { key: ADMIN, body: { content: 'from bob', agent_id: bob.body.id } });
    expect(asBob.status).toBe(201);
    expect(asBob.body.author).toMatchObject({ name: 'bob' });
  });

  it('notifies mentions and replies, lists agents with work, marks read only what was named', async () => {
    const post = await call('POST', '/api/v1/posts', { key: aliceKey, body: { content: '@bob can you look? cc @alice @ghost', community: 'general', title: 'Help' } });
    expect(post.body).toMatchObject({ community: 'm/general', comment_count: 0, author: { name: 'alice' } });
    const [n] = await unread('bob');
    expect(n).toMatchObject({ type: 'mention', post_id: post.body.id, comment_id: null, from_agent: { name: 'alice' }, from: { name: 'alice' }, read: false });
    expect(await unread('alice')).toEqual([]); // never notified about one's own post
    const work = await call('GET', '/api/v1/agents?has_notifications=true', { key: ADMIN });
    expect(work.body.agents).toEqual([expect.objectContaining({ name: 'bob', notification_count: 1 })]);

    const c1 = await call('POST', `/api/v1/posts/${post.body.id as string}/comments`, { key: bobKey, body: { content: 'Looking.\nSecond line.' } });
    expect(c1.status).toBe(201);
    expect(await unread('alice')).toMatchObject([{ type: 'reply', comment_id: c1.body.id, content: 'Looking.\nSecond line.' }]);
    const c2 = await call('POST', `/api/v1/posts/${post.body.id as string}/comments`, { key: aliceKey, body: { content: 'thanks', parent_id: c1.body.id } });
    expect(c2.body.parent_id).toBe(c1.body.id);
    expect((await call('POST', `/api/v1/posts/${post.body.id as string}/comments`, { key: aliceKey, body: { content: 'x', parent_id: 'nope' } })).status).toBe(422);
    expect((await call('POST', '/api/v1/posts/unknown/comments', { key: aliceKey, body: { content: 'x' } })).status).toBe(404);

    const full = await call('GET', `/api/v1/posts/${post.body.id as string}?include_comments=true`, { key: bobKey });
    expect(full.body.comment_count).toBe(2);
    expect((full.body.comments as Array<{ content: string }>).map((c) => c.content)).toEqual(['Looking.\nSecond line.', 'thanks']);
    expect((await call('GET', `/api/v1/posts/${post.body.id as string}`, { key: bobKey })).body.comments).toBeUndefined();

    const bobUnread = await unread('bob');
    const aliceIds = (await unread('alice')).map((x) => x.id as string);
    const marked = await call('POST', '/api/v1/notifications/read', { key: bobKey, body: { notification_ids: [...bobUnread.map((x) => x.id), ...aliceIds, 'unknown'] } });
    expect(marked.body).toEqual({ success: true, marked: bobUnread.length });
    expect(await unread('bob')).toEqual([]);
    expect((await unread('alice')).length).toBe(aliceIds.length); // another agent's ids were ignored
  });

  it('resets staleness on activated', async () => {
    const before = await call('GET', '/api/v1/agents/bob', { key: ADMIN });
    expect((await call('POST', '/api/v1/agents/bob/activated', { key: ADMIN })).body).toEqual({ success: true });
    expect((await call('POST', '/api/v1/agents/bob/activated', { key: aliceKey })).status).toBe(403);
    const after = await call('GET', '/api/v1/agents/bob', { key: ADMIN });
    expect(after.body.activation_count).toBe((before.body.activation_count as number) + 1);
    expect(after.body.last_activated_at).toMatch(/Z$/);
  });

  it('replays an idempotent POST without creating anything, refuses a changed body, forgets failures', async () => {
    const headers = { 'idempotency-key': 'reply-1' };
    const first = await call('POST', '/api/v1/posts', { key: aliceKey, body: { content: '@bob once' }, headers });
    const again = await call('POST', '/api/v1/posts', { key: aliceKey, body: { content: '@bob once' }, headers });
    expect(again).toEqual(first);
    const mentions = (await unread('bob')).filter((x) => x.post_id === first.body.id);
    expect(mentions).toHaveLength(1);
    const changed = await call('POST', '/api/v1/posts', { key: aliceKey, body: { content: '@bob twice' }, headers });
    expect(changed.status).toBe(422);
    const failing = await call('POST', '/api/v1/posts', { key: aliceKey, body: { content: '' }, headers: { 'idempotency-key': 'k2' } });
    expect(failing.status).toBe(422);
    expect((await call('POST', '/api/v1/posts', { key: aliceKey, body: { content: 'ok now' }, headers: { 'idempotency-key': 'k2' } })).status).toBe(201);
  });

  it('answers malformed input with {detail} and changes nothing', async () => {
    const before = await call('GET', '/api/v1/agents?limit=1000', { key: ADMIN });
    for (const [method, path, raw] of [
      ['POST', '/api/v1/posts', '{not json'],
      ['POST', '/api/v1/posts', '{"content": 5}'],
      ['POST', '/api/v1/agents/register', '{"name": ["x"]}'],
      ['GET', '/api/v1/nowhere', undefined],
      ['GET', '/api/v1/notifications?agent_id=bob&limit=1000', undefined],
    ] as const) {
      const r = await call(method, path, { key: method === 'GET' ? ADMIN : aliceKey, raw });
      expect(r.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
      expect(typeof r.body.detail).toBe('string');
    }
    expect((await call('GET', '/api/v1/agents?limit=1000', { key: ADMIN })).body.total).toBe(before.body.total);
  });

  it('long-poll: holds while nobody has work, answers within 100 ms of a mention, and empty at its timeout', async () => {
    // Clear everyone's inbox first so the poll has to wait.
    for (const who of ['bob', 'alice']) await call('POST', '/api/v1/notifications/read', { key: ADMIN, body: { agent_id: who, notification_ids: (await unread(who)).map((x) => x.id) } });
    const started = Date.now();
    const empty = await call('GET', '/api/v1/notifications/poll?timeout=1', { key: ADMIN });
    expect(empty.body).toEqual({ agents: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);

    const held = call('GET', '/api/v1/notifications/poll?timeout=20', { key: ADMIN });
    await new Promise((r) => setTimeout(r, 200));
    const mentionedAt = Date.now();
    await call('POST', '/api/v1/posts', { key: aliceKey, body: { content: 'wake up @bob' } });
    const woke = await held;
    expect(Date.now() - mentionedAt).toBeLessThan(100);
    expect(woke.body.agents).toEqual([expect.objectContaining({ name: 'bob', notification_count: 1 })]);
    // With work pending it answers at once; agent keys may not poll.
    const t = Date.now();
    await call('GET', '/api/v1/notifications/poll?timeout=20', { key: ADMIN });
    expect(Date.now() - t).toBeLessThan(100);
    expect((await call('GET', '/api/v1/notifications/poll', { key: bobKey })).status).toBe(403);
  });
});
