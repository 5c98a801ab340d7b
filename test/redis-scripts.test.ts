// warren's Lua scripts are sent once and then run by hash (EVALSHA), also after a server that forgot them; every
// key a script touches is declared, so Redis Cluster can route it (checked by the scripts' own Redis on a cluster
// in test/redis-cluster.test.ts). A private redis-server: the command statistics are this file's alone.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaderLease } from '../scheduler/lease.ts';
import { redisScripts } from '../redis/scripts.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';

let server: PrivateRedis;
let conn: Redis;
beforeAll(async () => {
  server = await startPrivateRedis();
  conn = new Redis(server.url);
});
afterAll(async () => {
  conn?.disconnect();
  await server?.stop();
});

/** Calls of a command since the last CONFIG RESETSTAT. */
async function calls(command: string): Promise<number> {
  const info = await conn.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
}

describe('warren Redis scripts', () => {
  it('runs by hash: the body goes over the wire only when the server does not know it (also after SCRIPT FLUSH)', async () => {
    const lease = new LeaderLease(conn, { prefix: `scripts-${randomUUID().slice(0, 8)}`, ttlMs: 5_000 });
    await conn.script('FLUSH');
    await conn.config('RESETSTAT');
    for (let i = 0; i < 10; i++) expect(await lease.tryAcquireOrRenew()).toBe(true);
    // The first call met NOSCRIPT (a rejected EVALSHA is not counted as a call) and sent the body; the rest ran by hash.
    expect(await calls('eval')).toBe(1);
    expect(await calls('evalsha')).toBe(9);

    await conn.script('FLUSH'); // a restarted server without the scripts
    await conn.config('RESETSTAT');
    for (let i = 0; i < 5; i++) await lease.tryAcquireOrRenew();
    await lease.release();
    expect(await calls('eval')).toBe(2); // acquire and release, each sent once more
    expect(await calls('evalsha')).toBeGreaterThanOrEqual(4);
    expect(await lease.holder()).toBeNull();
  });

  it('registers once per connection, however many users the connection has', () => {
    expect(redisScripts(conn)).toBe(redisScripts(conn));
  });
});
