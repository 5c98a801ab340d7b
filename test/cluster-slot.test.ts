// redis/cluster-slot.ts against a real cluster's own CLUSTER KEYSLOT, and the shard prefixes warren derives for a
// cluster (redis/key-layout.ts shardPrefixes) spread over every master of a 3-master cluster as redis-cli splits it.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterSlot } from '../redis/cluster-slot.ts';
import { shardPrefixes } from '../redis/key-layout.ts';
import { startPrivateRedisCluster, type PrivateRedisCluster } from './support/redis-cluster.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

let cluster: PrivateRedisCluster;
let node: Redis;
beforeAll(async () => {
  cluster = await startPrivateRedisCluster();
  node = new Redis({ host: '127.0.0.1', port: cluster.ports[0]!, lazyConnect: true });
  await node.connect();
}, 30_000);
afterAll(async () => {
  node?.disconnect();
  await cluster?.stop();
});

const keyslot = async (key: string): Promise<number> => Number(await node.cluster('KEYSLOT', key));

describe('clusterSlot against CLUSTER KEYSLOT', () => {
  it('agrees on plain keys, hash tags, empty and unclosed braces, and non-ASCII names', async () => {
    const keys = ['foo', 'bar', 'somekey', '{user1000}.following', 'foo{}{bar}', 'foo{bar', '{}', '}{x}', '{warren}:activations:id', 'wärren:ümlaut', '{蜂}:s0'];
    for (const key of keys) expect(clusterSlot(key), key).toBe(await keyslot(key));
  });
});

describe('shard prefixes on a 3-master cluster', { timeout: PROCESS_TEST_MS }, () => {
  it("shardPrefixes('{x}', 6, true): each prefix's slot is the cluster's, and the six land two on each master", async () => {
    const prefixes = shardPrefixes('{x}', 6, true);
    const masters: number[] = [];
    for (const p of prefixes) {
      // A key under the prefix, as the stores make them: its slot is the prefix's tag's.
      for (const key of [p, `${p}:activations:id`, `${p}:agent-failures`]) expect(clusterSlot(key), key).toBe(await keyslot(key));
      masters.push(await cluster.masterOf(`${p}:agent-failures`));
    }
    expect(new Set(masters)).toEqual(new Set([0, 1, 2]));
    expect([0, 1, 2].map((m) => masters.filter((x) => x === m).length)).toEqual([2, 2, 2]);
  });

  it('for random homes too, six shards reach all three masters', async () => {
    for (let n = 0; n < 20; n++) {
      const prefixes = shardPrefixes(`{fleet-${randomUUID().slice(0, 8)}}`, 6, true);
      const masters = new Set<number>();
      for (const p of prefixes) {
        expect(clusterSlot(p), p).toBe(await keyslot(p));
        masters.add(await cluster.masterOf(p));
      }
      expect(masters, prefixes.join(' ')).toEqual(new Set([0, 1, 2]));
    }
  });
});
