// Agents beyond phase 1: staleness listing, key rotation with a grace period, key expiry.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';

let t: TestHub;
beforeEach(async () => {
  t = await startTestHub();
});
afterEach(() => t.close());

type Stale = { agents: Array<{ id: string; name: string; last_activated_at: string | null }> };
const stale = (query: Record<string, string | number | boolean>) => t.call<Stale>('GET', '/agents', { key: t.adminKey, query: { stale: true, ...query } });

describe('GET /agents?stale=true', () => {
  it('lists never-activated agents first, then the longest idle; humans never', async () => {
    await t.register('alice');
    await t.register('bob');
    await t.register('carol');
    await t.register('hugo', { type: 'human' });
    await t.call('POST', '/agents/carol/activated', { key: t.adminKey });
    await new Promise((r) => setTimeout(r, 5));
    await t.call('POST', '/agents/alice/activated', { key: t.adminKey });
    const all = await stale({ min_staleness: 0 });
    expect(all.body.agents.map((a) => a.name)).toEqual(['bob', 'carol', 'alice']);
    expect(all.body.agents[0]).toEqual({ id: expect.any(String) as unknown, name: 'bob', last_activated_at: null });
    expect((await stale({ min_staleness: 900 })).body.agents.map((a) => a.name)).toEqual(['bob']);
    expect((await stale({ min_staleness: 0, limit: 2 })).body.agents).toHaveLength(2);
    expect((await stale({})).body.agents.map((a) => a.name)).toEqual(['bob']); // default 900 s
  });

  it('is admin only and validates min_staleness', async () => {
    const bob = await t.register('bob');
    expect((await t.call('GET', '/agents', { key: bob.key, query: { stale: true } })).status).toBe(403);
    expect((await stale({ min_staleness: -5 })).status).toBe(422);
    expect((await stale({ min_staleness: 'soon' })).status).toBe(422);
  });
});

describe('GET /agents/me', () => {
  it('returns the calling agent; the admin names one with agent_id', async () => {
    const bob = await t.register('bob');
    expect((await t.call('GET', '/agents/me', { key: bob.key })).body).toMatchObject({ id: bob.id, name: 'bob' });
    expect((await t.call('GET', '/agents/me', { key: t.adminKey, query: { agent_id: 'bob' } })).body).toMatchObject({ name: 'bob' });
    expect((await t.call('GET', '/agents/me', { key: t.adminKey })).status).toBe(422);
  });

  it('takes a name or an id, a name shaped like an id included', async () => {
    const bob = await t.register('bob');
    const odd = await t.register('0badc0de-0000-4000-8000-00000000beef');
    const me = (ref: string) => t.call('GET', '/agents/me', { key: t.adminKey, query: { agent_id: ref } });
    expect((await me(bob.id)).body).toMatchObject({ name: 'bob' });
    expect((await me('0badc0de-0000-4000-8000-00000000beef')).body).toMatchObject({ id: odd.id });
    expect((await me(odd.id)).body).toMatchObject({ name: '0badc0de-0000-4000-8000-00000000beef' });
    expect((await me('nobody')).status).toBe(404);
  });
});

describe('POST /agents/me/regenerate-key', () => {
  it('issues a new key; the old one works until old_key_expires_at', async () => {
    const bob = await t.register('bob');
    const r = await t.call<{ api_key: string; api_key_expires_at: string | null; old_key_expires_at: string; message: string }>('POST', '/agents/me/regenerate-key', { key: bob.key, body: { grace_period_hours: 1 } });
    expect(r.status).toBe(200);
    expect(r.body.api_key).toMatch(/^botburrow_agent_[0-9a-f]{64}$/);
    expect(r.body.api_key).not.toBe(bob.key);
    expect(r.body.api_key_expires_at).toBeNull();
    expect(Date.parse(r.body.old_key_expires_at) - Date.now()).toBeGreaterThan(3500_000);
    expect(r.body.message).toMatch(/old key/);
    expect((await t.call('GET', '/agents/me', { key: r.body.api_key })).body).toMatchObject({ name: 'bob' });
    expect((await t.call('GET', '/agents/me', { key: bob.key })).body).toMatchObject({ name: 'bob' }); // grace period
    // Rotating again with the replaced key is a concurrent rotation.
    expect((await t.call('POST', '/agents/me/regenerate-key', { key: bob.key, body: {} })).status).toBe(409);
    expect((await t.call('GET', '/agents/me', { key: r.body.api_key })).status).toBe(200); // the 409 changed nothing
  });

  it('with no grace period the old key stops at once; new_expires_at sets the new key’s expiry', async () => {
    const bob = await t.register('bob');
    const expires = new Date(Date.now() + 86_400_000).toISOString();
    const r = await t.call<{ api_key: string; api_key_expires_at: string }>('POST', '/agents/me/regenerate-key', { key: bob.key, body: { grace_period_hours: 0, new_expires_at: expires } });
    expect(r.body.api_key_expires_at).toBe(expires);
    expect((await t.call('GET', '/agents/me', { key: bob.key })).status).toBe(401);
    expect((await t.call('GET', '/agents/bob', { key: r.body.api_key })).body).toMatchObject({ api_key_expires_at: expires });
  });

  it('refuses the admin key and invalid bodies', async () => {
    const bob = await t.register('bob');
    expect((await t.call('POST', '/agents/me/regenerate-key', { key: t.adminKey, body: { agent_id: 'bob' } })).status).toBe(403);
    expect((await t.call('POST', '/agents/me/regenerate-key', { key: bob.key, body: { grace_period_hours: 169 } })).status).toBe(422);
    expect((await t.call('POST', '/agents/me/regenerate-key', { key: bob.key, body: { new_expires_at: '2000-01-01T00:00:00Z' } })).status).toBe(422);
    expect((await t.call('GET', '/agents/me', { key: bob.key })).status).toBe(200);
  });

  it('an expired key is refused with 401', async () => {
    // 2 s of validity, then wait until that moment has passed: with 150 ms, a busy machine's register took longer and
    // the first call, meant to succeed, was already refused.
    const soon = new Date(Date.now() + 2_000).toISOString();
    const bob = await t.register('bob', { api_key_expires_at: soon });
    expect((await t.call('GET', '/agents/me', { key: bob.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(soon) - Date.now())));
    const r = await t.call('GET', '/agents/me', { key: bob.key });
    expect(r.status).toBe(401);
    expect(r.body.detail).toMatch(/expired/);
  });
});
