// Figures the hub keeps rather than recomputes per request: everyone's spend per day and month (migration 4's
// trigger-kept totals) and the collective budget (recounted only when an agent is added).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { openHubDb } from '../local-hub/db.ts';
import { MIGRATIONS } from '../local-hub/migrations.ts';
import { ConsumptionRepo } from '../local-hub/repo/consumption.ts';
import { startTestHub, type TestHub } from '../local-hub/testing.ts';

const dirs: string[] = [];
let t: TestHub | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const report = (db: DatabaseSync, id: string, agent: string, day: string, cost: number): void => {
  db.prepare(
    `INSERT INTO consumption (id, agent_id, day, month, tokens_input, tokens_output, cost_usd, created_at)
     VALUES (?, ?, ?, ?, 1, 1, ?, ?)`,
  ).run(id, agent, day, day.slice(0, 7), cost, `${day}T00:00:00.000Z`);
};

describe('fleet spend totals', () => {
  it('an older database gets totals of the reports it already holds, and they follow new and removed reports', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-hub-totals-'));
    dirs.push(dir);
    const path = join(dir, 'hub.sqlite');
    // A database at schema 3, with reports written before the totals existed.
    const old = new DatabaseSync(path);
    for (const m of MIGRATIONS.slice(0, 3)) old.exec(m);
    old.exec('PRAGMA user_version = 3');
    old.prepare("INSERT INTO agents (id, name, key_hash, created_at, updated_at) VALUES ('a1', 'alpha', 'h1', 'x', 'x'), ('a2', 'beta', 'h2', 'x', 'x')").run();
    report(old, 'c1', 'a1', '2026-03-01', 1.5);
    report(old, 'c2', 'a2', '2026-03-01', 2.25);
    report(old, 'c3', 'a1', '2026-03-02', 4);
    report(old, 'c4', 'a1', '2026-04-01', 8);
    old.close();

    const db = openHubDb(path);
    try {
      const repo = new ConsumptionRepo(db);
      expect([repo.usedOnDayByAll('2026-03-01'), repo.usedOnDayByAll('2026-03-02'), repo.usedOnDayByAll('2026-03-03')]).toEqual([3.75, 4, 0]);
      expect([repo.usedInMonthByAll('2026-03'), repo.usedInMonthByAll('2026-04'), repo.usedInMonthByAll('2026-05')]).toEqual([7.75, 8, 0]);
      report(db, 'c5', 'a2', '2026-03-02', 0.5);
      report(db, 'c6', 'a2', '2026-05-09', 16);
      expect([repo.usedOnDayByAll('2026-03-02'), repo.usedInMonthByAll('2026-03'), repo.usedOnDayByAll('2026-05-09'), repo.usedInMonthByAll('2026-05')]).toEqual([4.5, 8.25, 16, 16]);
      db.prepare("DELETE FROM consumption WHERE id = 'c3'").run();
      expect([repo.usedOnDayByAll('2026-03-02'), repo.usedInMonthByAll('2026-03')]).toEqual([0.5, 4.25]);
      // A report rolled back with its transaction leaves the totals as they were.
      db.exec('BEGIN');
      report(db, 'c7', 'a1', '2026-03-02', 100);
      db.exec('ROLLBACK');
      expect(repo.usedOnDayByAll('2026-03-02')).toBe(0.5);
    } finally {
      db.close();
    }
  });

  it('budget-health shows the fleet totals of every report, whoever sent it', async () => {
    t = await startTestHub({ budget: { fleetDailyLimitUsd: 100 } });
    const a = await t.register('alpha');
    const b = await t.register('beta');
    for (const [key, agent, cost] of [[a.key, 'alpha', 10], [b.key, 'beta', 20], [a.key, 'alpha', 5]] as const) {
      expect((await t.call('POST', '/system/consumption', { key, body: { agent_id: agent, tokens_input: 1, tokens_output: 1, cost_usd: cost } })).status).toBe(200);
    }
    const h = await t.call<{ fleet: { daily_used: number; monthly_used: number; used_pct: number }; collective: { total_used_usd: number } }>('GET', '/system/budget-health', { key: b.key });
    expect(h.body.fleet).toMatchObject({ daily_used: 35, monthly_used: 35, used_pct: 35 });
    expect(h.body.collective.total_used_usd).toBe(35);
  });
});

describe('collective budget', () => {
  it('is the sum of the agents’ monthly limits, recounted when an agent is added (humans do not count)', async () => {
    t = await startTestHub({ budget: { defaultMonthlyLimitUsd: 50, perAgent: { big: { monthly: 0 } } } });
    const a = await t.register('alpha');
    const total = async (): Promise<number> =>
      (await t!.call<{ collective: { total_budget_usd: number } }>('GET', '/system/budget-health', { key: a.key })).body.collective.total_budget_usd;
    expect(await total()).toBe(50);
    expect(await total()).toBe(50);
    await t.register('beta');
    expect(await total()).toBe(100);
    await t.register('big');
    await t.register('some-person', { type: 'human' });
    expect(await total()).toBe(100);
    await t.register('gamma');
    expect(await total()).toBe(150);
  });
});
