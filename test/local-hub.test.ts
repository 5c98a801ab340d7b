// The local hub over real HTTP, phase 1 of the contract: probes, auth, registration, posts, comments,
// notification generation, inbox, mark-read, has_notifications, activated, and that rejected requests change nothing.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256 } from '../local-hub/keys.ts';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';

type Obj = Record<string, unknown>;
interface Note {
  id: string;
  type: string;
  post_id: string;
  comment_id: string | null;
  content: string;
  read: boolean;
  from_agent: { name: string };
}

let t: TestHub;
let ADMIN: string;
beforeEach(async () => {
  t = await startTestHub();
  ADMIN = t.adminKey;
});
afterEach(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

async function inbox(agent: string, query: Record<string, string | number | boolean> = { unread: true }): Promise<{ notifications: Note[]; unread_count: number; next_cursor: string | null }> {
  const r = await t.call<{ notifications: Note[]; unread_count: number; next_cursor: string | null }>('GET', '/notifications', { key: ADMIN, query: { agent_id: agent, ...query } });
  expect(r.status).toBe(200);
  return r.body;
}

async function post(key: string, body: Obj): Promise<Obj> {
  const r = await t.call('POST', '/posts', { key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

async function comment(key: string, postId: unknown, body: Obj): Promise<Obj> {
  const r = await t.call('POST', `/posts/${String(postId)}/comments`, { key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

describe('probes', () => {
  it('answer {status:"ok"} without a key', async () => {
    for (const path of ['/health', '/ready']) {
      const r = await fetch(`${t.hub.url}${path}`);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ status: 'ok' });
    }
    expect((await t.call('GET', '/health')).body).toEqual({ status: 'ok' }); // /api/v1/health
    expect(t.hub.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});

describe('authentication (§2.1)', () => {
  it('follows the status table: missing 401, wrong admin 403, malformed 403, unknown 401', async () => {
    const missing = await t.call('GET', '/agents');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer');
    expect(missing.body).toEqual({ detail: 'missing API key' });
    expect((await t.call('GET', '/agents', { headers: { 'x-admin-key': 'nope' } })).status).toBe(403);
    expect((await t.call('GET', '/agents', { key: 'not-a-key' })).status).toBe(403);
    expect((await t.call('GET', '/agents', { key: `botburrow_agent_${'A'.repeat(64)}` })).status).toBe(403); // uppercase hex is malformed
    const unknown = await t.call('GET', '/agents', { key: `botburrow_agent_${'0'.repeat(64)}` });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('accepts the admin key as Bearer and as X-Admin-Key, and agent keys; admin routes refuse agent keys', async () => {
    const bob = await t.register('bob');
    expect((await t.call('GET', '/agents', { headers: { 'x-admin-key': ADMIN } })).status).toBe(200);
    expect((await t.call('GET', '/agents', { key: ADMIN })).status).toBe(200);
    expect((await t.call('GET', '/agents', { key: bob.key })).status).toBe(200);
    expect((await t.call('POST', '/agents/register', { key: bob.key, body: { name: 'eve' } })).status).toBe(403);
    expect((await t.call('GET', '/agents', { key: bob.key, query: { has_notifications: true } })).status).toBe(403);
    expect((await t.call('GET', '/agents', { key: ADMIN })).body).toMatchObject({ total: 1 }); // eve was not created
  });
});

describe('acting as an agent (§2.2)', () => {
  it('admin acts as anyone by name or id and must say who; an agent key acts only as itself', async () => {
    const alice = await t.register('alice');
    const bob = await t.register('bob');
    expect((await t.call('POST', '/posts', { key: ADMIN, body: { content: 'x' } })).body).toEqual({ detail: 'agent_id required' });
    expect((await t.call('POST', '/posts', { key: ADMIN, body: { content: 'x' } })).status).toBe(422);
    expect((await t.call('POST', '/posts', { key: ADMIN, body: { content: 'x', agent_id: 'ghost' } })).status).toBe(404);
    expect((await t.call('GET', '/notifications', { key: ADMIN })).status).toBe(422);
    expect((await post(ADMIN, { content: 'by name', agent_id: 'bob' })).author).toMatchObject({ id: bob.id, name: 'bob' });
    expect((await post(ADMIN, { content: 'by id', agent_id: bob.id })).author).toMatchObject({ name: 'bob' });

    expect((await post(alice.key, { content: 'self' })).author).toMatchObject({ name: 'alice' });
    expect((await post(alice.key, { content: 'self by name', agent_id: 'alice' })).author).toMatchObject({ name: 'alice' });
    expect((await post(alice.key, { content: 'self by id', agent_id: alice.id })).author).toMatchObject({ name: 'alice' });
    expect((await t.call('POST', '/posts', { key: alice.key, body: { content: 'x', agent_id: 'bob' } })).status).toBe(403);
    expect((await t.call('POST', '/posts', { key: alice.key, body: { content: 'x', agent_id: 'ghost' } })).status).toBe(404);
    expect((await t.call('GET', '/notifications', { key: alice.key, query: { agent_id: 'bob' } })).status).toBe(403);
    expect((await t.call('GET', '/posts', { key: ADMIN })).body).toMatchObject({ total: 5 }); // refused ones left nothing
  });
});

describe('agents (§5.1)', () => {
  it('registers with defaults, shows the key once, and stores only its SHA-256', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'local-hub-'));
    const fileHub = await startTestHub({ dbPath: join(dir, 'nested', 'hub.sqlite') });
    const r = await fileHub.call<Obj>('POST', '/agents/register', { key: fileHub.adminKey, body: { name: 'coder-1', display_name: 'Coder', type: 'claude-code', config_source: 'https://git.example/agents.git' } });
    expect(r.status).toBe(201);
    const key = r.body.api_key as string;
    expect(key).toMatch(/^botburrow_agent_[0-9a-f]{64}$/);
    expect(r.body).toMatchObject({ name: 'coder-1', display_name: 'Coder', type: 'claude-code', config_path: 'agents/coder-1', config_branch: 'main', activation_count: 0, last_activated_at: null, is_admin: false });
    expect(r.body.id).toMatch(UUID);
    expect(r.body.created_at).toMatch(ISO_Z);
    const me = await fileHub.call('GET', '/agents/me', { key });
    expect(me.body).toMatchObject({ id: r.body.id, name: 'coder-1' });
    for (const shown of [me.body, (await fileHub.call('GET', '/agents/coder-1', { key })).body, (await fileHub.call('GET', '/agents', { key })).body]) {
      expect(JSON.stringify(shown)).not.toMatch(/key_hash|"api_key"|botburrow_agent_/);
    }
    await fileHub.close();
    const stored = readdirSync(join(dir, 'nested')).map((f) => readFileSync(join(dir, 'nested', f)).toString('latin1')).join('');
    expect(stored).not.toContain(key);
    expect(stored).toContain(sha256(key));
  });

  it('refuses duplicates (409) and invalid names or fields (422), creating nothing', async () => {
    await t.register('alice');
    expect((await t.call('POST', '/agents/register', { key: ADMIN, body: { name: 'alice' } })).status).toBe(409);
    for (const name of ['ab', 'a'.repeat(51), 'Alice', 'bob-', '-bob', 'bo_b', 'bo b', 5]) {
      const r = await t.call('POST', '/agents/register', { key: ADMIN, body: { name } });
      expect(r.status, String(name)).toBe(422);
      expect(typeof r.body.detail).toBe('string');
    }
    expect((await t.call('POST', '/agents/register', { key: ADMIN, body: { name: 'abc', type: 'robot' } })).status).toBe(422);
    expect((await t.call('POST', '/agents/register', { key: ADMIN, body: { name: 'abc', api_key_expires_at: 'soon' } })).status).toBe(422);
    expect((await t.call('POST', '/agents/register', { key: ADMIN, body: { name: 'a'.repeat(50) } })).status).toBe(201);
    expect((await t.call('POST', '/agents/register', { key: ADMIN, body: { name: 'abc', type: 'llm' } })).body).toMatchObject({ type: 'native' });
    expect((await t.call('GET', '/agents', { key: ADMIN })).body).toMatchObject({ total: 3 });
  });

  it('gets one agent by name or id, 404 otherwise; lists with total/offset/limit', async () => {
    const a = await t.register('alice');
    await t.register('bob', { config_source: 'git://x' });
    expect((await t.call('GET', `/agents/${a.id}`, { key: a.key })).body).toMatchObject({ name: 'alice' });
    expect((await t.call('GET', '/agents/ghost', { key: a.key })).status).toBe(404);
    const page = await t.call<{ agents: Obj[] }>('GET', '/agents', { key: a.key, query: { offset: 1, limit: 1 } });
    expect(page.body).toMatchObject({ total: 2, offset: 1, limit: 1 });
    expect(page.body.agents.map((x) => x.name)).toEqual(['bob']);
    expect((await t.call<{ agents: Obj[] }>('GET', '/agents', { key: a.key, query: { config_source: 'git://x' } })).body.agents.map((x) => x.name)).toEqual(['bob']);
    expect((await t.call('GET', '/agents', { key: a.key, query: { limit: 0 } })).status).toBe(422);
  });

  it('activated: admin or that agent, by name or id; sets last_activated_at and counts', async () => {
    const bob = await t.register('bob');
    const alice = await t.register('alice');
    expect((await t.call('POST', `/agents/${bob.id}/activated`, { key: ADMIN })).body).toEqual({ success: true });
    expect((await t.call('POST', '/agents/bob/activated', { key: bob.key })).status).toBe(200);
    expect((await t.call('POST', '/agents/bob/activated', { key: alice.key })).status).toBe(403);
    expect((await t.call('POST', '/agents/ghost/activated', { key: ADMIN })).status).toBe(404);
    const after = await t.call('GET', '/agents/bob', { key: ADMIN });
    expect(after.body.activation_count).toBe(2);
    expect(after.body.last_activated_at).toMatch(ISO_Z);
    expect((await t.call('GET', '/agents/alice', { key: ADMIN })).body).toMatchObject({ activation_count: 0, last_activated_at: null });
  });
});

describe('posts and comments (§5.2)', () => {
  it('creates posts in m/ communities (created on first use) and threads comments flat, oldest first', async () => {
    const alice = await t.register('alice');
    const bob = await t.register('bob');
    const p = await post(alice.key, { content: 'Flaky test in CI', title: 'Help', community: 'm/General' });
    expect(p).toMatchObject({ title: 'Help', community: 'm/general', comment_count: 0, score: 0, author: { id: alice.id, name: 'alice', type: 'native' } });
    expect(p.id).toMatch(UUID);
    expect(p.created_at).toMatch(ISO_Z);
    expect((await post(alice.key, { content: 'new place', community: 'swarm-updates' })).community).toBe('m/swarm-updates');
    expect((await post(alice.key, { content: 'main feed' })).community).toBeNull();
    const names = (await t.call<{ submolts: Obj[] }>('GET', '/submolts', { key: bob.key })).body.submolts.map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['general', 'agent-status', 'agent-errors', 'agent-activity', 'agent-learnings', 'swarm-updates']));

    const c1 = await comment(bob.key, p.id, { content: 'first' });
    expect(c1).toMatchObject({ post_id: p.id, parent_id: null, author: { name: 'bob' }, content: 'first' });
    const c2 = await comment(alice.key, p.id, { content: 'second', parent_id: c1.id });
    expect(c2.parent_id).toBe(c1.id);
    const full = await t.call<{ comments: Obj[]; comment_count: number }>('GET', `/posts/${String(p.id)}`, { key: bob.key, query: { include_comments: true } });
    expect(full.body.comment_count).toBe(2);
    expect(full.body.comments.map((c) => [c.content, c.parent_id])).toEqual([['first', null], ['second', c1.id]]);
    expect((await t.call('GET', `/posts/${String(p.id)}`, { key: bob.key })).body.comments).toBeUndefined();
    expect((await t.call('GET', '/posts/nope', { key: bob.key })).status).toBe(404);
  });

  it('refuses bad comments without changing anything', async () => {
    const alice = await t.register('alice');
    const bob = await t.register('bob');
    const p1 = await post(alice.key, { content: 'one' });
    const p2 = await post(alice.key, { content: 'two' });
    const other = await comment(alice.key, p2.id, { content: 'on two' });
    const path = `/posts/${String(p1.id)}/comments`;
    expect((await t.call('POST', path, { key: bob.key, body: { content: '@alice x', parent_id: other.id } })).status).toBe(422);
    expect((await t.call('POST', path, { key: bob.key, body: { content: '@alice x', parent_id: 'nope' } })).status).toBe(422);
    expect((await t.call('POST', path, { key: bob.key, body: { content: '   ' } })).status).toBe(422);
    expect((await t.call('POST', path, { key: bob.key, body: {} })).status).toBe(422);
    expect((await t.call('POST', '/posts/nope/comments', { key: bob.key, body: { content: '@alice x' } })).status).toBe(404);
    expect((await t.call('GET', `/posts/${String(p1.id)}`, { key: bob.key })).body.comment_count).toBe(0);
    expect((await inbox('alice')).notifications).toEqual([]);
  });

  it('validates post bodies', async () => {
    const alice = await t.register('alice');
    for (const body of [{}, { content: '' }, { content: 5 }, { content: 'x', title: 't'.repeat(301) }, { content: 'x', community: 'm/Bad Name' }, { content: 'x', tags: 'a' }]) {
      expect((await t.call('POST', '/posts', { key: alice.key, body })).status, JSON.stringify(body)).toBe(422);
    }
    expect((await t.call('GET', '/posts', { key: ADMIN })).body).toMatchObject({ total: 0 });
  });
});

describe('notification generation (§6)', () => {
  it('mentions on posts: existing agents only, not in e-mail addresses, never the author', async () => {
    const alice = await t.register('alice');
    await t.register('bob');
    await t.register('carol-2');
    const p = await post(alice.key, { content: '@BOB look; cc @carol-2, @alice, @ghost, mail x@bob.io' });
    const [n, ...rest] = (await inbox('bob')).notifications;
    expect(rest).toEqual([]);
    expect(n).toMatchObject({ type: 'mention', post_id: p.id, comment_id: null, from_agent: { id: alice.id, name: 'alice', type: 'native' }, from: { name: 'alice' }, read: false });
    expect(n!.id).toMatch(UUID);
    expect((await inbox('carol-2')).notifications).toHaveLength(1);
    expect((await inbox('alice')).notifications).toEqual([]);
  });

  it('comments reply to the post author and the parent author; a mention wins; one per recipient', async () => {
    const alice = await t.register('alice');
    const bob = await t.register('bob');
    const carol = await t.register('carol');
    const p = await post(alice.key, { content: 'question' });
    const c1 = await comment(bob.key, p.id, { content: 'answer' });
    expect((await inbox('alice')).notifications).toMatchObject([{ type: 'reply', post_id: p.id, comment_id: c1.id, content: 'answer' }]);
    // carol replies to bob's comment and also mentions alice (the post author) twice: alice gets one mention.
    const c2 = await comment(carol.key, p.id, { content: '@alice @alice agreed', parent_id: c1.id });
    expect((await inbox('bob')).notifications).toMatchObject([{ type: 'reply', comment_id: c2.id }]);
    expect((await inbox('alice')).notifications.map((n) => n.type)).toEqual(['mention', 'reply']); // newest first
    // The author's own comment on their post notifies nobody.
    await comment(alice.key, p.id, { content: 'thanks all', parent_id: c1.id });
    expect((await inbox('bob')).notifications).toHaveLength(2);
    expect((await inbox('alice')).notifications).toHaveLength(2);
  });

  it('stores the first 200 characters of the item', async () => {
    const alice = await t.register('alice');
    await t.register('bob');
    const long = `@bob ${'x'.repeat(300)}`;
    await post(alice.key, { content: long });
    expect((await inbox('bob')).notifications[0]!.content).toBe(long.slice(0, 200));
  });
});

describe('inbox (§5.3)', () => {
  it('lists newest first with unread filter, cursor pages and unread_count', async () => {
    const alice = await t.register('alice');
    const bob = await t.register('bob');
    for (let i = 0; i < 5; i++) await post(alice.key, { content: `@bob n${i}` });
    const first = await inbox('bob', { limit: 2 });
    expect(first.notifications.map((n) => n.content)).toEqual(['@bob n4', '@bob n3']);
    expect(first.unread_count).toBe(5);
    const second = await inbox('bob', { limit: 2, cursor: first.next_cursor! });
    expect(second.notifications.map((n) => n.content)).toEqual(['@bob n2', '@bob n1']);
    const last = await inbox('bob', { limit: 2, cursor: second.next_cursor! });
    expect(last.notifications.map((n) => n.content)).toEqual(['@bob n0']);
    expect(last.next_cursor).toBeNull();

    const oldest = last.notifications[0]!.id;
    expect((await t.call('POST', '/notifications/read', { key: bob.key, body: { notification_ids: [oldest] } })).body).toEqual({ success: true, marked: 1 });
    expect((await t.call<{ notifications: Note[] }>('GET', '/notifications', { key: bob.key, query: { unread_only: 'True' } })).body.notifications).toHaveLength(4);
    const all = await t.call<{ notifications: Note[]; unread_count: number }>('GET', '/notifications', { key: bob.key });
    expect(all.body.notifications).toHaveLength(5);
    expect(all.body.unread_count).toBe(4);
    expect(all.body.notifications.at(-1)).toMatchObject({ id: oldest, read: true });
    expect((await t.call('GET', '/notifications', { key: bob.key, query: { limit: 101 } })).status).toBe(422);
    expect((await t.call('GET', '/notifications', { key: bob.key, query: { cursor: 'garbage' } })).status).toBe(422);
  });

  it('marks read only the named, unread, own notifications; repeating is harmless', async () => {
    const alice = await t.register('alice');
    const bob = await t.register('bob');
    await post(alice.key, { content: '@bob one' });
    await post(alice.key, { content: '@bob two' });
    await post(bob.key, { content: '@alice hi' });
    const bobIds = (await inbox('bob')).notifications.map((n) => n.id);
    const aliceIds = (await inbox('alice')).notifications.map((n) => n.id);
    const body = { notification_ids: [bobIds[0], ...aliceIds, 'unknown'] };
    expect((await t.call('POST', '/notifications/read', { key: bob.key, body })).body).toEqual({ success: true, marked: 1 });
    expect((await t.call('POST', '/notifications/read', { key: bob.key, body })).body).toEqual({ success: true, marked: 0 });
    expect((await inbox('bob')).notifications.map((n) => n.id)).toEqual([bobIds[1]]);
    expect((await inbox('alice')).notifications).toHaveLength(1); // another agent's id was ignored
    expect((await t.call('POST', '/notifications/read', { key: ADMIN, body: { agent_id: 'bob', notification_ids: [bobIds[1]] } })).body).toEqual({ success: true, marked: 1 });
    expect((await t.call('POST', '/notifications/read', { key: bob.key, body: { notification_ids: 'x' } })).status).toBe(422);
  });

  it('has_notifications: agents with unread, most unread first, humans left out', async () => {
    const alice = await t.register('alice', { type: 'human' });
    await t.register('bob');
    await t.register('carol');
    await t.register('dave');
    await post(alice.key, { content: '@bob @carol' });
    await post(alice.key, { content: '@carol again' });
    const bob = await t.call('GET', '/agents/bob', { key: ADMIN });
    await t.call('POST', '/posts', { key: ADMIN, body: { agent_id: bob.body.id, content: 'ping @alice' } });
    const r = await t.call<{ agents: Obj[] }>('GET', '/agents', { key: ADMIN, query: { has_notifications: true } });
    const carol = await t.call('GET', '/agents/carol', { key: ADMIN });
    expect(r.body.agents).toEqual([
      { id: carol.body.id, name: 'carol', notification_count: 2 },
      { id: bob.body.id, name: 'bob', notification_count: 1 },
    ]);
  });
});

describe('errors', () => {
  it('answers malformed JSON 400, unknown routes 404, wrong methods 405, huge bodies 413, all as {detail}', async () => {
    const alice = await t.register('alice');
    const cases: Array<[number, Promise<{ status: number; body: Obj }>]> = [
      [400, t.call('POST', '/posts', { key: alice.key, raw: '{not json' })],
      [404, t.call('GET', '/nowhere', { key: alice.key })],
      [404, t.call('GET', '/nowhere')],
      [405, t.call('DELETE', '/posts', { key: alice.key })],
      [413, t.call('POST', '/posts', { key: alice.key, body: { content: 'x'.repeat(1_100_000) } })],
    ];
    for (const [status, pending] of cases) {
      const r = await pending;
      expect(r.status).toBe(status);
      expect(typeof r.body.detail).toBe('string');
    }
    expect((await t.call('GET', '/posts', { key: alice.key })).body).toMatchObject({ total: 0 });
    expect((await t.call('GET', '/posts/', { key: alice.key })).status).toBe(200); // trailing slash tolerated
  });
});

describe('storage', () => {
  it('reopens a file database without losing data (migrations run once)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'local-hub-')), 'hub.sqlite');
    const first = await startTestHub({ dbPath: path });
    const bob = await first.register('bob');
    await first.close();
    const again = await startTestHub({ dbPath: path });
    try {
      expect((await again.call('GET', '/agents/me', { key: bob.key })).body).toMatchObject({ name: 'bob' });
      expect((await fetch(`${again.hub.url}/health`, { method: 'HEAD' })).status).toBe(200);
    } finally {
      await again.close();
    }
  });
});
