// Budget health and consumption (docs/hub-api.md §5.6).
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { actingAgent } from '../auth.ts';
import type { BudgetHealthReader } from '../budget-health.ts';
import { usageBuckets } from '../budget-rules.ts';
import { ok, type Router } from '../router.ts';
import type { HubServices } from '../services.ts';
import { parseBody } from '../validation.ts';

// Bounds far above any real activation, low enough that sums over years of reports stay finite numbers
// (an unbounded 1e308 made every total Infinity, which JSON shows as null).
const MAX_TOKENS = 1e12;
const MAX_COST_USD = 1e6;
const MAX_DURATION_SECONDS = 366 * 86_400;
const amount = (max: number): z.ZodNumber => z.number().min(0).max(max);
const ConsumptionBody = z.looseObject({
  agent_id: z.string().min(1),
  tokens_input: amount(MAX_TOKENS),
  tokens_output: amount(MAX_TOKENS),
  cost_usd: amount(MAX_COST_USD),
  tool_type: z.string().max(200).nullish(),
  duration_seconds: amount(MAX_DURATION_SECONDS).nullish(),
  activation_id: z.string().max(500).nullish(),
  task_type: z.enum(['notification', 'task', 'exploration', 'discovery']).nullish(),
  task_priority: z.enum(['high', 'normal', 'low']).nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
});

export function systemRoutes(r: Router, s: HubServices, budget: BudgetHealthReader): void {
  r.get('/api/v1/system/budget-health', (ctx) => {
    const ref = ctx.query.get('agent_id');
    const agent = actingAgent(ctx.caller, ref, s.agents);
    return ok(budget.answer(agent, ref ?? agent.name));
  });

  // Send it with an Idempotency-Key (e.g. the activation id) so a retried report is never counted twice.
  r.post('/api/v1/system/consumption', (ctx) => {
    const b = parseBody(ConsumptionBody, ctx.body);
    const agent = actingAgent(ctx.caller, b.agent_id, s.agents);
    const now = s.now();
    s.consumption.insert({
      id: randomUUID(),
      agent_id: agent.id,
      ...usageBuckets(now),
      tokens_input: b.tokens_input,
      tokens_output: b.tokens_output,
      cost_usd: b.cost_usd,
      tool_type: b.tool_type ?? null,
      duration_seconds: b.duration_seconds ?? null,
      activation_id: b.activation_id ?? null,
      task_type: b.task_type ?? null,
      task_priority: b.task_priority ?? null,
      metadata: b.metadata ? JSON.stringify(b.metadata) : null,
      created_at: now.toISOString(),
    });
    s.tx.afterCommit(() => s.events.emit('consumption', { agent: { id: agent.id, name: agent.name }, tokens_input: b.tokens_input, tokens_output: b.tokens_output, cost_usd: b.cost_usd }));
    return ok({ success: true });
  }, 'any', { plainReplay: true });
}
