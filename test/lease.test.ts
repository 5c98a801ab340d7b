import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { LeaderLease } from '../scheduler/lease.ts';

const redis = new Redis(inject('redisUrl'));
afterAll(() => redis.quit());

describe('leader lease', () => {
  it('has exactly one holder; the other takes over only after the holder stops renewing', async () => {
    const prefix = `lease-${randomUUID().slice(0, 8)}`;
    const a = new LeaderLease(redis, { prefix, ttlMs: 300 });
    const b = new LeaderLease(redis, { prefix, ttlMs: 300 });
    expect(await a.tryAcquireOrRenew()).toBe(true);
    expect(await b.tryAcquireOrRenew()).toBe(false);
    expect(await a.tryAcquireOrRenew()).toBe(true); // renew
    expect(await a.holder()).toBe(a.token);
    await new Promise((r) => setTimeout(r, 400)); // a "dies": no renewal within the ttl
    expect(await b.tryAcquireOrRenew()).toBe(true);
    expect(await a.tryAcquireOrRenew()).toBe(false); // a cannot renew a lease it lost
    await a.release(); // and cannot release it either
    expect(await b.holder()).toBe(b.token);
    await b.release();
    expect(await b.holder()).toBeNull();
  });
});
