// The local hub's pure decisions and small building blocks, without HTTP.
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { billingCycle, budgetHealth, DEFAULT_THRESHOLDS, limitsFor, percentUsed, statusFor, thresholdsOf } from '../local-hub/budget-rules.ts';
import { Transactions } from '../local-hub/db.ts';
import { canonicalJson, IdempotencyLedger } from '../local-hub/idempotency.ts';
import { openHubDb } from '../local-hub/db.ts';
import { excerpt, MAX_MENTIONS_PER_ITEM, parseMentions, recipientsFor } from '../local-hub/notification-rules.ts';
import { decodeCursor, encodeCursor } from '../local-hub/routes/notifications.ts';
import { seal, unseal } from '../local-hub/sealing.ts';
import { WorkSignal } from '../local-hub/work-signal.ts';
import { bareCommunity } from '../local-hub/names.ts';

describe('mentions', () => {
  it('match @name at the start or after a non-word character, lowercased, once each', () => {
    expect(parseMentions('@Bob hi, ping @carol-2 and @bob again; mail a@b.com (@dave) @@eve')).toEqual(['bob', 'carol-2', 'dave', 'eve']);
    expect(parseMentions('x_@bob 9@bob nobody@here')).toEqual([]);
    expect(parseMentions('line\n@bob.')).toEqual(['bob']);
    expect(parseMentions('')).toEqual([]);
  });

  it('stop at the limit of distinct names (repeats do not count)', () => {
    expect(parseMentions('@a1 @a1 @a2 @a3 @a4', 3)).toEqual(['a1', 'a2', 'a3']);
    expect(parseMentions(Array.from({ length: 50 }, (_, i) => `@n${i}`).join(' '))).toHaveLength(MAX_MENTIONS_PER_ITEM);
    expect(parseMentions('@a1', 0)).toEqual([]);
  });
});

describe('who gets notified', () => {
  const ids: Record<string, string> = { alice: 'A', bob: 'B', carol: 'C' };
  const lookup = (n: string): string | undefined => ids[n];

  it('a post notifies each mentioned existing agent except its author', () => {
    expect([...recipientsFor({ authorId: 'A', content: '@alice @bob @nobody @carol' }, lookup)]).toEqual([
      ['B', 'mention'],
      ['C', 'mention'],
    ]);
  });

  it('a comment replies to the post author and the parent author; mention wins; one per recipient', () => {
    expect([...recipientsFor({ authorId: 'A', content: 'ok', postAuthorId: 'B', parentAuthorId: 'C' }, lookup)]).toEqual([
      ['B', 'reply'],
      ['C', 'reply'],
    ]);
    expect([...recipientsFor({ authorId: 'A', content: '@bob', postAuthorId: 'B', parentAuthorId: 'B' }, lookup)]).toEqual([['B', 'mention']]);
    expect([...recipientsFor({ authorId: 'A', content: 'mine', postAuthorId: 'A', parentAuthorId: 'A' }, lookup)]).toEqual([]);
  });

  it("mentions stop at the author's remaining hourly allowance; replies do not", () => {
    expect([...recipientsFor({ authorId: 'A', content: '@bob @carol' }, lookup, 1)]).toEqual([['B', 'mention']]);
    expect([...recipientsFor({ authorId: 'A', content: '@bob @carol', postAuthorId: 'B' }, lookup, 0)]).toEqual([['B', 'reply']]);
  });

  it('keeps the first 200 characters, never splitting a character', () => {
    expect(excerpt('x'.repeat(250))).toHaveLength(200);
    expect(excerpt('short')).toBe('short');
    expect(Array.from(excerpt('😀'.repeat(201)))).toHaveLength(200);
  });
});

describe('budget rules', () => {
  it('status thresholds default to 80/90/100', () => {
    expect(DEFAULT_THRESHOLDS).toEqual({ warnPct: 80, throttlePct: 90, criticalPct: 100 });
    expect([0, 79.99, 80, 89.99, 90, 99.99, 100, 250].map((p) => statusFor(p))).toEqual(['healthy', 'healthy', 'warning', 'warning', 'throttle', 'throttle', 'critical', 'critical']);
    expect(statusFor(70, thresholdsOf({ warnPct: 70 }))).toBe('warning');
  });

  it('a limit of 0 or none is unlimited', () => {
    expect(percentUsed(5, 0)).toBe(0);
    expect(percentUsed(5, undefined)).toBe(0);
    expect(percentUsed(8.4, 10)).toBe(84);
  });

  it('per-agent limits by name or id override the defaults', () => {
    const config = { defaultDailyLimitUsd: 10, defaultMonthlyLimitUsd: 100, perAgent: { bob: { daily: 2 }, 'id-c': { monthly: 5 } } };
    expect(limitsFor(config, { id: 'id-a', name: 'alice' })).toEqual({ daily: 10, monthly: 100 });
    expect(limitsFor(config, { id: 'id-b', name: 'bob' })).toEqual({ daily: 2, monthly: 100 });
    expect(limitsFor(config, { id: 'id-c', name: 'carol' })).toEqual({ daily: 10, monthly: 5 });
  });

  it('the billing cycle is the UTC calendar month', () => {
    expect(billingCycle(new Date('2026-02-10T12:00:00Z'))).toEqual({ started: '2026-02-01T00:00:00Z', ends: '2026-03-01T00:00:00Z', days_remaining: 19 });
  });

  it('budget-health uses the larger of the daily and monthly percentages; healthy is false only at critical', () => {
    const base = { agentRef: 'sprint-coder', toolsToday: { 'gpt-4o-mini': 8.4 }, collective: { budget: 500, used: 133.9 }, fleet: { limits: {}, used: { daily: 40, monthly: 133.9 } }, thresholds: DEFAULT_THRESHOLDS, now: new Date('2026-02-10T12:00:00Z') };
    const h = budgetHealth({ ...base, limits: { daily: 10, monthly: 200 }, used: { daily: 8.4, monthly: 61.2 } });
    expect(h).toMatchObject({
      agent_id: 'sprint-coder',
      daily_limit: 10,
      daily_used: 8.4,
      monthly_limit: 200,
      monthly_used: 61.2,
      healthy: true,
      status: 'warning',
      used_pct: 84,
      tools: { 'gpt-4o-mini': { status: 'warning', used_pct: 84, remaining_usd: 1.6, days_remaining: 19, used: 8.4, limit: 10, percentage: 84 } },
      collective: { total_budget_usd: 500, total_used_usd: 133.9, overall_health: 'healthy' },
      billing_cycle: { days_remaining: 19 },
    });
    expect(budgetHealth({ ...base, limits: { daily: 10, monthly: 50 }, used: { daily: 1, monthly: 50 } })).toMatchObject({ status: 'critical', healthy: false, used_pct: 100 });
    expect(budgetHealth({ ...base, limits: {}, used: { daily: 1e6, monthly: 1e6 } })).toMatchObject({ status: 'healthy', healthy: true, used_pct: 0, daily_limit: 0 });
  });

  it('the fleet’s limits stop an agent that is within its own', () => {
    const base = { agentRef: 'frugal', toolsToday: {}, collective: { budget: 0, used: 0 }, thresholds: DEFAULT_THRESHOLDS, now: new Date('2026-02-10T12:00:00Z') };
    const within = { limits: { daily: 10 }, used: { daily: 0.5, monthly: 0.5 } };
    expect(budgetHealth({ ...base, ...within, fleet: { limits: { daily: 20 }, used: { daily: 20, monthly: 30 } } })).toMatchObject({ status: 'critical', healthy: false, used_pct: 100, fleet: { daily_limit: 20, daily_used: 20, status: 'critical' } });
    expect(budgetHealth({ ...base, ...within, fleet: { limits: { monthly: 100 }, used: { daily: 1, monthly: 91 } } })).toMatchObject({ status: 'throttle', fleet: { monthly_limit: 100, used_pct: 91 } });
    expect(budgetHealth({ ...base, ...within, fleet: { limits: {}, used: { daily: 1e5, monthly: 1e5 } } })).toMatchObject({ status: 'healthy', fleet: { daily_limit: 0, status: 'healthy' } });
  });
});

describe('idempotency helpers', () => {
  it('fingerprints bodies independent of key order', () => {
    expect(canonicalJson({ b: 1, a: [{ y: 2, x: null }] })).toBe(canonicalJson({ a: [{ x: null, y: 2 }], b: 1 }));
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('seals stored replies so only the same secret opens them', () => {
    const box = seal('{"api_key":"secret"}', 'scope\nkey-1');
    expect(box).not.toContain('secret');
    expect(unseal(box, 'scope\nkey-1')).toBe('{"api_key":"secret"}');
    expect(unseal(box, 'scope\nkey-2')).toBeUndefined();
    expect(unseal('short', 'x')).toBeUndefined();
  });

  it('replays, refuses a different body or a second request in flight, and forgets expired replies', () => {
    let now = 1_000_000_000;
    const ledger = new IdempotencyLedger(openHubDb(':memory:'), () => now);
    const first = ledger.begin('admin POST /x', 'k', { a: 1 });
    expect(first.kind).toBe('fresh');
    expect(() => ledger.begin('admin POST /x', 'k', { a: 1 })).toThrow(/in flight/);
    if (first.kind !== 'fresh') return;
    first.remember({ status: 201, body: { id: 'p1' } });
    first.release();
    expect(ledger.begin('admin POST /x', 'k', { a: 1 })).toEqual({ kind: 'replay', reply: { status: 201, body: { id: 'p1' } } });
    expect(() => ledger.begin('admin POST /x', 'k', { a: 2 })).toThrow(/different request body/);
    expect(ledger.begin('other POST /x', 'k', { a: 1 }).kind).toBe('fresh'); // another caller's key space
    expect(() => ledger.begin('admin POST /x', '', {})).toThrow(/printable/);
    expect(() => ledger.begin('admin POST /x', 'x'.repeat(256), {})).toThrow(/printable/);
    now += 24 * 3600 * 1000 + 1;
    expect(ledger.begin('admin POST /x', 'k', { a: 2 }).kind).toBe('fresh');
  });

  it('deletes expired replies as it stores new ones, at most once a minute', () => {
    let now = 1_000_000_000;
    const db = openHubDb(':memory:');
    const ledger = new IdempotencyLedger(db, () => now);
    const rows = (): number => Number((db.prepare('SELECT COUNT(*) AS n FROM idempotent_replies').get() as { n: number }).n);
    const store = (key: string): void => {
      const t = ledger.begin('admin POST /x', key, {});
      if (t.kind !== 'fresh') throw new Error('expected a fresh ticket');
      t.remember({ status: 200, body: {} });
      t.release();
    };
    store('k1');
    now += 24 * 3600 * 1000 + 1; // k1 expired
    store('k2'); // more than a minute since the last pruning: k1 goes
    expect(rows()).toBe(1);
    now += 24 * 3600 * 1000 - 30_000; // k2 expires in 30 s
    store('k3');
    now += 31_000; // k2 expired, but the last pruning was 31 s ago
    store('k4');
    expect(rows()).toBe(3);
    now += 30_000;
    store('k5');
    expect(rows()).toBe(3); // k2 gone; k3, k4, k5
  });
});

describe('transactions', () => {
  function table(): { db: DatabaseSync; tx: Transactions; count: () => number } {
    const db = new DatabaseSync(':memory:');
    db.exec('CREATE TABLE t (v INTEGER)');
    return { db, tx: new Transactions(db), count: () => Number((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n) };
  }

  it('commits all or nothing; after-commit hooks run only on commit', () => {
    const { db, tx, count } = table();
    const fired: string[] = [];
    tx.run(() => {
      db.exec('INSERT INTO t VALUES (1)');
      tx.afterCommit(() => fired.push('one'));
      expect(fired).toEqual([]); // not before the commit
    });
    expect(() =>
      tx.run(() => {
        db.exec('INSERT INTO t VALUES (2)');
        tx.afterCommit(() => fired.push('two'));
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(count()).toBe(1);
    expect(fired).toEqual(['one']);
  });

  it('nests as savepoints inside the outer transaction', () => {
    const { db, tx, count } = table();
    const fired: string[] = [];
    tx.run(() => {
      db.exec('INSERT INTO t VALUES (1)');
      expect(() =>
        tx.run(() => {
          db.exec('INSERT INTO t VALUES (2)');
          tx.afterCommit(() => fired.push('inner'));
          throw new Error('inner fails');
        }),
      ).toThrow();
      tx.run(() => tx.afterCommit(() => fired.push('kept')));
    });
    expect(count()).toBe(1);
    expect(fired).toEqual(['kept']);
  });

  it('reports a failing hook instead of failing the committed work', () => {
    const db = new DatabaseSync(':memory:');
    const errors: unknown[] = [];
    const tx = new Transactions(db, (e) => errors.push(e));
    expect(tx.run(() => (tx.afterCommit(() => { throw new Error('listener'); }), 42))).toBe(42);
    expect(errors).toHaveLength(1);
  });
});

describe('work signal (long-poll waiters)', () => {
  it('wakes, times out, aborts and closes, leaving no waiter behind', async () => {
    const s = new WorkSignal();
    const ac = new AbortController();
    const woken = s.wait(10_000, ac.signal);
    expect(s.waiting).toBe(1);
    s.wake();
    expect(await woken).toBe('woken');
    expect(await s.wait(5, ac.signal)).toBe('timeout');
    const aborted = s.wait(10_000, ac.signal);
    ac.abort();
    expect(await aborted).toBe('aborted');
    const closed = s.wait(10_000, new AbortController().signal);
    s.close();
    expect(await closed).toBe('closed');
    expect(await s.wait(10_000, new AbortController().signal)).toBe('closed');
    expect(s.waiting).toBe(0);
  });
});

describe('small formats', () => {
  it('cursors round-trip and reject foreign values', () => {
    expect(decodeCursor(encodeCursor(42))).toBe(42);
    expect(() => decodeCursor('42')).toThrow(/cursor/);
  });
  it('communities normalize to the bare form', () => {
    expect(bareCommunity('m/General')).toBe('general');
    expect(bareCommunity('agent-errors')).toBe('agent-errors');
  });
});
