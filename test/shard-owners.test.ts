// Who schedules which shard (scheduler/shard-owners.ts) and each shard's share of a worker's concurrency.
import { describe, expect, it } from 'vitest';
import { ownedShards, type RosterEntry } from '../scheduler/shard-owners.ts';
import { shardConcurrency } from '../activation/worker.ts';

const owners = (live: RosterEntry[], count: number): Map<string, number[]> => new Map(live.map((d) => [d.token, [...ownedShards(d, live, count)].sort((a, b) => a - b)]));

describe('ownedShards', () => {
  it.each([
    ['alone, a daemon owns every shard', [{ token: 'a' }], 6],
    ['three daemons, six shards', [{ token: 'a' }, { token: 'b' }, { token: 'c' }], 6],
    ['two daemons, one shard', [{ token: 'a' }, { token: 'b' }], 1],
    ['a daemon working a subset', [{ token: 'a', shards: [0, 1] }, { token: 'b' }], 4],
  ])('%s: each shard has exactly one owner, and only one that works it', (_name, live, count) => {
    const all = owners(live, count);
    const seen = [...all.values()].flat().sort((a, b) => a - b);
    expect(seen).toEqual(Array.from({ length: count }, (_, i) => i));
    for (const d of live) for (const s of all.get(d.token)!) if (d.shards) expect(d.shards).toContain(s);
  });

  it('counts itself even when the roster read did not include it yet', () => {
    expect([...ownedShards({ token: 'a' }, [], 3)]).toEqual([0, 1, 2]);
  });

  it('shares 12 shards among 3 daemons so that each gets some', () => {
    const live = [{ token: 'host:1:aaaa' }, { token: 'host:2:bbbb' }, { token: 'host:3:cccc' }];
    for (const shards of owners(live, 12).values()) expect(shards.length).toBeGreaterThan(0);
  });

  it('moves only the shards of a daemon that leaves, and a joiner takes only shards it wins', () => {
    const live = Array.from({ length: 4 }, (_, i) => ({ token: `d${i}` }));
    const before = owners(live, 16);
    const after = owners(live.slice(0, 3), 16);
    for (const d of live.slice(0, 3)) for (const s of before.get(d.token)!) expect(after.get(d.token)).toContain(s);
    // Rejoining gives the same answer as before: the choice depends on the roster, not on history.
    expect(owners(live, 16)).toEqual(before);
  });

  it('a daemon that works no shard owns none', () => {
    expect(ownedShards({ token: 'a', shards: [] }, [{ token: 'a', shards: [] }, { token: 'b' }], 3).size).toBe(0);
  });
});

describe('shardConcurrency', () => {
  it.each([
    [10, 1, 10],
    [10, 3, 4],
    [4, 6, 1],
    [1, 6, 1],
    [50, 5, 10],
    [8, 0, 8],
  ])('%i over %i shards → %i each', (concurrency, shards, each) => {
    expect(shardConcurrency(concurrency, shards)).toBe(each);
  });
});
