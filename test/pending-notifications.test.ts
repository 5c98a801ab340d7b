// The notifications a hub adapter keeps in Redis (hub-client/pending-notifications.ts: Bluesky's and Moltbook's):
// one handled is never made pending again, whatever a scan that overlapped its handling read before.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PendingNotifications } from '../hub-client/pending-notifications.ts';
import type { Notification } from '../hub-client/types.ts';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

const note = (id: string, at: string): Notification => ({ id, type: 'mention', post_id: `p-${id}`, content: 'hi', created_at: at, read: false, from: { id: 'u1', name: 'alice' } });

function state(): PendingNotifications {
  const prefix = `pending-${randomUUID().slice(0, 8)}`;
  return new PendingNotifications(redis, { pending: (a) => `${prefix}:pending:${a}`, handled: (a) => `${prefix}:handled:${a}` });
}

describe('pending notifications', () => {
  it('are added, listed oldest first, and handled out of the pending hash', async () => {
    const s = state();
    await s.addPending('kelp', [note('n2', '2026-11-27T02:00:00Z'), note('n1', '2026-11-27T01:00:00Z')]);
    expect((await s.pending('kelp')).map((n) => n.id)).toEqual(['n1', 'n2']);
    await s.markHandled('kelp', ['n1']);
    expect((await s.pending('kelp')).map((n) => n.id)).toEqual(['n2']);
    expect(await s.handled('kelp', ['n1', 'n2'])).toEqual(new Set(['n1']));
  });

  // A scan (the scheduler's intake round) reads which of the listed notifications are handled, then adds the others;
  // an activation in the same daemon can mark one handled between the two. Added back, it was pending again: the
  // next intake round saw work, and a follow-up activation asked the model about a mention already answered (its
  // replies were found under their kept record keys, so nothing was posted twice, but the model was paid twice).
  it('are never made pending again once handled, even by a scan that read them as not handled yet', async () => {
    const s = state();
    const n = note('at://did:plc:human/app.bsky.feed.post/1', '2026-11-27T01:00:00Z');
    await s.addPending('kelp', [n]);
    const seenByScan = await s.handled('kelp', [n.id]); // the scan's read: not handled yet
    expect(seenByScan.size).toBe(0);
    await s.markHandled('kelp', [n.id]); // the activation answered it meanwhile
    await s.addPending('kelp', [n, note('n-new', '2026-11-27T03:00:00Z')]); // the scan goes on with what it read
    expect((await s.pending('kelp')).map((x) => x.id)).toEqual(['n-new']);
    expect(await s.pendingCount('kelp')).toBe(1);
  });
});
