// The intake past the long-poll's first page (docs/hub-api.md §7): with 1,000 agents busy on claimed work listed
// first, agents mentioned after them still reach the scheduler. Real hub over HTTP, real BullMQ holds on Redis.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { HubClient } from '../hub-client/client.ts';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { hasUnclaimedWork, InboxClaims } from '../scheduler/inbox-claims.ts';
import { selectInboxWork } from '../scheduler/intake.ts';

const redisUrl = inject('redisUrl');
const logger = pino({ level: 'silent' });
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const BUSY = 1_000;
const FRESH = 5;

/** Mentions `names` in posts of 20, from enough humans that no author meets the hub's fan-out limit. */
async function mentionAll(t: TestHub, names: readonly string[], tag: string): Promise<void> {
  for (let h = 0; h * 100 < names.length; h++) {
    const human = await t.register(`${tag}-h${h}`, { type: 'human' });
    for (let i = h * 100; i < Math.min(names.length, (h + 1) * 100); i += 20) {
      const r = await t.call('POST', '/posts', { key: human.key, body: { content: names.slice(i, i + 20).map((n) => `@${n}`).join(' ') } });
      expect(r.status).toBe(201);
    }
  }
}

describe('intake beyond the long-poll first page', () => {
  it('returns agents with fresh work while 1,000 agents ahead of them are busy with claimed work', async () => {
    const t = await startTestHub({ maxPollSeconds: 5 });
    closers.push(() => t.close());
    const busy = Array.from({ length: BUSY }, (_, i) => `busy${String(i).padStart(4, '0')}`);
    const fresh = Array.from({ length: FRESH }, (_, i) => `fresh${i}`);
    for (let i = 0; i < busy.length + fresh.length; i += 50) {
      await Promise.all([...busy, ...fresh].slice(i, i + 50).map((n) => t.register(n)));
    }
    // Busy agents' mentions are older, so the hub lists them first (ties: who waited longest).
    await mentionAll(t, busy, 'b');
    await mentionAll(t, fresh, 'f');

    const prefix = `warren-ip-${randomUUID().slice(0, 8)}`;
    const conn = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    const queue = new ActivationQueue(conn, { prefix, logger });
    closers.push(async () => conn.quit(), () => queue.close());
    const claims = new InboxClaims(conn, prefix);
    for (const n of busy) await queue.enqueue(n, 'notification');

    const hub = new HubClient({ baseUrl: t.hub.url, apiKey: t.adminKey });
    const version = await claims.version();
    const withWork = await hub.pollAgentsWithWork(2);
    expect(withWork).toHaveLength(BUSY + FRESH);
    const candidates = selectInboxWork(withWork, new Set([...busy, ...fresh]));
    const holds = await claims.heldByMany(candidates.map((a) => a.name));
    const toEnqueue = candidates.filter((a) => hasUnclaimedWork(a.notification_count, holds.get(a.name), version)).map((a) => a.name);
    expect(toEnqueue.sort()).toEqual(fresh);
  }, 120_000);
});
