// A daemon starts only on the shard count its keys were laid out for (daemon/shards/shard-check.ts): the decision
// as a table, then the check against the run's Redis under prefixes of its own.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { checkShardLayout, decideShardLayout, parseShardRecord, ShardCountMismatch, type ShardDecision } from '../daemon/shards/shard-check.ts';
import { layoutOf } from '../redis/key-layout.ts';
import { RedisKeys } from '../redis/keys.ts';

type Verdict = ShardDecision['verdict'];

describe('the shard layout decision', () => {
  it.each<[string, string | null, number, boolean | undefined, Verdict, number?]>([
    ['nothing recorded, one shard: the layout before shards', null, 1, undefined, 'fine'],
    ['nothing recorded, one shard, with state', null, 1, true, 'fine'],
    ['nothing recorded, three shards: look at the one-shard layout first', null, 3, undefined, 'look'],
    ['nothing recorded, three shards, no state under one shard: fresh', null, 3, false, 'record', 3],
    ['nothing recorded, three shards, state under one shard: migrate first', null, 3, true, 'mismatch'],
    ['recorded 3, configured 3', '3', 3, undefined, 'fine'],
    ['recorded 1, configured 1', '1', 1, undefined, 'fine'],
    ['recorded 1, configured 3', '1', 3, undefined, 'mismatch'],
    ['recorded 3, configured 1', '3', 1, undefined, 'mismatch'],
    ['recorded 3, configured 2', '3', 2, undefined, 'mismatch'],
    ['a migration under way to the configured count', '1->3', 3, undefined, 'mismatch'],
    ['a migration under way from the configured count', '1->3', 1, undefined, 'mismatch'],
    ['an unreadable record', 'three', 3, undefined, 'mismatch'],
  ])('%s', (_name, recorded, configured, state, verdict, count) => {
    const d = decideShardLayout(recorded, configured, state);
    expect(d.verdict).toBe(verdict);
    if (d.verdict === 'record') expect(d.count).toBe(count);
  });

  it('names both counts and the command in its error', () => {
    const d = decideShardLayout('1', 3);
    if (d.verdict !== 'mismatch') throw new Error(`expected a mismatch, got ${d.verdict}`);
    expect(d.error).toBeInstanceOf(ShardCountMismatch);
    expect(d.error.message).toMatch(/laid out for 1 shard but redis.shards is 3/);
    expect(d.error.message).toContain('warren shards migrate');
    expect(d.error.recorded).toEqual({ count: 1 });
    expect(d.error.configured).toBe(3);
    const m = decideShardLayout('1->3', 3);
    if (m.verdict !== 'mismatch') throw new Error('expected a mismatch');
    expect(m.error.message).toMatch(/migration from 1 to 3 shards did not finish/);
  });

  it('reads records', () => {
    expect(parseShardRecord('12')).toEqual({ count: 12 });
    expect(parseShardRecord('2->5')).toEqual({ migrating: { from: 2, to: 5 } });
    expect(parseShardRecord('2->')).toBeUndefined();
  });
});

describe('checkShardLayout on Redis', () => {
  const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  afterAll(async () => {
    await redis.quit();
  });
  const fresh = (): string => `shard-check-${randomUUID().slice(0, 8)}`;

  it('records a fresh fleet of three shards, then accepts it', async () => {
    const prefix = fresh();
    const layout = layoutOf({ prefix, shards: 3 });
    expect(await checkShardLayout(redis, layout)).toEqual({ verdict: 'fresh', count: 3 });
    expect(await redis.get(layout.home.shardCount)).toBe('3');
    expect(await checkShardLayout(redis, layout)).toEqual({ verdict: 'fine', count: 3 });
    await expect(checkShardLayout(redis, layoutOf({ prefix, shards: 1 }))).rejects.toThrow(/laid out for 3 shards but redis.shards is 1/);
  });

  it('records nothing for one shard', async () => {
    const layout = layoutOf({ prefix: fresh(), shards: 1 });
    expect(await checkShardLayout(redis, layout)).toEqual({ verdict: 'fine', count: 1 });
    expect(await redis.exists(layout.home.shardCount)).toBe(0);
  });

  it.each([
    ['its queue', (k: RedisKeys) => redis.set(`${k.prefix}:activations:id`, '4')],
    ['its last activations', (k: RedisKeys) => redis.hset(k.agentLastActivated, 'alice', '1')],
    ['its records', (k: RedisKeys) => redis.lpush(k.allActivationRecords, '{}')],
    ['agents with tasks', (k: RedisKeys) => redis.sadd(k.agentsWithTasks, 'alice')],
  ])('refuses three shards over a one-shard fleet (%s) and records nothing', async (_what, lay) => {
    const prefix = fresh();
    await lay(new RedisKeys(prefix));
    const layout = layoutOf({ prefix, shards: 3 });
    await expect(checkShardLayout(redis, layout)).rejects.toBeInstanceOf(ShardCountMismatch);
    expect(await redis.exists(layout.home.shardCount)).toBe(0);
    expect(await checkShardLayout(redis, layoutOf({ prefix, shards: 1 }))).toEqual({ verdict: 'fine', count: 1 });
  });
});
