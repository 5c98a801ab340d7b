// `warren shards status`: the shard count the keys are laid out for, the configured one, and each shard's pending
// jobs and lease, so an operator sees whether a daemon would start and where the work is.
import { layoutOf } from '../../redis/key-layout.ts';
import { RedisKeys } from '../../redis/keys.ts';
import { openQueueReader } from './queue-reader.ts';
import { decideShardLayout, oneShardTellingKeys, parseShardRecord, type ShardRecord } from './shard-check.ts';
import type { MigrationTarget } from './shard-migration.ts';

export interface ShardStatus {
  /** As recorded; `{ count: 1 }` when nothing is (the layout before shards); undefined when unreadable. */
  recorded: ShardRecord | undefined;
  configured: number;
  /** Whether a daemon with the configured count starts (`fresh`: nothing recorded and no one-shard state yet). */
  verdict: 'fine' | 'fresh' | 'migrate';
  /** The shards of the recorded layout (and of the configured one, when it differs), with what they hold. */
  shards: Array<{ layout: 'recorded' | 'configured'; index: number; prefix: string; pendingJobs: number; lease: boolean }>;
}

export async function shardStatus(t: MigrationTarget): Promise<ShardStatus> {
  const home = new RedisKeys(t.prefix);
  const raw = await t.redis.get(home.shardCount);
  const recorded = raw === null ? { count: 1 } : parseShardRecord(raw);
  const configured = layoutOf({ prefix: t.prefix, shards: t.shards, ...(t.cluster ? { cluster: true } : {}) });
  let d = decideShardLayout(raw, t.shards);
  if (d.verdict === 'look') d = decideShardLayout(raw, t.shards, (await t.redis.exists(...oneShardTellingKeys(configured))) > 0);
  const verdict = d.verdict === 'fine' ? 'fine' : d.verdict === 'record' ? 'fresh' : 'migrate';
  const counts: Array<['recorded' | 'configured', number]> = [];
  if (recorded && 'count' in recorded) counts.push(['recorded', recorded.count]);
  else if (recorded) counts.push(['recorded', recorded.migrating.from]);
  if (!counts.some(([, n]) => n === t.shards)) counts.push(['configured', t.shards]);
  const shards: ShardStatus['shards'] = [];
  for (const [layout, n] of counts) {
    const l = layoutOf({ prefix: t.prefix, shards: n, ...(t.cluster ? { cluster: true } : {}) });
    for (const [index, k] of l.shards.entries()) {
      const q = openQueueReader(t.redis, k.prefix);
      try {
        const c = await q.getJobCounts('wait', 'prioritized', 'delayed', 'active');
        const pendingJobs = Object.values(c).reduce((sum, n) => sum + n, 0);
        shards.push({ layout, index, prefix: k.prefix, pendingJobs, lease: (await t.redis.exists(k.leader)) === 1 });
      } finally {
        await q.close();
      }
    }
  }
  return { recorded, configured: t.shards, verdict, shards };
}
