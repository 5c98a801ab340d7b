// `warren shards status` and `warren shards migrate`: where the fleet's Redis keys are laid out, and moving them to
// the configured `redis.shards` while every daemon is stopped (docs/architecture.md#shards).
import { InvalidArgumentError, type Command } from 'commander';
import { loadWarrenConfig } from '../../services/config.ts';
import { createLogger } from '../logger.ts';
import type { MigrationReport, MigrationTarget } from '../shards/shard-migration.ts';
import type { ShardStatus } from '../shards/shard-status.ts';

/** `warren shards status`' lines (pure). */
export function shardStatusText(s: ShardStatus): string {
  const r = s.recorded;
  const recorded = r === undefined ? 'unreadable' : 'count' in r ? `${r.count}` : `a migration from ${r.migrating.from} to ${r.migrating.to} that did not finish`;
  const lines = [`recorded: ${recorded}`, `configured (redis.shards): ${s.configured}`];
  lines.push(
    s.verdict === 'fine'
      ? 'a daemon starts: the keys are laid out for the configured count'
      : s.verdict === 'fresh'
        ? 'a daemon starts: nothing is laid out yet, the configured count will be recorded'
        : 'a daemon refuses to start: stop every daemon and run `warren shards migrate`',
  );
  for (const x of s.shards) lines.push(`  ${x.layout} shard ${x.index}  ${x.prefix}  ${x.pendingJobs} pending job${x.pendingJobs === 1 ? '' : 's'}${x.lease ? '  lease held (a scheduler runs)' : ''}`);
  return `${lines.join('\n')}\n`;
}

/** `warren shards migrate`' lines (pure). */
export function migrationText(r: MigrationReport): string {
  if (r.plan.verdict === 'noop') return `nothing to migrate: the keys are laid out for ${r.plan.count} shard${r.plan.count === 1 ? '' : 's'}, as configured\n`;
  const lines = [
    `moved ${r.jobs} pending job${r.jobs === 1 ? '' : 's'} to their agents' new shard queues${r.absorbed ? ` (${r.absorbed} more absorbed by an agent's job already there)` : ''}`,
    `moved ${r.keys} key${r.keys === 1 ? '' : 's'}, ${r.fields} hash field${r.fields === 1 ? '' : 's'}, ${r.members} set member${r.members === 1 ? '' : 's'}`,
    `merged ${r.records} record${r.records === 1 ? '' : 's'} into the new shards' record lists`,
  ];
  if (r.queuesRemoved.length) lines.push(`removed the emptied queue${r.queuesRemoved.length === 1 ? '' : 's'} of ${r.queuesRemoved.join(', ')}`);
  if (r.dropped) lines.push(`removed ${r.dropped} key${r.dropped === 1 ? '' : 's'} of dropped shards (hold versions)`);
  if (r.jobsLeft) lines.push(`left ${r.jobsLeft} job${r.jobsLeft === 1 ? '' : 's'} that name no agent in ${r.jobsLeft === 1 ? 'its' : 'their'} queue`);
  if (r.unknown.length) lines.push(`left ${r.unknown.length} key${r.unknown.length === 1 ? '' : 's'} warren does not make: ${r.unknown.slice(0, 5).join(', ')}${r.unknown.length > 5 ? ', …' : ''}`);
  lines.push(`the keys are laid out for ${r.plan.to} shard${r.plan.to === 1 ? '' : 's'} now: start the daemons`);
  return `${lines.join('\n')}\n`;
}

function parseShards(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a shard count, 1 or more');
  return n;
}

export function registerShardsCommand(program: Command): void {
  const shards = program.command('shards').description('the Redis shards the fleet is spread over (redis.shards): where the keys are, and moving them');
  shards
    .command('status')
    .description('the shard count the keys are laid out for, the configured one, and each shard\'s pending jobs')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('--json', 'as JSON')
    .action(async (opts: { config: string; json?: boolean }) => {
      await withTarget(opts.config, undefined, async (t) => {
        const { shardStatus } = await import('../shards/shard-status.ts');
        const s = await shardStatus(t);
        process.stdout.write(opts.json ? `${JSON.stringify(s, null, 2)}\n` : shardStatusText(s));
      });
    });
  shards
    .command('migrate')
    .description('move the keys and pending jobs to the configured redis.shards (every daemon stopped first); run again to finish an interrupted one')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('--to <count>', 'the shard count to move to (default: redis.shards)', parseShards)
    .option('--force', 'move even though a scheduler lease or workers are present (left over from daemons that are gone)')
    .action(async (opts: { config: string; to?: number; force?: boolean }) => {
      await withTarget(opts.config, opts.to, async (t) => {
        const { migrateShards } = await import('../shards/shard-migration.ts');
        const r = await migrateShards({ ...t, logger: createLogger(), force: opts.force === true, say: (line) => process.stdout.write(`${line}\n`) });
        process.stdout.write(migrationText(r));
      });
    });
}

async function withTarget(configFile: string, to: number | undefined, use: (t: MigrationTarget) => Promise<void>): Promise<void> {
  const config = loadWarrenConfig(configFile);
  const { openServices } = await import('../../services/composition.ts');
  const services = await openServices(config, process.env, { name: 'ops' });
  try {
    await use({ redis: await services.redis(), prefix: config.redis.prefix, cluster: config.redis.cluster !== undefined, shards: to ?? config.redis.shards });
  } finally {
    await services.close();
  }
}
