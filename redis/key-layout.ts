// Where each key lives when the fleet is spread over shards (`redis.shards`). An agent belongs to one shard by a
// stable hash of its name; each shard is a prefix of its own (its own hash tag on a cluster, so its BullMQ queue,
// inbox holds, agent state, counters and records share one slot and scripts may read them together). Fleet-wide
// keys (approvals, A2A tasks, outbound events, pacing, channels) stay under the home prefix. With one shard the
// shard's prefix is the home prefix: the layout of a deployment that never configured shards.
import { createHash } from 'node:crypto';
import { RedisKeys } from './keys.ts';
import { clusterSlot, CLUSTER_SLOTS } from './cluster-slot.ts';
import { pagesOf } from './agent-pages.ts';

/** The most shards a fleet may be spread over (each one a BullMQ queue and a scheduler lease). */
export const MAX_SHARDS = 64;

/** What a store is given: a plain prefix (one shard: tests, tools) or a daemon's whole layout. */
export type KeySpace = string | KeyLayout;

/** Some items of one shard, and where each stood in the caller's list (`at[i]` for `items[i]`). */
export interface ShardGroup<T> {
  keys: RedisKeys;
  items: T[];
  at: number[];
}

// An agent's shard is a SHA-1 of its name, ~3 µs: a round over 100,000 agents spent ~300 ms hashing. Remembered,
// up to a bound (names come from the loaded fleet; the bound only guards against callers asking about others).
const SHARD_MEMO_MAX = 1_000_000;

export class KeyLayout {
  readonly #memo = new Map<string, number>();
  /** Fleet-wide keys. */
  readonly home: RedisKeys;
  /** One per shard, by index. */
  readonly shards: readonly RedisKeys[];

  constructor(home: string, shardPrefixes: readonly string[]) {
    this.home = new RedisKeys(home);
    this.shards = shardPrefixes.map((p) => (p === home ? this.home : new RedisKeys(p)));
  }

  /** The shard index of an agent (stable: a hash of the name, never of the order agents were loaded in). */
  indexOf(agent: string): number {
    if (this.shards.length === 1) return 0;
    let s = this.#memo.get(agent);
    if (s === undefined) {
      if (this.#memo.size >= SHARD_MEMO_MAX) this.#memo.clear();
      this.#memo.set(agent, (s = shardIndex(agent, this.shards.length)));
    }
    return s;
  }

  /** The keys of an agent's shard. */
  of(agent: string): RedisKeys {
    return this.shards[this.indexOf(agent)]!;
  }

  /**
   * `items` grouped by the shard of `agentOf(item)` (a multi-agent script runs once per shard: its keys must share
   * one slot), shards in index order, items in the caller's order within each, with where each stood in it.
   */
  groups<T>(items: readonly T[], agentOf: (item: T) => string): Array<ShardGroup<T>> {
    // One shard: no hashing, one group (the layout of a deployment that never configured shards).
    if (this.shards.length === 1) return items.length ? [{ keys: this.shards[0]!, items: [...items], at: items.map((_, i) => i) }] : [];
    const groups = new Map<number, ShardGroup<T>>();
    items.forEach((item, i) => {
      const s = this.indexOf(agentOf(item));
      let g = groups.get(s);
      if (!g) groups.set(s, (g = { keys: this.shards[s]!, items: [], at: [] }));
      g.items.push(item);
      g.at.push(i);
    });
    return [...groups].sort(([a], [b]) => a - b).map(([, g]) => g);
  }

  /** Agents grouped by shard (see groups). */
  byShard(agents: readonly string[]): Array<ShardGroup<string>> {
    return this.groups(agents, (a) => a);
  }

  /** groups, each shard's items cut in pages of at most `size`: a command per page (redis/agent-pages.ts). */
  groupsInPages<T>(items: readonly T[], agentOf: (item: T) => string, size: number): Array<ShardGroup<T>> {
    return this.groups(items, agentOf).flatMap((g) => pagesOf(g.items, size).map((p) => ({ keys: g.keys, items: p.items, at: g.at.slice(p.first, p.first + p.items.length) })));
  }

  /** byShard in pages (see groupsInPages). */
  byShardInPages(agents: readonly string[], size: number): Array<ShardGroup<string>> {
    return this.groupsInPages(agents, (a) => a, size);
  }
}

/** A store's layout from what it was given. */
export function keyLayout(space: KeySpace): KeyLayout {
  return typeof space === 'string' ? new KeyLayout(space, [space]) : space;
}

/** The shard of an agent among `count`: the first four bytes of the name's SHA-1, modulo the count. */
export function shardIndex(agent: string, count: number): number {
  if (count <= 1) return 0;
  return createHash('sha1').update(agent).digest().readUInt32BE(0) % count;
}

/**
 * The prefixes of `count` shards under a home prefix (as configured, already hash-tagged on a cluster). One shard
 * is the home prefix itself. More: `<base>:s<i>`, and on a cluster `{<base>:s<i>}` or, where that tag's slot falls
 * outside the shard's share of the slot space, the first `{<base>:s<i>:<k>}` whose slot falls inside it, so that
 * shards land on different masters of a cluster whose slots are split evenly (as `redis-cli --cluster create` does).
 */
export function shardPrefixes(home: string, count: number, cluster: boolean): string[] {
  if (count <= 1) return [home];
  const tag = /\{([^}]+)\}/.exec(home);
  if (!cluster || !tag) return Array.from({ length: count }, (_, i) => `${home}:s${i}`);
  const base = tag[1]!;
  return Array.from({ length: count }, (_, i) => {
    const lo = Math.floor((i * CLUSTER_SLOTS) / count);
    const hi = Math.floor(((i + 1) * CLUSTER_SLOTS) / count);
    const inShare = (t: string): boolean => {
      const s = clusterSlot(t);
      return s >= lo && s < hi;
    };
    let name = `${base}:s${i}`;
    for (let k = 0; !inShare(name); k++) name = `${base}:s${i}:${k}`;
    return `{${name}}`;
  });
}

/** The layout of a daemon's Redis settings. */
export function layoutOf(redis: { prefix: string; shards?: number; cluster?: unknown }): KeyLayout {
  return new KeyLayout(redis.prefix, shardPrefixes(redis.prefix, redis.shards ?? 1, redis.cluster !== undefined));
}
