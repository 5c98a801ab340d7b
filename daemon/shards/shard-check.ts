// The shard count a daemon starts with must be the one the fleet's keys were laid out for: a daemon that looked
// for agents' keys under the wrong prefixes would find no pending work and start new state beside the old. The count
// is recorded at the HOME key `shardCount` (absent: one shard, the layout of every deployment before shards); while
// `warren shards migrate` runs it holds "<from>-><to>", and no daemon starts until the migration has finished.
import type { KeyLayout } from '../../redis/key-layout.ts';
import type { RedisClient } from '../../redis/scripts.ts';

/** What `shardCount` holds: a count, or a migration under way. */
export type ShardRecord = { count: number } | { migrating: { from: number; to: number } };

/** `shardCount`'s value, or undefined when it holds something else (never written by warren). */
export function parseShardRecord(value: string): ShardRecord | undefined {
  const n = /^(\d+)$/.exec(value);
  if (n) return { count: Number(n[1]) };
  const m = /^(\d+)->(\d+)$/.exec(value);
  if (m) return { migrating: { from: Number(m[1]), to: Number(m[2]) } };
  return undefined;
}

export function formatShardRecord(r: ShardRecord): string {
  return 'count' in r ? String(r.count) : `${r.migrating.from}->${r.migrating.to}`;
}

/** The daemon was configured for another shard count than the keys were laid out for, or a migration is unfinished. */
export class ShardCountMismatch extends Error {
  override readonly name = 'ShardCountMismatch';
  /** As recorded (a count, or the migration under way); undefined when the record is unreadable. */
  readonly recorded: ShardRecord | undefined;
  readonly configured: number;
  constructor(recorded: ShardRecord | undefined, configured: number, raw?: string) {
    const fix = 'stop every daemon of this Redis and prefix, then run `warren shards migrate` (docs/architecture.md#shards)';
    super(
      recorded === undefined
        ? `the Redis shard count record holds "${raw ?? ''}", not a count; redis.shards is ${configured}: ${fix}`
        : 'migrating' in recorded
          ? `a migration from ${recorded.migrating.from} to ${recorded.migrating.to} shards did not finish (redis.shards is ${configured}): ${fix} to finish it`
          : `the Redis keys are laid out for ${recorded.count} shard${recorded.count === 1 ? '' : 's'} but redis.shards is ${configured}: ${fix}`,
    );
    this.recorded = recorded;
    this.configured = configured;
  }
}

export type ShardCheck = { verdict: 'fine'; count: number } | { verdict: 'fresh'; count: number };

export type ShardDecision = { verdict: 'fine' } | { verdict: 'record'; count: number } | { verdict: 'look' } | { verdict: 'mismatch'; error: ShardCountMismatch };

/**
 * The decision (pure). `recorded`: the raw record (null: none). `oneShardHasState`: undefined until looked at;
 * asked for (`look`) only when nothing is recorded and more than one shard is configured.
 */
export function decideShardLayout(recorded: string | null, configured: number, oneShardHasState?: boolean): ShardDecision {
  if (recorded === null) {
    if (configured === 1) return { verdict: 'fine' }; // the layout of every deployment before shards: nothing to record
    if (oneShardHasState === undefined) return { verdict: 'look' };
    return oneShardHasState ? { verdict: 'mismatch', error: new ShardCountMismatch({ count: 1 }, configured) } : { verdict: 'record', count: configured };
  }
  const r = parseShardRecord(recorded);
  if (r && 'count' in r && r.count === configured) return { verdict: 'fine' };
  return { verdict: 'mismatch', error: new ShardCountMismatch(r, configured, recorded) };
}

/**
 * Keys that exist in any fleet that ever ran under the one-shard layout (the home prefix): its BullMQ queue's meta and
 * job counter, the agents' last activations, agents with tasks, and the records.
 */
export function oneShardTellingKeys(layout: KeyLayout): string[] {
  const h = layout.home;
  return [`${h.prefix}:activations:meta`, `${h.prefix}:activations:id`, h.agentLastActivated, h.agentsWithTasks, h.allActivationRecords, h.allHeldRecords];
}

/** At daemon start: throws ShardCountMismatch when the configured layout is not the keys' one; records a fresh one. */
export async function checkShardLayout(redis: RedisClient, layout: KeyLayout): Promise<ShardCheck> {
  const configured = layout.shards.length;
  for (let round = 0; ; round++) {
    const recorded = await redis.get(layout.home.shardCount);
    let d = decideShardLayout(recorded, configured);
    // Home keys share the home prefix's hash tag on a cluster: one EXISTS asks them all.
    if (d.verdict === 'look') d = decideShardLayout(recorded, configured, (await redis.exists(...oneShardTellingKeys(layout))) > 0);
    if (d.verdict === 'fine') return { verdict: 'fine', count: configured };
    if (d.verdict === 'mismatch') throw d.error;
    if (d.verdict === 'look') throw new Error('unreachable: the shard decision asked to look twice');
    // Another daemon starting at the same time may record first: then its record is judged, once.
    if ((await redis.set(layout.home.shardCount, String(d.count), 'NX')) === 'OK') return { verdict: 'fresh', count: d.count };
    if (round > 0) throw new Error(`the shard count record ${layout.home.shardCount} changed twice while this daemon started`);
  }
}
