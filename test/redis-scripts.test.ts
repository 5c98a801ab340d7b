// warren's Lua scripts are sent once and then run by hash (EVALSHA), also after a server that forgot them; every
// key a script touches is declared, so Redis Cluster can route it (checked by the scripts' own Redis on a cluster
// in test/redis-cluster.test.ts). A private redis-server: the command statistics are this file's alone.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaderLease } from '../scheduler/lease.ts';
import { WriteAllowance } from '../scheduler/write-allowance.ts';
import { redisScripts, UnexpectedScriptReply } from '../redis/scripts.ts';
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

  // A script and its caller out of step (an edited script, a partial deploy): the script is replaced on a connection
  // of its own by one that answers a code nobody knows, and the caller gets a typed error naming script and code.
  it.each<[string, string, number | undefined, string, (c: Redis) => Promise<unknown>]>([
    // [script, its command, keys, what it answers, the caller]
    ['reserve-write', 'warrenReserveWrite', 4, 'return {-9, 1500}', (c) => new WriteAllowance(c, `odd-${randomUUID().slice(0, 8)}`).reserve('bee', { can_create_posts: true, limits: { max_daily_posts: 5, max_daily_comments: 50, max_responses_per_thread: 3, min_interval_seconds: 60 } }, { kind: 'comment', postId: 'p1', idempotencyKey: 'k1' })],
    ['lease-acquire', 'warrenLeaseAcquire', 1, 'return 7', (c) => new LeaderLease(c, { prefix: `odd-${randomUUID().slice(0, 8)}`, ttlMs: 5_000 }).tryAcquireOrRenew()],
    ['release-write', 'warrenReleaseWrite', 4, "return 'yes'", (c) => redisScripts(c).releaseWrite(['a', 'b', 'c', 'd'], 'bee', 'comment', 1)],
    // A phase script, whose key count goes first (undefined here).
    ['activation-open', 'warrenActivationOpen', undefined, 'return {2}', (c) => redisScripts(c).activationOpen('bee', ['a', 'b', 'c'], ['d', 'e', 'f'], ['g'], { jobId: 'job-1', attempt: '1', started: 1, ttlMs: 1_000 }, 1)],
    ['record-activated', 'warrenActivationEnd', undefined, 'return {7, 1}', (c) => redisScripts(c).activationEnd({ activated: { keys: ['a'], args: [1] }, record: { keys: ['b'], args: [2] }, release: { keys: ['c'], args: [3] } })],
  ])('an unknown answer of %s is UnexpectedScriptReply, never read as a known one', async (script, command, keys, body, call) => {
    const odd = new Redis(server.url);
    try {
      redisScripts(odd); // registers the real scripts on this connection, then one is replaced
      odd.defineCommand(command, keys === undefined ? { lua: body } : { lua: body, numberOfKeys: keys });
      const err = await call(odd).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UnexpectedScriptReply);
      expect((err as UnexpectedScriptReply).script).toBe(script);
      expect((err as Error).message).toContain(`${script}.lua`);
    } finally {
      odd.disconnect();
    }
  });
});
