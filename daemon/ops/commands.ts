// The operations commands: status, agents, logs, pause, resume. They talk to Redis, the hub and the store
// directly (opened as services/composition.ts opens them for the `ops` role), so they work from any machine
// sharing them, with or without a daemon running there.
import type { Command } from 'commander';
import type { RedisClient } from '../../redis/scripts.ts';
import { pino } from 'pino';
import type { LoadResult } from '../../store/definition.ts';
import type { QueueCounts } from '../../scheduler/activation-queue.ts';
import type { ActivationRecord } from '../../activation/activation-records.ts';
import type { AgentStatuses, StatusSources } from './agent-statuses.ts';
import type { A2ATaskSummary } from '../a2a/a2a-task-store.ts';
import type { A2ATaskEntry } from '../a2a/a2a-task-view.ts';
import type { WarrenConfig } from '../../services/config.ts';
import type { OpsServices } from '../../services/composition.ts';
import { loadWarrenConfig } from '../../services/config.ts';
import { registerApprovalsCommand } from './approvals-command.ts';
import { layoutOf } from '../../redis/key-layout.ts';
import type { StatusReport } from './status.ts';

interface Common {
  config: string;
}

/** The newest A2A tasks `warren status` lists. */
const STATUS_A2A_TASKS = 10;

/** The ops commands' services (services/composition.ts, role `ops`): Redis, agent state, the store, readers. */
async function opsServices(config: WarrenConfig): Promise<OpsServices> {
  const { openServices } = await import('../../services/composition.ts');
  return openServices(config, process.env, { name: 'ops' });
}

/**
 * What `status` and `agents` read beside Redis: the memory store when an agent remembers, the hub's budget when
 * asked; and each shard's scheduler leader (null: none).
 */
async function readStatuses(services: OpsServices, config: WarrenConfig, defs: LoadResult, opts: { budget: boolean }): Promise<AgentStatuses & { leaders: Array<string | null> }> {
  const { readAgentStatuses } = await import('./agent-statuses.ts');
  const { LeaderLease } = await import('../../scheduler/lease.ts');
  const { withoutPublishedDefinitions } = await import('./loaded-definitions.ts');
  const remembers = defs.agents.some((d) => d.config.memory?.enabled);
  const redis = await services.redis();
  const layout = layoutOf(config.redis);
  const src: StatusSources = {
    redis,
    prefix: layout,
    minStalenessMs: config.scheduler.min_staleness,
    memory: remembers ? await services.memoryReader() : undefined,
    budget: opts.budget ? services.budgetHub : undefined,
  };
  const [statuses, leaders] = await Promise.all([readAgentStatuses(src, defs.agents), Promise.all(layout.shards.map((s) => new LeaderLease(redis, { prefix: s.prefix, ttlMs: config.scheduler.lease_ttl }).holder()))]);
  // What a daemon published is what runs only while one runs: every running daemon leads or renews a shard's lease,
  // so with no leader anywhere the publication is the last daemon's, and drift flagged against it would mislead.
  return { ...(leaders.every((l) => l === null) ? withoutPublishedDefinitions(statuses) : statuses), leaders };
}

export function registerOpsCommands(program: Command): void {
  program
    .command('status')
    .description('Redis, hub, leader, queue and every agent: state, last outcome, next run, usage today')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('--json', 'print the report as JSON')
    .action(async (opts: Common & { json?: boolean }) => {
      const config = loadWarrenConfig(opts.config);
      const { formatStatus, hubHealthy, probe } = await import('./status.ts');
      const { HubClient } = await import('../../hub-client/client.ts');
      const { describeRedis } = await import('../../redis/connect.ts');
      const hub = new HubClient({ baseUrl: config.hub.url, apiKey: '', logger: pino({ level: 'silent' }) });
      const services = await opsServices(config);
      try {
        const defs = await services.definitions();
        const redisProbe = await probe(async () => void (await services.redis(2_000)));
        const hubProbe = await probe(() => hubHealthy(hub));
        let leader: string | null = null;
        let shards: StatusReport['shards'];
        let a2aTasks: A2ATaskSummary[] | undefined;
        let fleet: Omit<AgentStatuses, 'queue'> & { queue: QueueCounts | null } = { agents: [], running: [], queue: null, fleetBudget: null, loaded: undefined };
        if (redisProbe.ok) {
          const { leaders, ...statuses } = await readStatuses(services, config, defs, { budget: hubProbe.ok });
          fleet = statuses;
          const layout = layoutOf(config.redis);
          leader = leaders[0] ?? null;
          if (layout.shards.length > 1) shards = layout.shards.map((s, i) => ({ shard: i, prefix: s.prefix, leader: leaders[i] ?? null, agents: defs.agents.filter((d) => layout.indexOf(d.name) === i).length }));
          const { RedisA2ATaskStore } = await import('../a2a/a2a-task-store.ts');
          a2aTasks = await new RedisA2ATaskStore(await services.redis(), config.redis.prefix).recent(STATUS_A2A_TASKS);
        }
        const { agents, running, queue, fleetBudget, loaded } = fleet;
        const broken = new Set(defs.problems.filter((p) => p.severity === 'error').map((p) => p.file)).size;
        // What the daemon runs that the folder no longer defines validly (deleted, or broken since).
        const runsWithoutDefinition = [...(loaded?.keys() ?? [])].filter((name) => !defs.agents.some((d) => d.name === name));
        const report = {
          redis: { url: describeRedis(config.redis), ...redisProbe },
          hub: { url: config.hub.url, ...hubProbe },
          leader,
          ...(shards ? { shards } : {}),
          queue,
          running,
          agents,
          defined: defs.agents.length,
          broken,
          fleet_budget: fleetBudget,
          definitions_published: loaded !== undefined,
          runs_without_definition: runsWithoutDefinition,
          a2a_tasks: a2aTasks,
        };
        console.log(opts.json ? JSON.stringify(report, null, 2) : formatStatus(report, new Date()));
        // Budgets show `-` without the hub's admin key: say why, and what to set.
        if (!opts.json && !services.budgetHub && services.noBudget && agents.length) console.log(`\nbudget: - ${services.noBudget}`);
        process.exitCode = redisProbe.ok ? 0 : 1;
      } finally {
        await services.close();
      }
    });

  program
    .command('agents')
    .description('the defined agents: type, model, grants, discovery, paused')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('--json', 'print as JSON')
    .action(async (opts: Common & { json?: boolean }) => {
      const config = loadWarrenConfig(opts.config);
      const services = await opsServices(config);
      const defs = await services.definitions();
      // Without Redis the definitions are still shown; their state is unknown (null).
      const statuses = await services
        .redis()
        .then(
          () => readStatuses(services, config, defs, { budget: false }),
          () => undefined,
        )
        .finally(() => services.close());
      const byName = new Map(statuses?.agents.map((a) => [a.name, a]));
      const rows = defs.agents.map((d) => ({
        name: d.name,
        type: d.config.type,
        model: d.config.brain.model ?? null,
        grants: d.config.capabilities.grants,
        discovery: d.config.behavior.discovery.enabled,
        paused: byName.get(d.name)?.paused ?? null,
        state: byName.get(d.name)?.state ?? null,
        state_detail: byName.get(d.name)?.state_detail ?? null,
        definition: byName.get(d.name)?.definition ?? null,
      }));
      if (opts.json) console.log(JSON.stringify(rows, null, 2));
      else {
        const { columns, stateCell } = await import('./status.ts');
        const table = rows.map((r) => [r.name, `${r.state ? stateCell({ state: r.state, state_detail: r.state_detail }) : 'unknown (redis down)'}${r.definition?.differs_on_disk ? ' DIFFERS ON DISK' : ''}`, r.type, r.model ?? '-', `discovery ${r.discovery ? 'on' : 'off'}`, r.grants.join(' ')]);
        for (const line of columns([['AGENT', 'STATE', 'TYPE', 'MODEL', 'DISCOVERY', 'GRANTS'], ...table])) console.log(line);
        for (const r of rows) if (r.state === 'skipped' || r.state === 'name_taken') console.log(`\n${r.name} is not run: ${r.state_detail}`);
        const { driftNotice } = await import('./loaded-definitions.ts');
        const drift = rows.flatMap((r) => driftNotice(r.name, r.definition, statuses?.loaded !== undefined) ?? []);
        if (drift.length) console.log(['', ...drift].join('\n'));
      }
      const errors = defs.problems.filter((p) => p.severity === 'error');
      if (errors.length) console.error(`${new Set(errors.map((p) => p.file)).size} definition(s) with errors are left out; run \`warren validate\``);
    });

  program
    .command('logs')
    .description('recent activation records, oldest first; --follow prints new ones as they finish')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('-a, --agent <name>', 'only this agent')
    .option('-n, --lines <n>', 'how many recent records', (v) => Number.parseInt(v, 10), 20)
    .option('-f, --follow', 'keep printing records as activations finish')
    .option('--events', 'print each activation’s events under it')
    .option('--json', 'one JSON record per line')
    .action(async (opts: Common & { agent?: string; lines: number; follow?: boolean; events?: boolean; json?: boolean }) => {
      const config = loadWarrenConfig(opts.config);
      const { ActivationRecords } = await import('../../activation/activation-records.ts');
      const { a2aTaskEnded, formatA2ATaskLine, formatEvents, formatRecordLine } = await import('./logs.ts');
      const { RedisA2ATaskStore } = await import('../a2a/a2a-task-store.ts');
      const { readA2ATaskEntry } = await import('../a2a/a2a-task-view.ts');
      const { RedisKeys } = await import('../../redis/keys.ts');
      const services = await opsServices(config);
      const redis = await services.redis();
      const records = new ActivationRecords(redis, layoutOf(config.redis));
      const a2aTasks = new RedisA2ATaskStore(redis, config.redis.prefix);
      const a2aChannel = new RedisKeys(config.redis.prefix).a2aChannel;
      const print = (r: ActivationRecord): void => {
        if (opts.json) console.log(JSON.stringify(r));
        else console.log([formatRecordLine(r), ...(opts.events ? formatEvents(r) : [])].join('\n'));
      };
      const printTask = (t: A2ATaskEntry): void => console.log(opts.json ? JSON.stringify({ a2a_task: t }) : formatA2ATaskLine(t, new Date()));
      // A served A2A task with what its status says (why it waits, was refused or failed).
      const taskEntry = async (id: string): Promise<A2ATaskEntry | undefined> => {
        const t = await readA2ATaskEntry(a2aTasks, id);
        return t && (!opts.agent || t.agent === opts.agent) ? t : undefined;
      };
      let subscriber: RedisClient | undefined;
      if (opts.follow) {
        // Subscribe before reading history so nothing finishing in between is missed.
        subscriber = redis.duplicate();
        await subscriber.subscribe(records.channel, records.heldChannel, a2aChannel);
      }
      const seen = new Set<string>();
      // The activation records, the held-mentions lines and the A2A tasks, merged in time order, the newest `lines`.
      const [done, held, served] = await Promise.all([records.recent({ agent: opts.agent, limit: opts.lines }), records.recentHeld({ agent: opts.agent, limit: opts.lines }), a2aTasks.recent(opts.agent ? 1_000 : opts.lines)]);
      const tasks = (await Promise.all(served.filter((t) => !opts.agent || t.agent === opts.agent).slice(0, opts.lines).map((t) => taskEntry(t.id)))).filter((t) => t !== undefined);
      const endOf = (r: ActivationRecord | A2ATaskEntry): number => ('updatedAt' in r ? r.updatedAt : Date.parse(r.started_at) + r.duration_ms); // records are kept as they finish
      const newest = [...done, ...held, ...tasks].sort((a, b) => endOf(b) - endOf(a)).slice(0, opts.lines);
      for (const r of newest.reverse()) {
        if ('updatedAt' in r) {
          if (a2aTaskEnded(r.state)) seen.add(`a2a:${r.id}`);
          printTask(r);
          continue;
        }
        seen.add(`${r.activation_id}:${r.attempt}`);
        print(r);
      }
      if (!subscriber) {
        await services.close();
        return;
      }
      subscriber.on('message', (channel: string, text: string) => {
        if (channel === a2aChannel) {
          // A task's news: printed once, when it has ended.
          let news: { kind?: string; taskId?: string } = {};
          try {
            news = JSON.parse(text) as typeof news;
          } catch {
            return; // a malformed announcement is not worth stopping the tail for
          }
          if (news.kind !== 'changed' || typeof news.taskId !== 'string' || seen.has(`a2a:${news.taskId}`)) return;
          const id = news.taskId;
          void taskEntry(id).then(
            (t) => {
              if (!t || !a2aTaskEnded(t.state) || seen.has(`a2a:${id}`)) return;
              seen.add(`a2a:${id}`);
              printTask(t);
            },
            () => undefined, // a task that cannot be read now is not worth stopping the tail for
          );
          return;
        }
        try {
          const r = JSON.parse(text) as ActivationRecord;
          if (opts.agent && r.agent !== opts.agent) return;
          if (seen.has(`${r.activation_id}:${r.attempt}`)) return;
          print(r);
        } catch {
          // a malformed announcement is not worth stopping the tail for
        }
      });
      const stop = (): void => {
        subscriber?.disconnect();
        void services.close().finally(() => process.exit(0));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });

  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    program
      .command(name)
      .description(paused ? 'stop scheduling an agent (queued activations are skipped) until `warren resume`' : 'schedule a paused agent again, and end a failure backoff now')
      .argument('<agent>', 'agent name')
      .option('-c, --config <file>', 'warren config file', 'warren.yaml')
      .action(async (agent: string, opts: Common) => {
        const config = loadWarrenConfig(opts.config);
        const services = await opsServices(config);
        try {
          const names = (await services.definitions()).agents.map((a) => a.name);
          if (!names.includes(agent)) throw new Error(`no agent named "${agent}" in ${config.store.path} (agents: ${names.join(', ') || 'none'})`);
          const { recordPause } = await import('./pause.ts');
          const { PauseFile } = await import('./pause-file.ts');
          const { RedisUnreachableError } = await import('../../redis/connect.ts');
          // The file first: with Redis down the decision is still kept, and the daemon applies it when it connects.
          const state = await services.agentState().catch((err: unknown) => {
            if (err instanceof RedisUnreachableError) return undefined;
            throw err;
          });
          // loadWarrenConfig always names the file (beside warren.yaml unless pauses.file says otherwise).
          const file = new PauseFile(config.pauses.file ?? 'data/pauses.json');
          await recordPause(file, state, agent, paused);
          if (!state) console.error(`redis is unreachable: recorded in ${file.path}; the daemon applies it when it connects to Redis`);
        } finally {
          await services.close();
        }
        console.log(`${agent} ${paused ? 'paused' : 'resumed'}`);
      });
  }

  registerApprovalsCommand(program);
}
