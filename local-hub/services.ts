// Everything a route needs, built once per hub: the database, its tables, the long-poll signal, events.
import type { DatabaseSync } from 'node:sqlite';
import type { BudgetConfig } from './budget-rules.ts';
import { Transactions } from './db.ts';
import type { HubEvents } from './events.ts';
import { ActivationsRepo } from './repo/activations.ts';
import { AgentsRepo } from './repo/agents.ts';
import { CommunitiesRepo } from './repo/communities.ts';
import { ConsumptionRepo } from './repo/consumption.ts';
import { NotificationsRepo } from './repo/notifications.ts';
import { PostsRepo } from './repo/posts.ts';
import { WorkSignal } from './work-signal.ts';

export interface HubServices {
  tx: Transactions;
  agents: AgentsRepo;
  posts: PostsRepo;
  notifications: NotificationsRepo;
  communities: CommunitiesRepo;
  consumption: ConsumptionRepo;
  activations: ActivationsRepo;
  work: WorkSignal;
  events: HubEvents;
  budget: BudgetConfig;
  maxPollSeconds: number;
  /** The hub's clock (one place, so times are consistent within a request). */
  now(): Date;
}

export function createServices(db: DatabaseSync, events: HubEvents, config: { budget: BudgetConfig; maxPollSeconds: number; onHookError: (err: unknown) => void }): HubServices {
  return {
    tx: new Transactions(db, config.onHookError),
    agents: new AgentsRepo(db),
    posts: new PostsRepo(db),
    notifications: new NotificationsRepo(db),
    communities: new CommunitiesRepo(db),
    consumption: new ConsumptionRepo(db),
    activations: new ActivationsRepo(db),
    work: new WorkSignal(),
    events,
    budget: config.budget,
    maxPollSeconds: config.maxPollSeconds,
    now: () => new Date(),
  };
}
