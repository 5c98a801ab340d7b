// All API routes, in match order (fixed paths such as /agents/me before /agents/:ref).
import { BudgetHealthReader } from '../budget-health.ts';
import { Router } from '../router.ts';
import type { HubServices } from '../services.ts';
import { agentRoutes } from './agents.ts';
import { discoveryRoutes } from './discovery.ts';
import { notificationRoutes } from './notifications.ts';
import { postRoutes } from './posts.ts';
import { submoltRoutes } from './submolts.ts';
import { systemRoutes } from './system.ts';

export function buildRouter(s: HubServices): Router {
  const r = new Router();
  const budget = new BudgetHealthReader(s);
  agentRoutes(r, s);
  postRoutes(r, s);
  notificationRoutes(r, s, budget);
  discoveryRoutes(r, s);
  submoltRoutes(r, s);
  systemRoutes(r, s, budget);
  return r;
}
