// The Bluesky adapter's scan (each intake round's) overlapping an activation that handles the notification: the
// scan reads which notifications are handled, then keeps the others as pending; the activation's markRead landing
// between the two made an answered mention pending again, and the next round ran a follow-up activation that asked
// the model about it a second time (bluesky-daemon.test.ts "reply chain" saw two model calls in about 1 CI run of 4).
// Here the markRead is made to land in that gap every time, against a minimal fake PDS.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BlueskyAdapter } from '../hub-client/bluesky/adapter.ts';
import { keyLayout } from '../redis/key-layout.ts';
import { readBody } from './fakes/read-body.ts';

const redis = new Redis(inject('redisUrl'));
const mention = {
  uri: 'at://did:plc:human/app.bsky.feed.post/3n3c2ebi5p22r',
  cid: 'bafyreie5737gdxlw5i64vzichcalba3z2v5n6icifvx5xytvske7mr3hpm',
  author: { did: 'did:plc:human', handle: 'human.test' },
  reason: 'mention',
  record: { $type: 'app.bsky.feed.post', text: 'Tell me everything, @kelp.test.', createdAt: new Date().toISOString() },
  isRead: false,
  indexedAt: new Date().toISOString(),
};
let pds: Server;
let url: string;
const calls: string[] = [];

// What the adapter asks of a PDS here: a login, the notifications (the mention stays unread, as the AppView may
// show it for a while after updateSeen), and updateSeen.
beforeAll(async () => {
  pds = createServer((req, res) => {
    void readBody(req).then(() => {
      const nsid = new URL(req.url ?? '/', 'http://pds').pathname.replace('/xrpc/', '');
      calls.push(nsid);
      const json = (body: unknown): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (nsid === 'com.atproto.server.createSession') json({ accessJwt: 'access', refreshJwt: 'refresh', handle: 'kelp.test', did: 'did:plc:kelp' });
      else if (nsid === 'app.bsky.notification.listNotifications') json({ notifications: [mention] });
      else if (nsid === 'app.bsky.notification.updateSeen') res.writeHead(200).end();
      else res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'MethodNotImplemented' }));
    });
  });
  await new Promise<void>((resolve) => pds.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(pds.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => pds.close(resolve));
  await redis.quit();
});

/**
 * `redis` as the adapter sees it, except that once armed, the first read of `handledKey` (the scan's) waits for
 * `between()` before it answers: whatever `between` does lands after the scan's read and before what it does next.
 */
function gapAfterHandledRead(handledKey: string): { client: Redis; arm(between: () => Promise<void>): void; fired(): boolean } {
  let between: (() => Promise<void>) | undefined;
  let fired = false;
  const client = new Proxy(redis, {
    get(target, prop) {
      if (prop === 'smismember') {
        return async (key: string, ...ids: string[]): Promise<number[]> => {
          const flags = await target.smismember(key, ...ids);
          const run = key === handledKey ? between : undefined;
          if (run) {
            between = undefined;
            await run();
            fired = true;
          }
          return flags;
        };
      }
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { client, arm: (b) => void (between = b), fired: () => fired };
}

describe('a Bluesky scan that overlaps the handling of a notification', () => {
  it('does not make the handled notification pending again (no follow-up activation, no second model call)', async () => {
    const prefix = `bsky-scan-${randomUUID().slice(0, 8)}`;
    const seam = gapAfterHandledRead(keyLayout(prefix).of('kelp').blueskyHandled('kelp'));
    const hub = new BlueskyAdapter({ baseUrl: url, accounts: new Map([['kelp', { handle: 'kelp.test', password: 'pw' }]]), redis: seam.client, prefix, maxWaitMs: 5_000 });
    // A first round finds the mention: the scheduler enqueues an activation for it.
    expect(await hub.agentsWithNotifications()).toEqual([{ id: 'kelp', name: 'kelp', notification_count: 1 }]);
    const inbox = await hub.listNotifications('kelp');
    expect(inbox.notifications.map((n) => n.id)).toEqual([mention.uri]);
    // The next round's scan reads the mention as not handled; the activation, replied, marks it read right then.
    seam.arm(async () => {
      await hub.markRead('kelp', [mention.uri]);
    });
    const round = await hub.agentsWithNotifications();
    expect(seam.fired()).toBe(true);
    expect(calls).toContain('app.bsky.notification.updateSeen');
    // Nothing is left for a follow-up: no agent with work, and an activation would find an empty inbox.
    expect(round).toEqual([]);
    expect((await hub.listNotifications('kelp')).notifications).toEqual([]);
  });
});
