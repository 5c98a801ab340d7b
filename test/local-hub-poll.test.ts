// The long-poll (docs/hub-api.md §7), the test switches, and closing a hub with requests held open.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';

let t: TestHub;
beforeEach(async () => {
  t = await startTestHub({ maxPollSeconds: 5 });
});
afterEach(() => t.close());

const poll = (query: Record<string, string | number> = {}) => t.call<{ agents: Array<{ name: string; notification_count: number }> }>('GET', '/notifications/poll', { key: t.adminKey, query });
const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
};

describe('GET /notifications/poll', () => {
  // Bounds here tell a wake-up by the event from one by the timeout (4 s and more), not how fast a wake-up is:
  // that is bench/latency.ts's figure. A busy machine took over 100 ms to answer a woken poll.
  it('returns as soon as a mention is created, long before its timeout', async () => {
    const alice = await t.register('alice');
    await t.register('bob');
    const held = poll({ timeout: 4 });
    await until(() => t.hub.waitingPolls === 1);
    expect(t.hub.waitingPolls).toBe(1);
    const mentionedAt = Date.now();
    await t.call('POST', '/posts', { key: alice.key, body: { content: 'wake up @bob' } });
    const woke = await held;
    expect(Date.now() - mentionedAt).toBeLessThan(2_000);
    expect(woke.body.agents).toEqual([expect.objectContaining({ name: 'bob', notification_count: 1 })]);
    expect(t.hub.waitingPolls).toBe(0);
  });

  it('answers at once when an agent already has work, most unread first, up to batch_size', async () => {
    const alice = await t.register('alice');
    await t.register('bob');
    await t.register('carol');
    await t.call('POST', '/posts', { key: alice.key, body: { content: '@bob @carol' } });
    await t.call('POST', '/posts', { key: alice.key, body: { content: '@carol' } });
    const started = Date.now();
    const r = await poll({ timeout: 4, batch_size: 1 });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r.body.agents).toEqual([expect.objectContaining({ name: 'carol', notification_count: 2 })]);
  });

  it('pages past batch_size with next_cursor', async () => {
    const alice = await t.register('alice', { type: 'human' });
    for (const n of ['bob', 'carol', 'dave']) await t.register(n);
    await t.call('POST', '/posts', { key: alice.key, body: { content: '@bob @carol' } });
    await t.call('POST', '/posts', { key: alice.key, body: { content: '@dave' } });
    const first = await t.call<{ agents: Array<{ name: string }>; next_cursor: string | null }>('GET', '/notifications/poll', { key: t.adminKey, query: { timeout: 4, batch_size: 2 } });
    expect(first.body.agents.map((a) => a.name)).toEqual(['bob', 'carol']);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    const started = Date.now();
    const second = await t.call<{ agents: Array<{ name: string }>; next_cursor: string | null }>('GET', '/notifications/poll', { key: t.adminKey, query: { timeout: 4, batch_size: 2, cursor: first.body.next_cursor! } });
    expect(second.body).toEqual({ agents: [expect.objectContaining({ name: 'dave' })], next_cursor: null });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await t.call('GET', '/notifications/poll', { key: t.adminKey, query: { cursor: 'bogus' } })).status).toBe(422);
  });

  it('returns {agents:[]} with 200 at its timeout, and caps the timeout', async () => {
    const started = Date.now();
    const r = await poll({ timeout: 0.3 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ agents: [], next_cursor: null });
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);

    const capped = await startTestHub({ maxPollSeconds: 0.2 });
    try {
      const s = Date.now();
      expect((await capped.call('GET', '/notifications/poll', { key: capped.adminKey, query: { timeout: 30 } })).body).toEqual({ agents: [], next_cursor: null });
      expect(Date.now() - s).toBeLessThan(10_000); // capped at 0.2 s, not the 30 s asked for
    } finally {
      await capped.close();
    }
  });

  it('keeps waiting when only a human was notified', async () => {
    const bob = await t.register('bob');
    await t.register('hugo', { type: 'human' });
    const held = poll({ timeout: 0.5 });
    await until(() => t.hub.waitingPolls === 1);
    await t.call('POST', '/posts', { key: bob.key, body: { content: 'hi @hugo' } });
    await new Promise((r) => setTimeout(r, 20));
    expect(t.hub.waitingPolls).toBe(1); // woken, found no work, waiting again
    expect((await held).body).toEqual({ agents: [], next_cursor: null });
  });

  it('is admin only and validates its query', async () => {
    const bob = await t.register('bob');
    expect((await t.call('GET', '/notifications/poll', { key: bob.key })).status).toBe(403);
    expect((await poll({ timeout: -1 })).status).toBe(422);
    expect((await poll({ batch_size: 0 })).status).toBe(422);
  });

  it('drops the waiter when the client disconnects', async () => {
    const ac = new AbortController();
    const held = t.call('GET', '/notifications/poll', { key: t.adminKey, query: { timeout: 4 }, signal: ac.signal });
    await until(() => t.hub.waitingPolls === 1);
    ac.abort();
    await expect(held).rejects.toThrow();
    await until(() => t.hub.waitingPolls === 0);
    expect(t.hub.waitingPolls).toBe(0);
  });

  it('close() does not hang on open long-polls', async () => {
    const hub = await startTestHub({ maxPollSeconds: 60 });
    const held = hub.call('GET', '/notifications/poll', { key: hub.adminKey, query: { timeout: 60 } }).catch((e: unknown) => e);
    await until(() => hub.hub.waitingPolls === 1);
    const started = Date.now();
    await hub.close();
    expect(Date.now() - started).toBeLessThan(10_000); // not the poll's 60 s
    const answer = await held;
    if (!(answer instanceof Error)) expect(answer).toMatchObject({ status: 200, body: { agents: [] } });
  });
});

describe('test switches (faults)', () => {
  it('pollNotFound answers 404 on the long-poll only, and can be flipped at runtime', async () => {
    t.hub.faults.pollNotFound = true;
    expect((await poll()).status).toBe(404);
    expect((await t.call('GET', '/notifications/poll', { key: t.adminKey, query: { timeout: 0 } })).body).toHaveProperty('detail');
    expect((await t.call('GET', '/agents', { key: t.adminKey, query: { has_notifications: true } })).status).toBe(200);
    t.hub.faults.pollNotFound = false;
    expect((await poll({ timeout: 0 })).status).toBe(200);
  });

  it('failWith5xx answers 503 on API routes but not probes; rateLimited answers 429 with headers', async () => {
    t.hub.faults.failWith5xx = true;
    expect((await t.call('GET', '/agents', { key: t.adminKey })).status).toBe(503);
    expect((await t.call('POST', '/agents/register', { key: t.adminKey, body: { name: 'bob' } })).status).toBe(503);
    expect((await t.call('GET', '/health')).status).toBe(200);
    t.hub.faults.failWith5xx = false;
    t.hub.faults.rateLimited = true;
    const limited = await t.call('GET', '/agents', { key: t.adminKey });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
    t.hub.faults.rateLimited = false;
    expect((await t.call('GET', '/agents', { key: t.adminKey })).body).toMatchObject({ total: 0 }); // nothing was registered
  });

  it('slowMs delays answers; faults given at start apply', async () => {
    const slow = await startTestHub({ faults: { slowMs: 150 } });
    try {
      const started = Date.now();
      expect((await slow.call('GET', '/agents', { key: slow.adminKey })).status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    } finally {
      await slow.close();
    }
  });
});
