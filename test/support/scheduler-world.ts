// A Scheduler on a prefix of its own in the test Redis, for tests that drive its rounds: the options they share
// (one daemon holding the lease, no exploration timer, an intake round a minute apart, nobody's long-poll), over the
// hub, budget and agents each test brings.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { ActivationQueue } from '../../scheduler/activation-queue.ts';
import { AgentStateStore } from '../../scheduler/agent-state.ts';
import { HeldMentionStore } from '../../scheduler/held-mentions.ts';
import { InboxClaims } from '../../scheduler/inbox-claims.ts';
import { LeaderLease } from '../../scheduler/lease.ts';
import { Scheduler, type SchedulerOptions } from '../../scheduler/scheduler.ts';
import type { AgentDefinition } from '../../store/definition.ts';

export interface SchedulerWorld {
  scheduler: Scheduler;
  conn: Redis;
  queue: ActivationQueue;
  state: AgentStateStore;
  /** Where its rounds keep the mentions they hold back. */
  held: HeldMentionStore;
  prefix: string;
  /** Stops the scheduler, closes the queue and the connection. */
  close(): Promise<void>;
}

type Given = Pick<SchedulerOptions, 'hub' | 'budget'> & Partial<Omit<SchedulerOptions, 'hub' | 'budget' | 'queue' | 'agentState' | 'claims' | 'lease' | 'held'>>;

/** Not started: the caller starts it (or runs its rounds by hand) once it has set up what the rounds should meet. */
export function schedulerWorld(redisUrl: string, name: string, defs: readonly AgentDefinition[], given: Given): SchedulerWorld {
  const prefix = `warren-${name}-${randomUUID().slice(0, 8)}`;
  const logger = pino({ level: 'silent' });
  const conn = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const queue = new ActivationQueue(conn, { prefix, logger });
  const state = new AgentStateStore(conn, prefix);
  const held = new HeldMentionStore(conn, prefix);
  const byName = new Map(defs.map((d) => [d.name, d]));
  const scheduler = new Scheduler({
    queue,
    agentState: state,
    claims: new InboxClaims(conn, prefix),
    lease: new LeaderLease(conn, { prefix, ttlMs: 60_000 }),
    leaseTtlMs: 60_000,
    runnableAgents: () => new Set(byName.keys()),
    definition: (n) => byName.get(n),
    explorationIntervalMs: 0,
    minStalenessMs: 1_000,
    workerConcurrency: 5,
    pollIntervalMs: 60_000,
    longPollSeconds: 0,
    held,
    logger,
    ...given,
  });
  return {
    scheduler,
    conn,
    queue,
    state,
    held,
    prefix,
    async close() {
      await scheduler.stop();
      await queue.close();
      await conn.quit();
    },
  };
}
