// The operations commands: status, agents, logs, pause, resume. They talk to Redis, the hub and the store
// directly, so they work from any machine sharing them, with or without a daemon running there.
import type { Command } from 'commander';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import type { LoadResult } from '../../store/definition.ts';
import type { ActivationRecord } from '../activation-records.ts';
import type { WarrenConfig } from '../config.ts';
import { loadWarrenConfig } from '../config.ts';

interface Common {
  config: string;
}

async function openRedis(config: WarrenConfig): Promise<Redis> {
  const { openCheckedRedis } = await import('../redis.ts');
  return openCheckedRedis(config.redis.url);
}

async function loadAgents(config: WarrenConfig): Promise<{ names: string[]; defs: LoadResult }> {
  const { openStore } = await import('../open-store.ts');
  const store = openStore(config.store, process.env); // the folder or the bucket warren.yaml names
  try {
    const defs = await store.load();
    return { names: defs.agents.map((a) => a.name), defs };
  } finally {
    store.close?.();
  }
}

export function registerOpsCommands(program: Command): void {
  program
    .command('status')
    .description('Redis, hub, leader, queue and every agent: state, last outcome, next run, usage today')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('--json', 'print the report as JSON')
    .action(async (opts: Common & { json?: boolean }) => {
      const config = loadWarrenConfig(opts.config);
      const { agentStatus, formatStatus, hubHealthy, probe, runningStatus } = await import('./status.ts');
      const { HubClient } = await import('../../hub-client/client.ts');
      const { redactUrl } = await import('../redis.ts');
      const hub = new HubClient({ baseUrl: config.hub.url, apiKey: '', logger: pino({ level: 'silent' }) });
      const { defs } = await loadAgents(config);
      const { assertRedisReachable, connectRedis } = await import('../redis.ts');
      const redis = connectRedis(config.redis.url, 'producer', pino({ level: 'silent' }));
      try {
        const redisProbe = await probe(() => assertRedisReachable(redis, config.redis.url, 2_000));
        const hubProbe = await probe(() => hubHealthy(hub));
        let leader: string | null = null;
        let queue = null;
        let running: ReturnType<typeof runningStatus>[] = [];
        let agents: ReturnType<typeof agentStatus>[] = [];
        if (redisProbe.ok) {
          const { AgentStateStore } = await import('../../scheduler/agent-state.ts');
          const { ActivationRecords } = await import('../activation-records.ts');
          const { ActivationQueue } = await import('../../scheduler/activation-queue.ts');
          const { LeaderLease } = await import('../../scheduler/lease.ts');
          const names = defs.agents.map((a) => a.name);
          const state = new AgentStateStore(redis, config.redis.prefix);
          const [states, daily, last, notRunnable] = await Promise.all([state.getMany(names), state.dailyMany(names), new ActivationRecords(redis, config.redis.prefix).lastOf(names), state.notRunnable(names)]);
          const q = new ActivationQueue(redis, { prefix: config.redis.prefix, logger: pino({ level: 'silent' }) });
          queue = await q.counts();
          running = (await q.running()).map(runningStatus);
          await q.close();
          leader = await new LeaderLease(redis, { prefix: config.redis.prefix, ttlMs: config.scheduler.lease_ttl }).holder();
          const now = new Date();
          agents = defs.agents.map((d) => agentStatus(d, states.get(d.name), last.get(d.name), daily.get(d.name)!, config.scheduler.min_staleness, now, notRunnable.get(d.name)));
        }
        const broken = new Set(defs.problems.filter((p) => p.severity === 'error').map((p) => p.file)).size;
        const report = { redis: { url: redactUrl(config.redis.url), ...redisProbe }, hub: { url: config.hub.url, ...hubProbe }, leader, queue, running, agents, defined: defs.agents.length, broken };
        console.log(opts.json ? JSON.stringify(report, null, 2) : formatStatus(report, new Date()));
        process.exitCode = redisProbe.ok ? 0 : 1;
      } finally {
        redis.disconnect();
      }
    });

  program
    .command('agents')
    .description('the defined agents: type, model, grants, discovery, paused')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('--json', 'print as JSON')
    .action(async (opts: Common & { json?: boolean }) => {
      const config = loadWarrenConfig(opts.config);
      const { defs } = await loadAgents(config);
      const { AgentStateStore } = await import('../../scheduler/agent-state.ts');
      const redis = await openRedis(config).catch(() => undefined);
      const states = redis ? await new AgentStateStore(redis, config.redis.prefix).getMany(defs.agents.map((a) => a.name)) : undefined;
      redis?.disconnect();
      const rows = defs.agents.map((d) => ({
        name: d.name,
        type: d.config.type,
        model: d.config.brain.model ?? null,
        grants: d.config.capabilities.grants,
        discovery: d.config.behavior.discovery.enabled,
        paused: states?.get(d.name)?.paused ?? null,
      }));
      if (opts.json) console.log(JSON.stringify(rows, null, 2));
      else for (const r of rows) console.log(`${r.name.padEnd(16)} ${r.type.padEnd(12)} ${(r.model ?? '-').padEnd(22)} discovery ${r.discovery ? 'on ' : 'off'}${r.paused ? '  PAUSED' : ''}  ${r.grants.join(' ')}`);
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
      const { ActivationRecords } = await import('../activation-records.ts');
      const { formatEvents, formatRecordLine } = await import('./logs.ts');
      const redis = await openRedis(config);
      const records = new ActivationRecords(redis, config.redis.prefix);
      const print = (r: ActivationRecord): void => {
        if (opts.json) console.log(JSON.stringify(r));
        else console.log([formatRecordLine(r), ...(opts.events ? formatEvents(r) : [])].join('\n'));
      };
      let subscriber: Redis | undefined;
      if (opts.follow) {
        // Subscribe before reading history so nothing finishing in between is missed.
        subscriber = redis.duplicate();
        await subscriber.subscribe(records.channel);
      }
      const seen = new Set<string>();
      for (const r of (await records.recent({ agent: opts.agent, limit: opts.lines })).reverse()) {
        seen.add(`${r.activation_id}:${r.attempt}`);
        print(r);
      }
      if (!subscriber) {
        redis.disconnect();
        return;
      }
      subscriber.on('message', (_channel: string, text: string) => {
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
        redis.disconnect();
        process.exit(0);
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
        const { names } = await loadAgents(config);
        if (!names.includes(agent)) throw new Error(`no agent named "${agent}" in ${config.store.path} (agents: ${names.join(', ') || 'none'})`);
        const { AgentStateStore } = await import('../../scheduler/agent-state.ts');
        const redis = await openRedis(config);
        try {
          const state = new AgentStateStore(redis, config.redis.prefix);
          await state.setPaused(agent, paused);
          if (!paused) await state.clearBackoff(agent);
        } finally {
          redis.disconnect();
        }
        console.log(`${agent} ${paused ? 'paused' : 'resumed'}`);
      });
  }
}
