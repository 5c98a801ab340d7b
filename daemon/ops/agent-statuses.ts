// Each agent's status and what runs now, read from Redis (and the memory store, and the hub's budget, when given):
// the one reading `warren status`, `warren agents`, the daemon's /metrics and the watch page share.
import type { RedisClient } from '../../redis/scripts.ts';
import { pino } from 'pino';
import { z } from 'zod';
import type { HubAdapter } from '../../hub-client/adapter.ts';
import type { MemoryStore } from '../../memory/memory-store.ts';
import { ActivationQueue, type QueueCounts } from '../../scheduler/activation-queue.ts';
import { AgentStateStore } from '../../scheduler/agent-state.ts';
import { HeldMentionStore } from '../../scheduler/held-mentions.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { ActivationRecords } from '../../activation/activation-records.ts';
import { definitionView, readLoadedDefinitions, type LoadedDefinition } from './loaded-definitions.ts';
import { readScheduleStatuses } from './schedule-status.ts';
import { agentStatus, runningStatus, type AgentBudget, type AgentMemoryFigures, type AgentStatus, type FleetBudget, type RunningStatus } from './status.ts';
import type { KeySpace } from '../../redis/key-layout.ts';

export interface StatusSources {
  redis: RedisClient;
  /** The fleet's key layout (its shards), or one prefix. */
  prefix: KeySpace;
  minStalenessMs: number;
  /** Entry counts and sizes of agents with `memory.enabled`; left out (null) without it. */
  memory?: MemoryStore;
  /** How many of the newest memory entries to include per agent (the watch page shows a few). */
  newestMemories?: number;
  /** The hub's budget per agent; left out (null) without it, or when the hub does not answer. */
  budget?: Pick<HubAdapter, 'budgetHealth'>;
  /**
   * The hash of each agent's files on disk now (undefined: missing or broken), compared with what the daemon runs;
   * by default the given definitions' own (they were read from disk: `warren status`, `warren agents`).
   */
  onDisk?: (name: string) => string | undefined;
}

export interface AgentStatuses {
  agents: AgentStatus[];
  running: RunningStatus[];
  queue: QueueCounts;
  /** The whole fleet's spend this month against the sum of the agents' monthly limits; null when the hub was not asked. */
  fleetBudget: FleetBudget | null;
  /** What the daemon last said it runs (daemon/ops/loaded-definitions.ts); undefined when no daemon said. */
  loaded: ReadonlyMap<string, LoadedDefinition> | undefined;
}

export async function readAgentStatuses(src: StatusSources, defs: readonly AgentDefinition[]): Promise<AgentStatuses> {
  const names = defs.map((a) => a.name);
  const state = new AgentStateStore(src.redis, src.prefix);
  const now = new Date();
  const [states, daily, last, notRunnable, skipped, memory, budget, loaded, held, schedules] = await Promise.all([
    state.getMany(names),
    state.dailyMany(names),
    new ActivationRecords(src.redis, src.prefix).lastOf(names),
    state.notRunnable(names),
    state.skipped(names),
    memoryFigures(src, defs),
    budgets(src, names),
    readLoadedDefinitions(src.redis, src.prefix),
    new HeldMentionStore(src.redis, src.prefix).read(names),
    readScheduleStatuses(src.redis, src.prefix, defs, now),
  ]);
  const onDisk = src.onDisk ?? ((name: string): string | undefined => defs.find((d) => d.name === name)?.hash);
  const q = new ActivationQueue(src.redis, { prefix: src.prefix, logger: pino({ level: 'silent' }), readOnly: true });
  try {
    const queue = await q.counts();
    const running = (await q.running()).map(runningStatus);
    const agents = defs.map((d) => ({
      ...agentStatus(d, states.get(d.name), last.get(d.name), daily.get(d.name)!, src.minStalenessMs, now, notRunnable.get(d.name), {
        skipped: skipped.get(d.name),
        running: running.some((r) => r.agent === d.name),
      }),
      memory: memory.get(d.name) ?? null,
      budget: budget.agents.get(d.name) ?? null,
      definition: definitionView(loaded?.get(d.name), onDisk(d.name)),
      held: held.get(d.name) ?? null,
      schedules: schedules.get(d.name) ?? [],
    }));
    return { agents, running, queue, fleetBudget: budget.fleet, loaded };
  } finally {
    await q.close();
  }
}

/** Memory figures of the agents that remember; an unreadable store leaves them all out (status still answers). */
async function memoryFigures(src: StatusSources, defs: readonly AgentDefinition[]): Promise<Map<string, AgentMemoryFigures>> {
  const out = new Map<string, AgentMemoryFigures>();
  const store = src.memory;
  const remembering = defs.filter((d) => d.config.memory?.enabled);
  if (!store || remembering.length === 0) return out;
  const newest = src.newestMemories ?? 0;
  try {
    await Promise.all(
      remembering.map(async (d) => {
        const [entries, bytes, recent] = await Promise.all([store.count(d.name), store.size(d.name), newest > 0 ? store.search(d.name, { strategy: 'recent', limit: newest }) : []]);
        out.set(d.name, { entries, bytes, newest: recent.map((r) => ({ text: r.entry.text, kind: r.entry.kind, created_at: new Date(r.entry.createdAt).toISOString() })) });
      }),
    );
  } catch {
    out.clear();
  }
  return out;
}

/** Fleets larger than this are not asked agent by agent (one request each). */
const BUDGET_ASK_LIMIT = 200;

/** The fleet's part of a budget-health answer (docs/hub-api.md §5.6): the same in every agent's answer. */
const CollectiveSchema = z.object({ total_budget_usd: z.number(), total_used_usd: z.number(), overall_health: z.string() });

async function budgets(src: StatusSources, names: readonly string[]): Promise<{ agents: Map<string, AgentBudget>; fleet: FleetBudget | null }> {
  const agents = new Map<string, AgentBudget>();
  let fleet: FleetBudget | null = null;
  const hub = src.budget;
  if (!hub || names.length > BUDGET_ASK_LIMIT) return { agents, fleet };
  await Promise.all(
    names.map(async (name) => {
      const b = await hub.budgetHealth(name, AbortSignal.timeout(2_000)).catch(() => undefined);
      if (!b) return;
      agents.set(name, { status: b.status, daily_used_usd: b.daily_used, daily_limit_usd: b.daily_limit || null, monthly_used_usd: b.monthly_used, monthly_limit_usd: b.monthly_limit || null });
      const c = CollectiveSchema.safeParse((b as { collective?: unknown }).collective);
      if (c.success) fleet = { status: c.data.overall_health, monthly_used_usd: c.data.total_used_usd, monthly_limit_usd: c.data.total_budget_usd || null };
    }),
  );
  return { agents, fleet };
}
