// Reads over a list of agents go to Redis a bounded page per command (redis/agent-pages.ts): an intake round lists up
// to 50,000 agents with work, `warren status` reads every agent of the fleet, and Redis runs one command at a time
// (one script over 200 agents with work held it 1.5 ms; one HMGET over 100,000 fields 13 ms). Commands counted on a
// Redis of this file's own; every value read back where it belongs, across page boundaries, in the order asked.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTS_PER_SCRIPT, FIELDS_PER_COMMAND, pagesOf } from '../redis/agent-pages.ts';
import { RedisKeys } from '../redis/keys.ts';
import { AgentStateStore, utcDay } from '../scheduler/agent-state.ts';
import { InboxClaims } from '../scheduler/inbox-claims.ts';
import { ActivitySummaryLedger } from '../activation/activity-summary-ledger.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';

describe('pagesOf', () => {
  it.each<[string, number[], number, Array<{ first: number; items: number[] }>]>([
    ['none', [], 3, []],
    ['fewer than a page', [1, 2], 3, [{ first: 0, items: [1, 2] }]],
    ['a page exactly', [1, 2, 3], 3, [{ first: 0, items: [1, 2, 3] }]],
    ['a page and one', [1, 2, 3, 4], 3, [{ first: 0, items: [1, 2, 3] }, { first: 3, items: [4] }]],
    ['pages of one', [7, 8], 1, [{ first: 0, items: [7] }, { first: 1, items: [8] }]],
  ])('%s', (_what, items, size, pages) => {
    expect(pagesOf(items, size)).toEqual(pages);
  });
});

describe('reads over many agents, a page per command', () => {
  let redis: PrivateRedis;
  let conn: Redis;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    conn = new Redis(redis.url);
  });
  afterAll(async () => {
    conn?.disconnect();
    await redis?.stop();
  });

  const COUNT = 2_500;
  const names = Array.from({ length: COUNT }, (_, i) => `agent-${i}`);
  /** Agents on either side of page boundaries, and the last. */
  const marked = [AGENTS_PER_SCRIPT - 1, AGENTS_PER_SCRIPT, FIELDS_PER_COMMAND - 1, FIELDS_PER_COMMAND, COUNT - 1];

  /** How many times clients sent `command` (scripts: EVALSHA and EVAL) since the last reset. */
  async function sent(command: 'script' | 'hmget' | 'exec'): Promise<number> {
    const info = await conn.info('commandstats');
    const calls = (name: string): number => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(info)?.[1] ?? 0);
    return command === 'script' ? calls('evalsha') + calls('eval') : calls(command);
  }

  async function counted<T>(command: 'script' | 'hmget' | 'exec', read: () => Promise<T>): Promise<{ value: T; commands: number }> {
    await read(); // the scripts loaded (a first EVAL), so that only the reads are counted
    await conn.config('RESETSTAT');
    const value = await read();
    return { value, commands: await sent(command) };
  }

  it("the intake's reads: what holds each agent back, what its runs hold of its inbox", async () => {
    const prefix = `pages-${randomUUID().slice(0, 8)}`;
    const state = new AgentStateStore(conn, prefix);
    const claims = new InboxClaims(conn, prefix);
    const k = new RedisKeys(prefix);
    for (const i of marked) {
      await state.setPaused(names[i]!, true);
      // A queued notification job holds the whole inbox of its agent.
      await conn.set(k.dedup(names[i]!).current, `job-${i}`);
      await conn.hset(`${k.dedup('').jobPrefix}job-${i}`, 'name', 'notification');
    }
    const asked = [...names].reverse();
    const holds = await counted('script', () => state.holdMany(asked));
    expect(holds.commands).toBe(Math.ceil(COUNT / AGENTS_PER_SCRIPT));
    expect([...holds.value.keys()]).toEqual(asked);
    for (const [i, a] of names.entries()) expect(holds.value.get(a)?.paused ?? false, a).toBe(marked.includes(i));

    const held = await counted('script', () => claims.heldByMany(asked));
    expect(held.commands).toBe(Math.ceil(COUNT / AGENTS_PER_SCRIPT));
    expect([...held.value.keys()]).toEqual(asked.filter((a) => marked.includes(names.indexOf(a))));
    for (const i of marked) expect(held.value.get(names[i]!)?.held).toBe(Infinity);
  });

  it("`warren status`'s reads (states, today's counters, not-runnable marks, summary ticks) and the daemon's not-runnable marks", async () => {
    const prefix = `pages-${randomUUID().slice(0, 8)}`;
    const state = new AgentStateStore(conn, prefix);
    const at = Date.now();
    for (const i of marked) await state.recordActivated(names[i]!, { tokensInput: i, tokensOutput: 1, costUsd: 0 }, { at: at + i });
    // Written as a daemon's check writes them (every agent checked): a transaction per page, not one over the fleet.
    const written = await counted('exec', () => state.setNotRunnable(names, new Map(marked.map((i) => [names[i]!, `reason ${i}`]))));
    expect(written.commands).toBe(Math.ceil(COUNT / FIELDS_PER_COMMAND));

    const states = await counted('hmget', () => state.getMany(names));
    expect(states.commands).toBe(6 * Math.ceil(COUNT / FIELDS_PER_COMMAND));
    for (const [i, a] of names.entries()) expect(states.value.get(a)?.lastActivatedAt, a).toBe(marked.includes(i) ? at + i : undefined);

    const daily = await counted('hmget', () => state.dailyMany(names, utcDay(at)));
    expect(daily.commands).toBe(Math.ceil(COUNT / Math.floor(FIELDS_PER_COMMAND / 6)));
    for (const i of marked) expect(daily.value.get(names[i]!)).toMatchObject({ activations: 1, tokensInput: i });
    expect(daily.value.get(names[1]!)).toMatchObject({ activations: 0, tokensInput: 0 });

    const reasons = await counted('hmget', () => state.notRunnable(names));
    expect(reasons.commands).toBe(Math.ceil(COUNT / FIELDS_PER_COMMAND));
    expect(reasons.value).toEqual(new Map(marked.map((i) => [names[i]!, `reason ${i}`])));

    const ledger = new ActivitySummaryLedger(conn, prefix);
    for (const i of marked) await ledger.start(names[i]!, 1_000 + i);
    const ticks = await counted('hmget', () => ledger.done(names));
    expect(ticks.commands).toBe(Math.ceil(COUNT / FIELDS_PER_COMMAND));
    expect(ticks.value).toEqual(new Map(marked.map((i) => [names[i]!, 1_000 + i])));
  });
});
