// `warren shards migrate`: moves a stopped fleet's Redis state from the shard count its keys were laid out for to
// the configured one (issue 32: no pending work lost). What moves, key by key, is redis/key-kinds.ts: an agent's
// own keys (DUMP/RESTORE with their TTL, then DEL: RENAME cannot cross cluster slots), the fields of per-shard hashes
// and the members of per-shard sets that name agents, the shards' lists of every agent's records (merged by each
// record's agent), and BullMQ's pending jobs (enqueued again on the agent's new shard queue by the producer itself,
// then removed from the old queue). The record says "<from>-><to>" from the first write to the last, so a run that
// was interrupted is finished by running it again; every step is safe to repeat.
import { Cluster, type Redis } from 'ioredis';
import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';
import { ActivationJobSchema, PRIORITY, type ActivationJob } from '../../scheduler/activation-job.ts';
import { ActivationQueue } from '../../scheduler/activation-queue.ts';
import { layoutOf, MAX_SHARDS, type KeyLayout } from '../../redis/key-layout.ts';
import { fieldAgent, keyKind } from '../../redis/key-kinds.ts';
import { RedisKeys } from '../../redis/keys.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import { openQueueReader } from './queue-reader.ts';
import { formatShardRecord, parseShardRecord } from './shard-check.ts';

/**
 * The job states that are pending work (an `active` job of a stopped daemon is a stalled one: pending too). A paused
 * queue's jobs are `wait` jobs in BullMQ 6 (it has no `paused` list).
 */
const PENDING_STATES = ['wait', 'prioritized', 'delayed', 'active'] as const;

/** Where a Redis and prefix stand: what the keys were laid out for, and what is configured. */
export interface MigrationTarget {
  redis: RedisClient;
  /** The home prefix as keys are made with it (config.redis.prefix: already a hash tag on a cluster). */
  prefix: string;
  cluster: boolean;
  /** The configured count (redis.shards). */
  shards: number;
}

export type MigrationPlan = { verdict: 'noop'; count: number } | { verdict: 'migrate'; from: number; to: number; resumed: boolean };

/** A daemon (a scheduler's lease, or a worker on a queue) uses the keys: they must not move under it. */
export class DaemonRunning extends Error {
  override readonly name = 'DaemonRunning';
  readonly seen: string[];
  constructor(seen: string[]) {
    super(`a daemon is running on this Redis and prefix (${seen.join('; ')}): stop every daemon first (or pass --force if these are left over from one that is gone)`);
    this.seen = seen;
  }
}

/** The shard count record or the configured count cannot be migrated between as asked. */
export class ShardMigrationRefused extends Error {
  override readonly name = 'ShardMigrationRefused';
}

/** What to do (pure): `recorded` is the shard count record's raw value (null: none, one shard). */
export function migrationPlan(recorded: string | null, configured: number): MigrationPlan {
  if (!Number.isInteger(configured) || configured < 1 || configured > MAX_SHARDS) throw new ShardMigrationRefused(`redis.shards must be a whole number from 1 to ${MAX_SHARDS}, got ${configured}`);
  if (recorded === null) return configured === 1 ? { verdict: 'noop', count: 1 } : { verdict: 'migrate', from: 1, to: configured, resumed: false };
  const r = parseShardRecord(recorded);
  if (!r) throw new ShardMigrationRefused(`the shard count record holds "${recorded}", which warren never writes: set it to the count the keys are laid out for (e.g. 1) and run again`);
  if ('count' in r) return r.count === configured ? { verdict: 'noop', count: configured } : { verdict: 'migrate', from: r.count, to: configured, resumed: false };
  const { from, to } = r.migrating;
  if (to !== configured) throw new ShardMigrationRefused(`a migration from ${from} to ${to} shards did not finish: set redis.shards to ${to} and run \`warren shards migrate\` again to finish it, then migrate to ${configured}`);
  return { verdict: 'migrate', from, to, resumed: true };
}

export interface MigrationReport {
  plan: MigrationPlan;
  /** Pending jobs enqueued again on another shard's queue (and removed from their old one). */
  jobs: number;
  /** Jobs an agent's new queue already had one pending for: they were absorbed by it, as an enqueue would be. */
  absorbed: number;
  /** Whole keys moved. */
  keys: number;
  /** Hash fields moved. */
  fields: number;
  /** Set members moved. */
  members: number;
  /** Records in the merged record lists. */
  records: number;
  /** Keys of dropped shards removed (their lease and hold version). */
  dropped: number;
  /** Old queues no shard uses any more, emptied (their finished jobs' history goes with them). */
  queuesRemoved: string[];
  /** Keys under a shard's prefix that no member of RedisKeys makes: left where they are. */
  unknown: string[];
  /** Jobs without an agent (not warren's): left in their queue. */
  jobsLeft: number;
}

export interface MigrationOptions extends MigrationTarget {
  logger: Logger;
  /** Move even with a lease or workers present (left over from daemons that are gone), and take over their locks. */
  force?: boolean;
  /** Progress lines. */
  say?: (line: string) => void;
}

/** The layout of `count` shards under the target's home prefix. */
function layoutFor(t: MigrationTarget, count: number): KeyLayout {
  return layoutOf({ prefix: t.prefix, shards: count, ...(t.cluster ? { cluster: true } : {}) });
}

/** Moves the fleet's keys to the configured shard count; a no-op when they are laid out for it already. */
export async function migrateShards(opts: MigrationOptions): Promise<MigrationReport> {
  const { redis } = opts;
  const say = opts.say ?? ((): void => {});
  const home = new RedisKeys(opts.prefix);
  const plan = migrationPlan(await redis.get(home.shardCount), opts.shards);
  const report: MigrationReport = { plan, jobs: 0, absorbed: 0, keys: 0, fields: 0, members: 0, records: 0, dropped: 0, queuesRemoved: [], unknown: [], jobsLeft: 0 };
  if (plan.verdict === 'noop') return report;

  const from = layoutFor(opts, plan.from);
  const to = layoutFor(opts, plan.to);
  // The producer of the new layout (each agent's job to its shard's queue); readers (which write nothing) for every
  // queue looked at.
  let producer: ActivationQueue | undefined;
  const readers = new Map<string, Queue<ActivationJob>>();
  const queues: Queues = {
    producer: () => (producer ??= new ActivationQueue(redis, { prefix: to, logger: opts.logger })),
    reader: (prefix) => {
      let q = readers.get(prefix);
      if (!q) readers.set(prefix, (q = openQueueReader(redis, prefix)));
      return q;
    },
  };
  try {
    const prefixes = [...new Set([...from.shards, ...to.shards].map((k) => k.prefix))];
    if (!opts.force) {
      const seen = await daemonsSeen(redis, from, prefixes, queues);
      if (seen.length) throw new DaemonRunning(seen);
    }
    await redis.set(home.shardCount, formatShardRecord({ migrating: { from: plan.from, to: plan.to } }));
    say(`${plan.resumed ? 'resuming the migration' : 'migrating'} from ${plan.from} to ${plan.to} shard${plan.to === 1 ? '' : 's'} (prefix ${opts.prefix})`);

    await moveJobs(redis, from, to, queues, opts.force === true, report);
    await moveKeys(redis, from, to, prefixes, report);
    await mergeRecordLists(redis, from, to, report);
    await dropOldShards(redis, from, to, queues, report);

    await redis.set(home.shardCount, formatShardRecord({ count: plan.to }));
    return report;
  } finally {
    await Promise.all([producer?.close(), ...[...readers.values()].map((q) => q.close())]);
  }
}

interface Queues {
  producer(): ActivationQueue;
  reader(prefix: string): Queue<ActivationJob>;
}

/**
 * Leases and workers on any of the prefixes' shards, and locks on the old shards' active jobs: a daemon that is
 * running, or one that stopped moments ago (its job's lock outlives it by up to the lock duration).
 */
async function daemonsSeen(redis: RedisClient, from: KeyLayout, prefixes: readonly string[], queues: Queues): Promise<string[]> {
  const seen: string[] = [];
  for (const p of prefixes) {
    const k = new RedisKeys(p);
    if ((await redis.exists(k.leader)) === 1) seen.push(`the scheduler lease ${k.leader} is held`);
    const workers = await queues.reader(p).getWorkers();
    if (workers.length) seen.push(`${workers.length} worker${workers.length === 1 ? '' : 's'} on the queue of ${p}`);
  }
  // Scheduling daemons renew their roster entry ("<until ms>|<shards>") while they run.
  for (const [token, value] of Object.entries(await redis.hgetall(from.home.schedulerRoster))) {
    if (Number(value.split('|')[0]) >= Date.now()) seen.push(`daemon ${token} is in the scheduler roster`);
  }
  for (const k of from.shards) {
    for (const job of await queues.reader(k.prefix).getActive(0, -1)) {
      if ((await redis.exists(`${k.dedup('').jobPrefix}${job.id}:lock`)) === 1) seen.push(`job ${job.id} of agent ${String(job.data.agent)} is locked by a worker`);
    }
  }
  return seen;
}

/** The pending jobs of the old shards' queues whose agents belong to another shard now, enqueued there, then removed. */
async function moveJobs(redis: RedisClient, from: KeyLayout, to: KeyLayout, queues: Queues, force: boolean, report: MigrationReport): Promise<void> {
  for (const source of from.shards) {
    const old = queues.reader(source.prefix);
    const pending: Array<{ job: Job<ActivationJob>; data: ActivationJob; active: boolean }> = [];
    for (const state of PENDING_STATES) {
      for (const job of (await old.getJobs([state], 0, -1)) as Array<Job<ActivationJob> | undefined>) {
        if (!job) continue; // removed between the listing and the read
        const data = ActivationJobSchema.safeParse(job.data);
        if (!data.success) {
          report.jobsLeft++;
          continue;
        }
        if (to.of(data.data.agent).prefix !== source.prefix) pending.push({ job, data: data.data, active: state === 'active' });
      }
    }
    // The highest priority first: the new queue keeps the first job of an agent and absorbs the rest, as it would.
    pending.sort((a, b) => PRIORITY[a.data.trigger] - PRIORITY[b.data.trigger]);
    for (const { job, data, active } of pending) {
      const target = to.of(data.agent);
      const follow = active ? await followUpOf(redis, source, data.agent) : undefined;
      for (const d of follow ? [data, follow] : [data]) {
        if (await enqueueKeepingTime(redis, queues.producer(), target, d)) report.jobs++;
        else report.absorbed++;
      }
      if (active) {
        const lock = `${source.dedup(data.agent).jobPrefix}${job.id}:lock`;
        if ((await redis.exists(lock)) === 1) {
          if (!force) throw new DaemonRunning([`job ${job.id} of agent ${data.agent} is still locked by a worker (a daemon stopped less than its lock duration ago, or one still running)`]);
          await redis.del(lock);
        }
      }
      await job.remove();
    }
  }
}

/** The follow-up BullMQ keeps for after an agent's active job (keepLastIfActive), if any. */
async function followUpOf(redis: RedisClient, source: RedisKeys, agent: string): Promise<ActivationJob | undefined> {
  const data = await redis.hget(source.dedup(agent).next, 'data');
  if (data === null) return undefined;
  try {
    const parsed = ActivationJobSchema.safeParse(JSON.parse(data));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Enqueued as the producer does (ActivationQueue.enqueue: same options, same deduplication), then given back the
 * time the work was first enqueued (the intake latency reads it). Returns false when an agent's pending job there
 * absorbed it: that job then keeps the older of the two times.
 */
async function enqueueKeepingTime(redis: RedisClient, target: ActivationQueue, keys: RedisKeys, data: ActivationJob): Promise<boolean> {
  const before = await redis.get(keys.dedup(data.agent).current);
  const id = await target.enqueue(data.agent, data.trigger);
  const job = id === undefined ? undefined : ((await target.of(data.agent).getJob(id)) as Job<ActivationJob> | undefined);
  if (job && job.data.enqueuedAt > data.enqueuedAt) await job.updateData({ ...job.data, enqueuedAt: data.enqueuedAt });
  return before === null || before !== id;
}

/** Every key under `prefix` (each master of a cluster), leaving out the keys of other shards nested under it. */
async function keysUnder(redis: RedisClient, prefix: string, others: readonly string[]): Promise<string[]> {
  const match = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}:*`;
  const nodes: Redis[] = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const nested = others.filter((o) => o !== prefix && o.startsWith(`${prefix}:`)).map((o) => `${o}:`);
  const out: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      cursor = next;
      for (const k of keys) if (!nested.some((n) => k.startsWith(n))) out.push(k);
    } while (cursor !== '0');
  }
  return out.sort();
}

/** An agent's keys, per-shard hash fields and set members, from each old shard to the agent's new one. */
async function moveKeys(redis: RedisClient, from: KeyLayout, to: KeyLayout, prefixes: readonly string[], report: MigrationReport): Promise<void> {
  for (const source of from.shards) {
    const p = source.prefix;
    for (const key of await keysUnder(redis, p, prefixes)) {
      const rest = key.slice(p.length + 1);
      const kind = keyKind(rest);
      switch (kind.kind) {
        case 'agent': {
          const target = to.of(kind.agent).prefix;
          if (target !== p && (await moveKey(redis, key, `${target}:${rest}`))) report.keys++;
          break;
        }
        case 'agent-fields':
          report.fields += await moveFields(redis, key, rest, p, to, (field) => fieldAgent(kind.fields, field, p), kind.fields === 'key');
          break;
        case 'agent-members':
          report.members += await moveMembers(redis, key, rest, p, to);
          break;
        case 'unknown':
          report.unknown.push(key);
          break;
        case 'all-records': // merged after (mergeRecordLists)
        case 'bullmq': // moved as jobs (moveJobs)
        case 'stays': // HOME keys; a dropped shard's own keys go in dropOldShards
          break;
      }
    }
  }
}

/** DUMP, RESTORE with the key's remaining TTL, DEL: RENAME cannot cross cluster slots. False when the key is gone. */
async function moveKey(redis: RedisClient, key: string, target: string): Promise<boolean> {
  const [ttl, dump] = await Promise.all([redis.pttl(key), redis.dumpBuffer(key)]);
  if (dump === null || ttl === -2) return false;
  await redis.restore(target, ttl > 0 ? ttl : 0, dump, 'REPLACE');
  await redis.del(key);
  return true;
}

/** A TTL for a key that has taken fields or members from another: at least the source's, none kept when neither had one. */
async function keepTtl(redis: RedisClient, target: string, sourceTtl: number, existedBefore: boolean): Promise<void> {
  if (sourceTtl <= 0) return;
  const now = await redis.pttl(target);
  if (!existedBefore || (now > 0 && now < sourceTtl)) await redis.pexpire(target, sourceTtl);
}

async function moveFields(redis: RedisClient, key: string, rest: string, p: string, to: KeyLayout, agentOf: (field: string) => string | undefined, fieldIsKey: boolean): Promise<number> {
  const all = await redis.hgetall(key);
  const byTarget = new Map<string, Array<[string, string, string]>>();
  for (const [field, value] of Object.entries(all)) {
    const agent = agentOf(field);
    if (agent === undefined) continue;
    const target = to.of(agent).prefix;
    if (target === p) continue;
    // A field naming a key (record byte totals) names it under the new prefix.
    const moved = fieldIsKey ? `${target}${field.slice(p.length)}` : field;
    const list = byTarget.get(target) ?? [];
    list.push([field, moved, value]);
    byTarget.set(target, list);
  }
  if (!byTarget.size) return 0;
  const ttl = await redis.pttl(key);
  let n = 0;
  for (const [target, fields] of byTarget) {
    const dest = `${target}:${rest}`;
    const existed = (await redis.exists(dest)) === 1;
    await redis.hset(dest, Object.fromEntries(fields.map(([, moved, value]) => [moved, value])));
    await keepTtl(redis, dest, ttl, existed);
    await redis.hdel(key, ...fields.map(([field]) => field));
    n += fields.length;
  }
  return n;
}

async function moveMembers(redis: RedisClient, key: string, rest: string, p: string, to: KeyLayout): Promise<number> {
  const members = await redis.smembers(key);
  const ttl = await redis.pttl(key);
  let n = 0;
  for (const m of members) {
    const target = to.of(m).prefix;
    if (target === p) continue;
    const dest = `${target}:${rest}`;
    const existed = (await redis.exists(dest)) === 1;
    await redis.sadd(dest, m);
    await keepTtl(redis, dest, ttl, existed);
    await redis.srem(key, m);
    n++;
  }
  return n;
}

/** The `"started_at":"<ISO>"` a record starts with (as add-activation-record.lua reads it): records order by it. */
function startedAt(record: string): string {
  return /"started_at":"([^"]+)"/.exec(record)?.[1] ?? '';
}

function agentOfRecord(record: string): string | undefined {
  try {
    const r: unknown = JSON.parse(record);
    return typeof r === 'object' && r !== null && 'agent' in r && typeof r.agent === 'string' ? r.agent : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The shards' lists of every agent's records (activation and held), rebuilt per new shard from every list of the
 * old and new layouts: each record to its agent's shard, newest first, a record met twice (a repeated run) kept
 * once. The byte totals the retention reads are written beside them; the next record trims a list to retention.
 */
async function mergeRecordLists(redis: RedisClient, from: KeyLayout, to: KeyLayout, report: MigrationReport): Promise<void> {
  const lists: Array<(k: RedisKeys) => string> = [(k) => k.allActivationRecords, (k) => k.allHeldRecords];
  const shards = [...new Map([...from.shards, ...to.shards].map((k) => [k.prefix, k])).values()];
  for (const listOf of lists) {
    const seen = new Set<string>();
    const records: string[] = [];
    let ttl = 0;
    for (const k of shards) {
      const [items, pttl] = await Promise.all([redis.lrange(listOf(k), 0, -1), redis.pttl(listOf(k))]);
      ttl = Math.max(ttl, pttl);
      for (const r of items) {
        if (seen.has(r)) continue;
        seen.add(r);
        records.push(r);
      }
    }
    const byShard = new Map<string, string[]>(to.shards.map((k) => [k.prefix, []]));
    for (const r of records) {
      const agent = agentOfRecord(r);
      byShard.get((agent === undefined ? to.shards[0]! : to.of(agent)).prefix)!.push(r);
    }
    for (const k of to.shards) {
      // Newest first; Array.sort is stable, so records of one start keep their order.
      const items = byShard.get(k.prefix)!.sort((a, b) => (startedAt(a) < startedAt(b) ? 1 : startedAt(a) > startedAt(b) ? -1 : 0));
      const list = listOf(k);
      // One slot (the shard's tag on a cluster): the list and its byte total change together.
      const tx = redis.multi().del(list);
      if (items.length) {
        tx.rpush(list, ...items).hset(k.recordBytes, list, items.reduce((sum, r) => sum + Buffer.byteLength(r), 0));
        if (ttl > 0) tx.pexpire(list, ttl);
      } else tx.hdel(k.recordBytes, list);
      await tx.exec();
      report.records += items.length;
    }
    const kept = new Set(to.shards.map((k) => k.prefix));
    for (const k of from.shards) {
      if (kept.has(k.prefix)) continue;
      await redis.del(listOf(k));
      await redis.hdel(k.recordBytes, listOf(k));
    }
  }
}

/** The old shards no shard of the new layout keeps: their lease and hold version go, and their queues once empty. */
async function dropOldShards(redis: RedisClient, from: KeyLayout, to: KeyLayout, queues: Queues, report: MigrationReport): Promise<void> {
  const kept = new Set(to.shards.map((k) => k.prefix));
  for (const k of from.shards) {
    if (kept.has(k.prefix)) continue;
    for (const key of [k.leader, k.inboxHoldVersion]) report.dropped += await redis.del(key);
    const q = queues.reader(k.prefix);
    const counts = await q.getJobCounts(...PENDING_STATES);
    if (Object.values(counts).some((n) => n > 0)) continue; // jobs that are not warren's: left with their queue
    if ((await redis.exists(`${k.prefix}:activations:meta`, `${k.prefix}:activations:id`)) === 0) continue;
    await q.obliterate({ force: true });
    report.queuesRemoved.push(k.prefix);
  }
}
