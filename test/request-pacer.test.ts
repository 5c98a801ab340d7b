// The request pacer on the suite's private Redis: buckets shared by every pacer on one prefix, several buckets
// taken together or not at all, a 429's hold shared, a server's own count of what is left obeyed. The clock is
// the test's, so every wait is exact.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { PaceWaitTooLong, RequestPacer, type PaceBucket } from '../hub-client/request-pacer.ts';

let redis: Redis;
beforeAll(() => {
  redis = new Redis(inject('redisUrl'));
});
afterAll(() => redis.quit());

const NO_WAIT = { maxWaitMs: 0 };

/** Takes once; the wait it was refused with, or 0. */
async function tryTake(p: RequestPacer, buckets: PaceBucket[]): Promise<number> {
  try {
    await p.take(buckets, NO_WAIT);
    return 0;
  } catch (err) {
    if (err instanceof PaceWaitTooLong) return err.waitMs;
    throw err;
  }
}

describe('request pacer', () => {
  it('shares one bucket between two pacers on one prefix (two daemons on one Redis get one allowance)', async () => {
    let now = 1_000_000;
    const prefix = `pace-${randomUUID().slice(0, 8)}`;
    const a = new RequestPacer(redis, prefix, () => now);
    const b = new RequestPacer(redis, prefix, () => now);
    const bucket = { key: 'moltbook:host:example', perMinute: 60, burst: 3 };
    const waits = [];
    for (let i = 0; i < 4; i++) waits.push(await tryTake(i % 2 ? b : a, [bucket]));
    expect(waits).toEqual([0, 0, 0, 1_000]); // a burst of 3 between both, then one a second
    now += 1_000;
    expect(await tryTake(b, [bucket])).toBe(0);
    expect(await tryTake(a, [bucket])).toBe(1_000);
    // Another prefix (another deployment) has its own.
    expect(await tryTake(new RequestPacer(redis, `pace-${randomUUID().slice(0, 8)}`, () => now), [bucket])).toBe(0);
  });

  it('takes from every bucket or from none, and waits for the emptiest', async () => {
    let now = 5_000_000;
    const p = new RequestPacer(redis, `pace-${randomUUID().slice(0, 8)}`, () => now);
    const host = { key: 'h', perMinute: 60, burst: 2 };
    const pinchy = { key: 'a:pinchy', perMinute: 6, burst: 1 };
    const snappy = { key: 'a:snappy', perMinute: 6, burst: 5 };
    expect(await tryTake(p, [pinchy, host])).toBe(0);
    expect(await tryTake(p, [pinchy, host])).toBe(10_000); // pinchy's own bucket is empty: 6 a minute
    expect(await p.available(host)).toBe(1); // the refused take took nothing from the host
    expect(await tryTake(p, [snappy, host])).toBe(0);
    expect(await tryTake(p, [snappy, host])).toBe(1_000); // now the host's bucket is the empty one
    now += 1_000;
    expect(await tryTake(p, [snappy, host])).toBe(0);
  });

  it('holds a penalised bucket back for everyone until the time a 429 asked for, never shortening a longer hold', async () => {
    let now = 9_000_000;
    const prefix = `pace-${randomUUID().slice(0, 8)}`;
    const a = new RequestPacer(redis, prefix, () => now);
    const b = new RequestPacer(redis, prefix, () => now);
    const host = { key: 'h', perMinute: 600, burst: 10 };
    await a.penalise('h', now + 30_000);
    await a.penalise('h', now + 5_000);
    expect(await tryTake(b, [host])).toBe(30_000);
    expect(await b.available(host)).toBe(0);
    // A bucket that only carries holds (a kind of write): held, then free without any token count.
    const comments = { key: 'a:pinchy:comment', perMinute: 0, burst: 1 };
    await b.penalise(comments.key, now + 20_000);
    now += 30_000;
    expect(await tryTake(a, [host, comments])).toBe(0);
    expect(await tryTake(a, [comments])).toBe(0);
    expect(await tryTake(a, [comments])).toBe(0);
  });

  it('obeys a server\'s own count: what remains replaces the bucket\'s tokens, none left holds it until the reset', async () => {
    let now = 20_000_000;
    const p = new RequestPacer(redis, `pace-${randomUUID().slice(0, 8)}`, () => now);
    const account = { key: 'bsky:did:plc:abc', perMinute: 600, burst: 50 };
    await p.observe(account, { remaining: 2, resetAt: now + 300_000 });
    expect(await tryTake(p, [account])).toBe(0);
    expect(await tryTake(p, [account])).toBe(0);
    expect(await tryTake(p, [account])).toBe(100); // refilled at its own rate from there
    await p.observe(account, { remaining: 0, resetAt: now + 60_000 });
    expect(await tryTake(p, [account])).toBe(60_000);
    now += 60_000;
    expect(await tryTake(p, [account])).toBe(0);
  });

  it('waits when the wait is allowed, and stops waiting on abort', async () => {
    const p = new RequestPacer(redis, `pace-${randomUUID().slice(0, 8)}`);
    const bucket = { key: 'slow', perMinute: 600, burst: 1 }; // one each 100 ms
    await p.take([bucket], NO_WAIT);
    const began = Date.now();
    await p.take([bucket], { maxWaitMs: 5_000 });
    expect(Date.now() - began).toBeGreaterThanOrEqual(50);
    await p.penalise('slow', Date.now() + 60_000);
    const ac = new AbortController();
    const waiting = p.take([bucket], { maxWaitMs: 120_000, signal: ac.signal }).catch((e: unknown) => e);
    ac.abort();
    expect(await waiting).toMatchObject({ name: 'PaceAborted' });
  });
});
