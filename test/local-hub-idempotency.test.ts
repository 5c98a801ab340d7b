// Idempotent POSTs over HTTP (docs/hub-api.md §11): replays create nothing (no post, no notification, no usage).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../local-hub/idempotency.ts';
import { newAgentKey, sha256 } from '../local-hub/keys.ts';
import { MIGRATIONS } from '../local-hub/migrations.ts';
import { seal } from '../local-hub/sealing.ts';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';

let t: TestHub;
beforeEach(async () => {
  t = await startTestHub({ budget: { defaultDailyLimitUsd: 10 } });
});
afterEach(() => t.close());

const unreadOf = async (agent: string): Promise<number> => (await t.call<{ unread: number }>('GET', '/notifications/count', { key: t.adminKey, query: { agent_id: agent } })).body.unread;
const postTotal = async (): Promise<number> => (await t.call<{ total: number }>('GET', '/posts', { key: t.adminKey })).body.total;

describe('Idempotency-Key', () => {
  it('replays the original status and body and creates nothing: no post, no notification, no event', async () => {
    const alice = await t.register('alice');
    await t.register('bob');
    const events: unknown[] = [];
    t.hub.events.on('post', (p) => events.push(p));
    const headers = { 'idempotency-key': 'act-1:reply' };
    const first = await t.call('POST', '/posts', { key: alice.key, body: { content: '@bob once', title: 'T' }, headers });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Same body with keys in another order is the same request.
    const again = await t.call('POST', '/posts', { key: alice.key, body: { title: 'T', content: '@bob once' }, headers });
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await postTotal()).toBe(1);
    expect(await unreadOf('bob')).toBe(1);
    expect(events).toHaveLength(1);
  });

  it('refuses the same key with another body (422) and changes nothing', async () => {
    const alice = await t.register('alice');
    await t.register('bob');
    const headers = { 'idempotency-key': 'k1' };
    await t.call('POST', '/posts', { key: alice.key, body: { content: 'one' }, headers });
    const changed = await t.call('POST', '/posts', { key: alice.key, body: { content: '@bob two' }, headers });
    expect(changed.status).toBe(422);
    expect(changed.body.detail).toMatch(/different/);
    expect(await postTotal()).toBe(1);
    expect(await unreadOf('bob')).toBe(0);
  });

  it('does not remember failures, so a corrected retry succeeds', async () => {
    const alice = await t.register('alice');
    const headers = { 'idempotency-key': 'k2' };
    expect((await t.call('POST', '/posts', { key: alice.key, body: { content: '' }, headers })).status).toBe(422);
    expect((await t.call('POST', '/posts', { key: alice.key, body: { content: 'ok' }, headers })).status).toBe(201);
    // A failure on the same body (404 post) is not stored either: after the post exists... a new key works.
    expect((await t.call('POST', '/posts/nope/comments', { key: alice.key, body: { content: 'x' }, headers: { 'idempotency-key': 'k3' } })).status).toBe(404);
    expect((await t.call('POST', '/posts/nope/comments', { key: alice.key, body: { content: 'x' }, headers: { 'idempotency-key': 'k3' } })).status).toBe(404);
  });

  it('answers 409 while the first request with the key is still in flight', async () => {
    const alice = await t.register('alice');
    t.hub.faults.slowMs = 300;
    const headers = { 'idempotency-key': 'slow-1' };
    const first = t.call('POST', '/posts', { key: alice.key, body: { content: 'slow' }, headers });
    await new Promise((r) => setTimeout(r, 100));
    const second = await t.call('POST', '/posts', { key: alice.key, body: { content: 'slow' }, headers });
    expect(second.status).toBe(409);
    expect((await first).status).toBe(201);
    t.hub.faults.slowMs = 0;
    expect((await t.call('POST', '/posts', { key: alice.key, body: { content: 'slow' }, headers })).headers.get('idempotent-replayed')).toBe('true');
    expect(await postTotal()).toBe(1);
  });

  it('scopes keys to the acting agent (admin acting as X shares X’s scope), method and path', async () => {
    const alice = await t.register('alice');
    const bob = await t.register('bob');
    const headers = { 'idempotency-key': 'same' };
    const a = await t.call('POST', '/posts', { key: alice.key, body: { content: 'hi' }, headers });
    const b = await t.call('POST', '/posts', { key: bob.key, body: { content: 'hi' }, headers });
    expect(b.body.id).not.toBe(a.body.id);
    // The admin acting as alice is alice's scope, but its body carries agent_id, so it is a different body.
    expect((await t.call('POST', '/posts', { key: t.adminKey, body: { content: 'hi', agent_id: 'alice' }, headers })).status).toBe(422);
    const c = await t.call('POST', `/posts/${String(a.body.id)}/comments`, { key: alice.key, body: { content: 'hi' }, headers });
    expect(c.status).toBe(201);
    expect(await postTotal()).toBe(2);
  });

  it('validates the key: 1–255 printable characters', async () => {
    const alice = await t.register('alice');
    expect((await t.call('POST', '/posts', { key: alice.key, body: { content: 'x' }, headers: { 'idempotency-key': 'x'.repeat(256) } })).status).toBe(422);
    expect((await t.call('POST', '/posts', { key: alice.key, body: { content: 'x' }, headers: { 'idempotency-key': 'x'.repeat(255) } })).status).toBe(201);
  });

  it('never counts a retried consumption report twice', async () => {
    const bob = await t.register('bob');
    const report = { agent_id: 'bob', tokens_input: 100, tokens_output: 50, cost_usd: 2.5 };
    for (let i = 0; i < 3; i++) {
      const r = await t.call('POST', '/system/consumption', { key: bob.key, body: report, headers: { 'idempotency-key': 'activation-7' } });
      expect(r.body).toEqual({ success: true });
    }
    expect((await t.call('GET', '/system/budget-health', { key: bob.key })).body).toMatchObject({ daily_used: 2.5 });
  });

  it('replays a registration with the same key, though the hub stores keys only as digests', async () => {
    const headers = { 'idempotency-key': 'register-carol' };
    const first = await t.call('POST', '/agents/register', { key: t.adminKey, body: { name: 'carol' }, headers });
    const again = await t.call('POST', '/agents/register', { key: t.adminKey, body: { name: 'carol' }, headers });
    expect(first.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect((await t.call('GET', '/agents/me', { key: again.body.api_key as string })).body).toMatchObject({ name: 'carol' });
  });
});

describe('stored replies', () => {
  let dir: string;
  let hub: TestHub | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warren-hub-replies-'));
  });
  afterEach(async () => {
    await hub?.close();
    hub = undefined;
    rmSync(dir, { recursive: true, force: true });
  });
  const stored = (path: string): Array<{ body: string; sealed: number }> => {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return db.prepare('SELECT body, sealed FROM idempotent_replies ORDER BY created_at').all() as Array<{ body: string; sealed: number }>;
    } finally {
      db.close();
    }
  };

  it('seals an answer that carries a new key; keeps an answer with nothing secret as it is; both replay', async () => {
    const path = join(dir, 'hub.sqlite');
    hub = await startTestHub({ dbPath: path });
    const reg = { key: hub.adminKey, body: { name: 'carol' }, headers: { 'idempotency-key': 'register-carol' } };
    const first = await hub.call('POST', '/agents/register', reg);
    const key = first.body.api_key as string;
    const post = await hub.call('POST', '/posts', { key, body: { content: 'hello' }, headers: { 'idempotency-key': 'p1' } });
    const comment = { key, body: { content: 'and more' }, headers: { 'idempotency-key': 'c1' } };
    const made = await hub.call('POST', `/posts/${String(post.body.id)}/comments`, comment);
    const rows = stored(path);
    expect(rows.map((r) => r.sealed)).toEqual([1, 0, 0]);
    expect(rows[0]!.body).not.toContain(key);
    expect(JSON.parse(rows[2]!.body)).toEqual(made.body);
    const again = await hub.call('POST', '/agents/register', reg);
    expect(again.body).toEqual(first.body);
    const replayed = await hub.call('POST', `/posts/${String(post.body.id)}/comments`, comment);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body).toEqual(made.body);
  });

  it('replays a reply stored by a hub from before (schema 4: every reply sealed)', async () => {
    const path = join(dir, 'hub.sqlite');
    const key = newAgentKey();
    const old = new DatabaseSync(path);
    for (const m of MIGRATIONS.slice(0, 4)) old.exec(m);
    old.exec('PRAGMA user_version = 4');
    old.prepare("INSERT INTO agents (id, name, key_hash, created_at, updated_at) VALUES ('a1', 'alice', ?, 'x', 'x')").run(sha256(key));
    const secret = 'a1 POST /api/v1/posts\nk-old';
    const reply = { id: 'p-old', content: 'hi' };
    old.prepare('INSERT INTO idempotent_replies (lookup, fingerprint, status, sealed_body, created_at) VALUES (?, ?, 201, ?, ?)').run(
      sha256(secret),
      sha256(canonicalJson({ content: 'hi' })),
      seal(JSON.stringify(reply), secret),
      Date.now(),
    );
    old.close();
    hub = await startTestHub({ dbPath: path });
    const again = await hub.call('POST', '/posts', { key, body: { content: 'hi' }, headers: { 'idempotency-key': 'k-old' } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(reply);
  });
});
