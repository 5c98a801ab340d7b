// Budget health and consumption over HTTP (docs/hub-api.md §5.6).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';

let t: TestHub;
beforeEach(async () => {
  t = await startTestHub({ budget: { defaultDailyLimitUsd: 10, defaultMonthlyLimitUsd: 200, perAgent: { big: { daily: 0, monthly: 0 } } } });
});
afterEach(() => t.close());

const spend = (key: string, agent: string, cost: number, extra: Record<string, unknown> = {}) =>
  t.call('POST', '/system/consumption', { key, body: { agent_id: agent, tokens_input: 10, tokens_output: 5, cost_usd: cost, ...extra } });
const health = (key: string, agent?: string) => t.call<Record<string, unknown>>('GET', '/system/budget-health', { key, query: { agent_id: agent } });

describe('budget', () => {
  it('moves through healthy, warning (80), throttle (90) and critical (100) as usage is recorded', async () => {
    const bob = await t.register('bob');
    expect((await health(bob.key)).body).toMatchObject({ agent_id: 'bob', status: 'healthy', healthy: true, daily_used: 0, daily_limit: 10, monthly_limit: 200 });
    const steps: Array<[number, string, boolean]> = [
      [7.99, 'healthy', true],
      [0.01, 'warning', true],
      [1, 'throttle', true],
      [0.99, 'throttle', true],
      [0.01, 'critical', false],
    ];
    for (const [cost, status, healthy] of steps) {
      expect((await spend(bob.key, 'bob', cost, { tool_type: 'gpt-4o-mini', task_type: 'notification' })).body).toEqual({ success: true });
      expect((await health(bob.key)).body, `after +${cost}`).toMatchObject({ status, healthy });
    }
    const h = (await health(t.adminKey, bob.id)).body;
    expect(h).toMatchObject({ agent_id: bob.id, daily_used: 10, monthly_used: 10, used_pct: 100, tools: { 'gpt-4o-mini': { used: 10, limit: 10, status: 'critical' } } });
    expect(h.billing_cycle).toMatchObject({ started: expect.stringMatching(/-01T00:00:00Z$/) as unknown });
  });

  it('takes the larger of daily and monthly use; unlimited agents stay healthy; usage is per agent', async () => {
    const big = await t.register('big');
    const bob = await t.register('bob');
    await spend(big.key, 'big', 5000);
    expect((await health(big.key)).body).toMatchObject({ status: 'healthy', used_pct: 0, daily_used: 5000, daily_limit: 0 });
    expect((await health(bob.key)).body).toMatchObject({ daily_used: 0 });
    expect((await health(bob.key)).body.collective).toMatchObject({ total_budget_usd: 200, total_used_usd: 5000 });
  });

  it('validates consumption reports and acting rules, recording nothing when refused', async () => {
    const bob = await t.register('bob');
    await t.register('carol');
    expect((await spend(bob.key, 'bob', -1)).status).toBe(422);
    expect((await t.call('POST', '/system/consumption', { key: bob.key, body: { tokens_input: 1, tokens_output: 1, cost_usd: 1 } })).status).toBe(422);
    expect((await spend(bob.key, 'bob', 1, { task_priority: 'urgent' })).status).toBe(422);
    expect((await spend(bob.key, 'carol', 1)).status).toBe(403);
    expect((await spend(bob.key, 'ghost', 1)).status).toBe(404);
    expect((await spend(t.adminKey, 'bob', 1, { metadata: { model: 'x' }, duration_seconds: 3, activation_id: 'a1', task_priority: 'high' })).status).toBe(200);
    expect((await health(bob.key)).body).toMatchObject({ daily_used: 1 });
    expect((await health(t.adminKey)).status).toBe(422);
  });
});
