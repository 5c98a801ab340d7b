// Where an agent's keys live when the fleet is spread over shards (redis/key-layout.ts), and the cluster slot
// function the spread is chosen by (redis/cluster-slot.ts).
import { describe, expect, it } from 'vitest';
import { clusterSlot } from '../redis/cluster-slot.ts';
import { KeyLayout, keyLayout, layoutOf, shardIndex, shardPrefixes } from '../redis/key-layout.ts';

describe('clusterSlot', () => {
  it.each([
    // Values as CLUSTER KEYSLOT answers them (Redis documentation and a running cluster).
    ['foo', 12182],
    ['bar', 5061],
    ['hello', 866],
    ['somekey', 11058],
    ['{user1000}.following', clusterSlot('user1000')],
    ['foo{}{bar}', clusterSlot('foo{}{bar}')], // an empty first tag: the whole key is hashed
    ['{warren}:activations:id', clusterSlot('warren')],
  ])('%s → %i', (key, slot) => {
    expect(clusterSlot(key)).toBe(slot);
  });
  it('hashes the whole key when the first tag is empty', () => {
    expect(clusterSlot('foo{}{bar}')).not.toBe(clusterSlot('bar'));
  });
});

describe('shard prefixes', () => {
  it.each([
    ['one shard is the home prefix itself (single Redis)', 'warren', 1, false, ['warren']],
    ['one shard is the home prefix itself (cluster)', '{warren}', 1, true, ['{warren}']],
    ['several on one Redis', 'warren', 3, false, ['warren:s0', 'warren:s1', 'warren:s2']],
  ])('%s', (_name, home, count, cluster, expected) => {
    expect(shardPrefixes(home, count, cluster)).toEqual(expected);
  });

  it.each([2, 3, 6, 7, 16])('on a cluster, %i shards each take a tag whose slot is in their share of the slot space', (count) => {
    const prefixes = shardPrefixes('{warren}', count, true);
    expect(new Set(prefixes).size).toBe(count);
    prefixes.forEach((p, i) => {
      expect(p).toMatch(new RegExp(`^\\{warren:s${i}(:\\d+)?\\}$`));
      const slot = clusterSlot(p);
      expect(slot).toBeGreaterThanOrEqual(Math.floor((i * 16384) / count));
      expect(slot).toBeLessThan(Math.floor(((i + 1) * 16384) / count));
    });
  });

  it('is stable: the same configuration gives the same prefixes', () => {
    expect(shardPrefixes('{fleet-a}', 6, true)).toEqual(shardPrefixes('{fleet-a}', 6, true));
  });
});

describe('shard of an agent', () => {
  it.each([
    ['greeter', 1, 0],
    ['greeter', 3, shardIndex('greeter', 3)],
  ])('%s among %i', (agent, count, expected) => {
    expect(shardIndex(agent, count)).toBe(expected);
    expect(shardIndex(agent, count)).toBeLessThan(count);
  });

  it('spreads agents over the shards (600 names over 6: each gets between 60 and 140)', () => {
    const counts = new Array<number>(6).fill(0);
    for (let i = 0; i < 600; i++) counts[shardIndex(`bee-${i}`, 6)]!++;
    for (const c of counts) {
      expect(c).toBeGreaterThan(60);
      expect(c).toBeLessThan(140);
    }
  });

  it('routes an agent to its shard, groups agents by shard, and keeps fleet keys at home', () => {
    const layout = layoutOf({ prefix: '{w}', shards: 3, cluster: ['redis://x'] });
    expect(layout.home.prefix).toBe('{w}');
    expect(layout.shards.map((s) => s.prefix)).toEqual(shardPrefixes('{w}', 3, true));
    const agents = Array.from({ length: 30 }, (_, i) => `a-${i}`);
    for (const a of agents) expect(layout.of(a).prefix).toBe(layout.shards[shardIndex(a, 3)]!.prefix);
    const groups = layout.byShard(agents);
    expect(groups.flatMap((g) => g.agents).sort()).toEqual([...agents].sort());
    for (const g of groups) for (const a of g.agents) expect(layout.of(a)).toBe(g.keys);
  });

  it('a plain prefix is a layout of one shard whose keys are the home keys (the layout before shards)', () => {
    const layout = keyLayout('warren');
    expect(layout).toBeInstanceOf(KeyLayout);
    expect(layout.shards).toHaveLength(1);
    expect(layout.of('anyone')).toBe(layout.home);
    expect(layout.of('anyone').agentFailures).toBe('warren:agent-failures');
  });
});
