// One exploration round on real Redis and BullMQ: which agents get an exploration activation, in which order,
// when budget refusals, pauses, quiet hours, backoffs and busy agents take candidates out.
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { HubAdapter } from '../hub-client/adapter.ts';
import { BudgetCache } from '../scheduler/budget-cache.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { schedulerWorld } from './support/scheduler-world.ts';

const redisUrl = inject('redisUrl');
const logger = pino({ level: 'silent' });
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function agent(name: string, behavior: Record<string, unknown> = {}): AgentDefinition {
  const config = AgentConfigSchema.parse({
    name,
    description: 'x',
    type: 'llm',
    capabilities: { grants: [] },
    brain: { model: 'm' },
    behavior: { discovery: { enabled: true }, limits: { min_interval_seconds: 0 }, ...behavior },
  });
  return { name, config, systemPrompt: 'x', files: { config: 'c', prompt: 'p' } };
}

async function world(defs: AgentDefinition[], opts: { warning?: readonly string[]; concurrency: number }) {
  const asked: string[][] = [];
  const hub = {
    capabilities: { longPoll: false },
    agentsWithNotifications: () => Promise.resolve([]),
    budgetHealth: (a: string) => Promise.resolve({ status: opts.warning?.includes(a) ? 'warning' : 'healthy' }),
  } as unknown as HubAdapter;
  const budget = new BudgetCache(hub, { ttlMs: 60_000, logger });
  const statusMany = budget.statusMany.bind(budget);
  budget.statusMany = async (agents, ...rest) => {
    if (agents.length) asked.push([...agents]); // the intake asks too, for nobody
    return statusMany(agents, ...rest);
  };
  const w = schedulerWorld(redisUrl, 'explore', defs, { hub, budget, workerConcurrency: opts.concurrency });
  w.scheduler.start();
  closers.push(() => w.close());
  while (!w.scheduler.isLeader) await new Promise((r) => setTimeout(r, 5));
  return { scheduler: w.scheduler, state: w.state, queue: w.queue, asked };
}

describe('exploration round', () => {
  it('takes the stalest agents the budget allows, asking for budgets chunk by chunk past the first slots', async () => {
    // a09 ran longest ago, a00 most recently; never-run agents come before all of them.
    const defs = Array.from({ length: 10 }, (_, i) => agent(`a${String(i).padStart(2, '0')}`));
    const fresh = agent('fresh');
    const w = await world([...defs, fresh], { concurrency: 3, warning: ['fresh', 'a09', 'a08', 'a07', 'a06'] });
    for (const [i, d] of defs.entries()) await w.state.recordActivated(d.name, { tokensInput: 0, tokensOutput: 0, costUsd: 0 }, { at: 1_000_000 - i * 10_000 });
    const picked = await w.scheduler.exploreTick(new Date(2_000_000));
    expect(picked).toEqual(['a05', 'a04', 'a03']);
    // A chunk is the slots still free: 3 (all refused), 3 (two refused), then the 2 left.
    expect(w.asked).toEqual([['fresh', 'a09', 'a08'], ['a07', 'a06', 'a05'], ['a04', 'a03']]);
  });

  it('leaves out busy, paused, backed-off, quiet and recently run agents', async () => {
    const defs = [
      agent('busy'),
      agent('paused'),
      agent('backoff'),
      agent('quiet', { quiet_hours: { start: '00:00', end: '23:59' } }),
      agent('recent', { limits: { min_interval_seconds: 3_600 } }),
      agent('nodisc', { discovery: { enabled: false } }),
      agent('okay'),
    ];
    const w = await world(defs, { concurrency: 50 });
    const now = Date.UTC(2026, 0, 15, 12, 0); // inside the quiet hours
    await w.queue.enqueue('busy', 'notification');
    await w.state.setPaused('paused', true);
    await w.state.holdUntil('backoff', now + 3_600_000);
    await w.state.recordActivated('recent', { tokensInput: 0, tokensOutput: 0, costUsd: 0 }, { at: now - 60_000 });
    expect(await w.scheduler.exploreTick(new Date(now))).toEqual(['okay']);
  });
});
