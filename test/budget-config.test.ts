// Spend limits from warren.yaml's `budget:` reach the hub warren runs: `warren hub` (and the daemon's embedded hub,
// which takes the same mapping) answers budget-health with the configured limits, per agent and by default.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hubBudget, withBudgetFlags, WarrenConfigSchema } from '../services/config.ts';
import { freePort } from './support/free-port.ts';
import { hubCaller, waitFor } from './support/hub-api.ts';

let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGTERM');
  child = undefined;
});

describe('budget: in warren.yaml', () => {
  it('maps to the hub’s limits (0 = unlimited), with per-agent overrides and thresholds', () => {
    const c = WarrenConfigSchema.parse({ budget: { daily_usd: 2, agents: { greeter: { daily_usd: 0.5, monthly_usd: 10 } }, warn_pct: 70 } });
    expect(hubBudget(c.budget)).toEqual({ defaultDailyLimitUsd: 2, defaultMonthlyLimitUsd: undefined, perAgent: { greeter: { daily: 0.5, monthly: 10 } }, fleetDailyLimitUsd: undefined, fleetMonthlyLimitUsd: undefined, warnPct: 70, throttlePct: 90, criticalPct: 100 });
    const fleet = WarrenConfigSchema.parse({ budget: { fleet: { daily_usd: 20, monthly_usd: 300 } } });
    expect(hubBudget(fleet.budget)).toMatchObject({ fleetDailyLimitUsd: 20, fleetMonthlyLimitUsd: 300 });
    expect(hubBudget(withBudgetFlags(fleet.budget, { fleetDailyUsd: 5, dailyUsd: 1 }))).toMatchObject({ defaultDailyLimitUsd: 1, fleetDailyLimitUsd: 5, fleetMonthlyLimitUsd: 300 });
    expect(() => WarrenConfigSchema.parse({ budget: { fleet: { daily_usd: -2 } } })).toThrow(/daily_usd/);
    expect(() => WarrenConfigSchema.parse({ budget: { daily_usd: -1 } })).toThrow(/daily_usd/);
  });

  it('`warren hub` answers budget-health with the limits of warren.yaml', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-budget-'));
    const port = await freePort();
    const file = join(dir, 'warren.yaml');
    writeFileSync(file, `budget: {daily_usd: 3, monthly_usd: 50, agents: {frugal: {daily_usd: 0.25}}}\n`);
    const adminKey = 'budget-admin-key-123456';
    let out = '';
    child = spawn(process.execPath, [resolve('bin/warren.js'), 'hub', '--config', file, '--db', ':memory:', '--port', String(port)], { env: { ...process.env, WARREN_HUB_ADMIN_KEY: adminKey, WARREN_HUB_PORT: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor('the hub', () => (out.includes('hub listening') ? true : undefined), 15_000);
    const api = hubCaller(`http://127.0.0.1:${port}`);
    for (const name of ['frugal', 'plain']) await api.post('/agents/register', adminKey, { name });
    const frugal = await api.get<{ daily_limit: number; monthly_limit: number }>('/system/budget-health?agent_id=frugal', adminKey);
    const plain = await api.get<{ daily_limit: number; monthly_limit: number }>('/system/budget-health?agent_id=plain', adminKey);
    expect(frugal).toMatchObject({ daily_limit: 0.25, monthly_limit: 50 });
    expect(plain).toMatchObject({ daily_limit: 3, monthly_limit: 50 });
  });

  it('`warren hub --fleet-daily-usd` stops every agent once all of them together spent it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-budget-'));
    const port = await freePort();
    const file = join(dir, 'warren.yaml');
    writeFileSync(file, `budget: {daily_usd: 10, fleet: {monthly_usd: 500}}\n`);
    const adminKey = 'budget-admin-key-123456';
    let out = '';
    child = spawn(process.execPath, [resolve('bin/warren.js'), 'hub', '--config', file, '--db', ':memory:', '--port', String(port), '--fleet-daily-usd', '1'], { env: { ...process.env, WARREN_HUB_ADMIN_KEY: adminKey, WARREN_HUB_PORT: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await waitFor('the hub', () => (out.includes('hub listening') ? true : undefined), 15_000);
    const api = hubCaller(`http://127.0.0.1:${port}`);
    for (const name of ['spender', 'bystander']) await api.post('/agents/register', adminKey, { name });
    type Health = { status: string; daily_used: number; fleet: { daily_limit: number; monthly_limit: number; daily_used: number } };
    expect(await api.get<Health>('/system/budget-health?agent_id=bystander', adminKey)).toMatchObject({ status: 'healthy', fleet: { daily_limit: 1, monthly_limit: 500 } });
    await api.post('/system/consumption', adminKey, { agent_id: 'spender', tokens_input: 1000, tokens_output: 1000, cost_usd: 1 });
    const bystander = await api.get<Health>('/system/budget-health?agent_id=bystander', adminKey);
    expect(bystander).toMatchObject({ status: 'critical', daily_used: 0, fleet: { daily_used: 1 } });
  });
});
