// Activation records in Redis stay bounded (README "Records and Redis memory"): by count, bytes and age per list,
// the newest always kept, byte totals exact, a list from before the totals summed once, and `records:` in warren.yaml.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivationRecords, type ActivationRecord } from '../activation/activation-records.ts';
import { RedisKeys } from '../redis/keys.ts';
import { loadWarrenConfig } from '../services/config.ts';
import { parseByteSize } from '../store/byte-size.ts';
import { DefinitionError, formatProblem } from '../store/problems.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';
import { activationRecord } from './support/activation-record.ts';

let redis: PrivateRedis;
let conn: Redis;
beforeAll(async () => {
  redis = await startPrivateRedis();
  conn = new Redis(redis.url);
});
afterAll(async () => {
  conn.disconnect();
  await redis.stop();
});

const DAY = 24 * 3_600_000;
let n = 0;
function record(agent: string, at: number, pad = 0): ActivationRecord {
  return activationRecord({ activation_id: `act-${++n}`, agent, reason: 'x'.repeat(pad), started_at: new Date(at).toISOString(), usage: { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: 0 } });
}

async function totals(prefix: string, agent: string): Promise<{ stored: number; counted: number }> {
  const keys = new RedisKeys(prefix);
  const items = await conn.lrange(keys.activationRecords(agent), 0, -1);
  return { stored: items.reduce((s, i) => s + Buffer.byteLength(i), 0), counted: Number(await conn.hget(keys.recordBytes, keys.activationRecords(agent))) };
}

describe('activation record retention', () => {
  it('keeps at most the count, the bytes and the age per list, oldest out first, the newest always', async () => {
    let now = Date.parse('2026-11-01T00:00:00Z');
    const prefix = 'ret-a';
    const recs = new ActivationRecords(conn, prefix, { retention: { perAgent: 3, perAgentBytes: 1_000_000, overall: 4, overallBytes: 1_000_000, maxAgeMs: 7 * DAY }, now: () => now });
    for (let i = 0; i < 5; i++) await recs.add(record('counted', now + i));
    expect((await recs.recent({ agent: 'counted', limit: 10 })).map((r) => r.started_at)).toEqual([4, 3, 2].map((i) => new Date(now + i).toISOString()));
    expect(await recs.recent({ limit: 10 })).toHaveLength(4);

    // Bytes: records of ~1.2 KB in a 3,000-byte bound leave two; the total kept beside the list is exact.
    const small = new ActivationRecords(conn, 'ret-b', { retention: { perAgent: 100, perAgentBytes: 3_000, overall: 100, overallBytes: 1_000_000, maxAgeMs: 7 * DAY }, now: () => now });
    for (let i = 0; i < 6; i++) await small.add(record('sized', now, 1_000));
    expect(await small.recent({ agent: 'sized', limit: 10 })).toHaveLength(2);
    const t = await totals('ret-b', 'sized');
    expect(t.counted).toBe(t.stored);
    expect(t.stored).toBeLessThanOrEqual(3_000);
    // One record larger than the whole bound is still kept: the newest always stays.
    await small.add(record('sized', now, 5_000));
    expect((await small.recent({ agent: 'sized', limit: 10 })).map((r) => r.reason.length)).toEqual([5_000]);
    expect((await totals('ret-b', 'sized')).counted).toBe((await totals('ret-b', 'sized')).stored);

    // Age: eight days on, a new record pushes out every record older than seven days.
    await recs.add(record('aged', now));
    await recs.add(record('aged', now + 1));
    now += 8 * DAY;
    await recs.add(record('aged', now));
    expect((await recs.recent({ agent: 'aged', limit: 10 })).map((r) => r.started_at)).toEqual([new Date(now).toISOString()]);
    // And the list expires on its own a max_age after its last record: an agent that stopped leaves nothing behind.
    const ttl = await conn.pttl(new RedisKeys(prefix).activationRecords('aged'));
    expect(ttl).toBeGreaterThan(7 * DAY - 60_000);
    expect(ttl).toBeLessThanOrEqual(7 * DAY);
  });

  it('sums a list written before the byte totals existed once, then keeps the total exact', async () => {
    const keys = new RedisKeys('ret-c');
    const old = Array.from({ length: 10 }, () => JSON.stringify(record('legacy', Date.now(), 400)));
    await conn.rpush(keys.activationRecords('legacy'), ...old);
    const recs = new ActivationRecords(conn, 'ret-c', { retention: { perAgentBytes: 2_000 } });
    await recs.add(record('legacy', Date.now(), 400));
    const t = await totals('ret-c', 'legacy');
    expect(t.counted).toBe(t.stored);
    expect(t.stored).toBeLessThanOrEqual(2_000);
    expect(await conn.llen(keys.activationRecords('legacy'))).toBeLessThan(11);
  });

  it('a list that expired starts its total from zero', async () => {
    const keys = new RedisKeys('ret-d');
    await conn.hset(keys.recordBytes, keys.activationRecords('gone'), 99_999); // its list expired, the total stayed
    const recs = new ActivationRecords(conn, 'ret-d');
    await recs.add(record('gone', Date.now()));
    const t = await totals('ret-d', 'gone');
    expect(t.counted).toBe(t.stored);
  });
});

describe('records: in warren.yaml', () => {
  const load = (text: string): ReturnType<typeof loadWarrenConfig> => {
    const file = join(mkdtempSync(join(tmpdir(), 'warren-records-')), 'warren.yaml');
    writeFileSync(file, text);
    return loadWarrenConfig(file, {});
  };
  const problems = (text: string): string[] => {
    try {
      load(text);
      return [];
    } catch (err) {
      if (err instanceof DefinitionError) return err.problems.map((p) => formatProblem({ ...p, file: 'warren.yaml' }));
      throw err;
    }
  };

  it('has documented defaults and takes sizes and durations', () => {
    expect(load('{}\n').records).toEqual({ per_agent: 100, per_agent_bytes: 128 * 1024, overall: 1_000, overall_bytes: 8 * 1024 * 1024, max_age: 7 * DAY });
    expect(load('records: {per_agent: 20, per_agent_bytes: 64KiB, overall_bytes: 2MB, max_age: 48h}\n').records).toMatchObject({ per_agent: 20, per_agent_bytes: 65_536, overall_bytes: 2 * 1024 ** 2, max_age: 2 * DAY });
  });

  it('names the field of a bad value', () => {
    expect(problems('records: {per_agent_bytes: 12, max_age: 30s, per_agnt: 3}\n')).toEqual([
      'warren.yaml:1:28: records.per_agent_bytes: expected a size of at least 1KiB, like 128KiB or 8MiB',
      'warren.yaml:1:41: records.max_age: expected at least 1m',
      'warren.yaml:1:46: records.per_agnt: unknown key "per_agnt" (did you mean "per_agent"?)',
    ]);
  });

  it('parses sizes (pure)', () => {
    const cases: Array<[string | number, number | undefined]> = [[2048, 2048], ['2048', 2048], ['64KiB', 65_536], ['64KB', 65_536], ['1.5MiB', 1_572_864], ['1GB', 1024 ** 3], ['lots', undefined], ['-1', undefined], [1.5, undefined], ['64 kb', undefined]];
    for (const [input, bytes] of cases) expect([input, parseByteSize(input)]).toEqual([input, bytes]);
  });
});
