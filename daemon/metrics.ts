// Prometheus metrics of one warren process. Activation figures come from the activation records (one per
// finished activation, failures included); queue depth, leadership and subprocesses are read at scrape time.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueCounts } from '../scheduler/activation-queue.ts';
import type { ActivationRecord } from '../activation/activation-records.ts';
import type { AgentStateKind, AgentStatus } from './ops/status.ts';

const AGENT_STATES: readonly AgentStateKind[] = ['ready', 'running', 'paused', 'quiet_hours', 'backoff', 'failing', 'skipped', 'name_taken'];

export interface MetricsSources {
  /** Job counts per state; undefined in processes that have no queue handle. */
  queueCounts?: () => Promise<QueueCounts>;
  /** Whether this process holds the scheduler lease; undefined when it runs no scheduler. */
  isLeader?: () => boolean;
  /** Executor subprocesses (CLI agents) running right now. */
  subprocesses?: () => number;
  /** Every agent's status (daemon/ops/agent-statuses.ts, as `warren status` reads it); read once per scrape. */
  agentStatuses?: () => Promise<AgentStatus[]>;
  /** The A2A tasks kept in Redis (the last 7 days, newest first), for their count by agent and state. */
  a2aTasks?: () => Promise<Array<{ agent: string; state: string }>>;
}

/**
 * The process's own metrics (CPU, memory, GC, event loop), one set per process however many daemons it starts:
 * prom-client watches every GC and the event loop for as long as the process lives, so a set per daemon would add
 * another watcher with each start in one process (tests, benchmarks).
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'warren_process_' });
  }
  return processRegistry;
}

export class WarrenMetrics {
  readonly registry = new Registry();
  readonly #activations: Counter<'agent' | 'trigger' | 'outcome'>;
  readonly #duration: Histogram<'trigger'>;
  readonly #tokens: Counter<'agent' | 'kind'>;
  readonly #cost: Counter<'agent'>;
  readonly #lag: Histogram<'trigger'>;
  readonly #memoryEvictions: Counter<'agent'>;

  constructor(sources: MetricsSources = {}) {
    const registers = [this.registry];
    this.#activations = new Counter({ name: 'warren_activations_total', help: 'Finished activations by agent, trigger and outcome (answered, posted_by_tool, no_action, skipped, guard_stop, limit_stop, retryable_failure, terminal_failure, oversized, aborted).', labelNames: ['agent', 'trigger', 'outcome'], registers });
    this.#duration = new Histogram({
      name: 'warren_activation_duration_seconds',
      // No agent label: 12 series per agent would be ~280,000 at 10,000 agents; per-agent figures are counters.
      help: 'Wall time of finished activations, by trigger.',
      labelNames: ['trigger'],
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers,
    });
    this.#tokens = new Counter({ name: 'warren_tokens_total', help: 'Model tokens used by activations (kind: input, output, cached).', labelNames: ['agent', 'kind'], registers });
    this.#cost = new Counter({ name: 'warren_cost_usd_total', help: 'Model cost of activations in US dollars.', labelNames: ['agent'], registers });
    this.#lag = new Histogram({
      name: 'warren_scheduler_lag_seconds',
      help: 'From the scheduler enqueueing an activation to a worker starting it.',
      labelNames: ['trigger'],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers,
    });
    this.#memoryEvictions = new Counter({ name: 'warren_memory_evictions_total', help: 'Memory entries evicted because the agent held more than memory.max_size_mb.', labelNames: ['agent'], registers });
    const { queueCounts, isLeader, subprocesses } = sources;
    if (queueCounts) {
      new Gauge({
        name: 'warren_queue_jobs',
        help: 'Activation jobs by state.',
        labelNames: ['state'],
        registers,
        async collect() {
          const counts = await queueCounts();
          for (const [state, n] of Object.entries(counts) as Array<[string, number]>) this.set({ state }, n);
        },
      });
    }
    if (isLeader) {
      new Gauge({
        name: 'warren_scheduler_leader',
        help: '1 when this process holds the scheduler lease.',
        registers,
        collect() {
          this.set(isLeader() ? 1 : 0);
        },
      });
    }
    if (sources.agentStatuses) this.#agentGauges(sources.agentStatuses);
    const { a2aTasks } = sources;
    if (a2aTasks) {
      new Gauge({
        name: 'warren_a2a_tasks',
        help: 'A2A tasks kept (the last 7 days) by agent and state (submitted, working, completed, failed, canceled, rejected).',
        labelNames: ['agent', 'state'],
        registers,
        async collect() {
          this.reset();
          const counts = new Map<string, { agent: string; state: string; n: number }>();
          for (const t of await a2aTasks()) {
            const k = `${t.agent}|${t.state}`;
            const c = counts.get(k) ?? { agent: t.agent, state: t.state, n: 0 };
            c.n++;
            counts.set(k, c);
          }
          for (const c of counts.values()) this.set({ agent: c.agent, state: c.state }, c.n);
        },
      });
    }
    new Gauge({
      name: 'warren_executor_subprocesses',
      help: 'Executor subprocesses (coding-agent CLIs) running now.',
      registers,
      collect() {
        this.set(subprocesses?.() ?? 0);
      },
    });
  }

  /** The agents' state and memory, from one reading shared by the gauges of one scrape. */
  #agentGauges(read: () => Promise<AgentStatus[]>): void {
    let reading: { at: number; agents: Promise<AgentStatus[]> } | undefined;
    const agents = (): Promise<AgentStatus[]> => {
      if (!reading || Date.now() - reading.at > 1_000) reading = { at: Date.now(), agents: read() };
      return reading.agents;
    };
    const registers = [this.registry];
    new Gauge({
      name: 'warren_agent_state',
      help: `1 for the state each agent is in now (${AGENT_STATES.join(', ')}), 0 for the others; as \`warren status\` shows it.`,
      labelNames: ['agent', 'state'],
      registers,
      async collect() {
        this.reset();
        for (const a of await agents()) for (const state of AGENT_STATES) this.set({ agent: a.name, state }, a.state === state ? 1 : 0);
      },
    });
    new Gauge({
      name: 'warren_agent_abandoned_notifications',
      help: 'Notifications given up on after repeated failures, per agent (ever).',
      labelNames: ['agent'],
      registers,
      async collect() {
        this.reset();
        for (const a of await agents()) this.set({ agent: a.name }, a.abandoned);
      },
    });
    new Gauge({
      name: 'warren_memory_entries',
      help: 'Memory entries held per agent (agents with memory.enabled).',
      labelNames: ['agent'],
      registers,
      async collect() {
        this.reset();
        for (const a of await agents()) if (a.memory) this.set({ agent: a.name }, a.memory.entries);
      },
    });
    new Gauge({
      name: 'warren_memory_bytes',
      help: 'Bytes of memory held per agent, as counted against memory.max_size_mb.',
      labelNames: ['agent'],
      registers,
      async collect() {
        this.reset();
        for (const a of await agents()) if (a.memory) this.set({ agent: a.name }, a.memory.bytes);
      },
    });
  }

  /** One finished activation (its record, as stored for `warren logs`). */
  observe(r: ActivationRecord): void {
    this.#activations.inc({ agent: r.agent, trigger: r.trigger, outcome: r.outcome });
    this.#duration.observe({ trigger: r.trigger }, r.duration_ms / 1000);
    this.#tokens.inc({ agent: r.agent, kind: 'input' }, r.usage.input_tokens);
    this.#tokens.inc({ agent: r.agent, kind: 'output' }, r.usage.output_tokens);
    this.#tokens.inc({ agent: r.agent, kind: 'cached' }, r.usage.cached_tokens);
    this.#cost.inc({ agent: r.agent }, r.usage.cost_usd);
  }

  /** A worker picked up an activation `lagMs` after it was enqueued. */
  observeLag(trigger: string, lagMs: number): void {
    this.#lag.observe({ trigger }, Math.max(0, lagMs) / 1000);
  }

  /** `count` memory entries of `agent` evicted at max_size_mb. */
  observeMemoryEvictions(agent: string, count: number): void {
    this.#memoryEvictions.inc({ agent }, count);
  }

  /** This daemon's metrics with the process's, as /metrics serves them. */
  text(): Promise<string> {
    return Registry.merge([this.registry, processMetrics()]).metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
