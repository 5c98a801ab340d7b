// Many agents split by shard, each with where its agents stood in the caller's list: a store reads each shard with
// one command (a script's keys must share one slot) and puts the answers back in the order it was asked.
import type { KeyLayout } from '../redis/key-layout.ts';
import type { RedisKeys } from '../redis/keys.ts';

export interface ShardGroup<T> {
  keys: RedisKeys;
  items: T[];
  /** `at[i]`: the position of `items[i]` in the caller's list. */
  at: number[];
}

// An agent's shard is a SHA-1 of its name: ~3 µs, so a round over 100,000 agents spent ~300 ms hashing. Remembered
// per layout, up to a bound (names come from the loaded fleet; the bound only guards against callers asking others).
const SHARD_MEMO_MAX = 1_000_000;
const memos = new WeakMap<KeyLayout, Map<string, number>>();

/** `layout.indexOf(agent)`, remembered. */
export function shardOf(layout: KeyLayout, agent: string): number {
  let memo = memos.get(layout);
  if (!memo) memos.set(layout, (memo = new Map<string, number>()));
  let s = memo.get(agent);
  if (s === undefined) {
    if (memo.size >= SHARD_MEMO_MAX) memo.clear();
    memo.set(agent, (s = layout.indexOf(agent)));
  }
  return s;
}

/** `items` grouped by the shard of `agentOf(item)`, shards in index order, items in the caller's order within each. */
export function shardGroups<T>(layout: KeyLayout, items: readonly T[], agentOf: (item: T) => string): Array<ShardGroup<T>> {
  // One shard: no hashing, one group (the layout of a deployment that never configured shards).
  if (layout.shards.length === 1) return items.length ? [{ keys: layout.shards[0]!, items: [...items], at: items.map((_, i) => i) }] : [];
  const groups = new Map<number, ShardGroup<T>>();
  items.forEach((item, i) => {
    const s = shardOf(layout, agentOf(item));
    let g = groups.get(s);
    if (!g) groups.set(s, (g = { keys: layout.shards[s]!, items: [], at: [] }));
    g.items.push(item);
    g.at.push(i);
  });
  return [...groups].sort(([a], [b]) => a - b).map(([, g]) => g);
}

/** Agents grouped by shard (see shardGroups). */
export function agentGroups(layout: KeyLayout, agents: readonly string[]): Array<ShardGroup<string>> {
  return shardGroups(layout, agents, (a) => a);
}
