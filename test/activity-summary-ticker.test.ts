// The activity summary ticker against real Redis and the real local hub, its clock advanced by the test: a post the
// hub fails is tried again and made once; a second ticker (another daemon) never posts the same tick; no secret of a
// record reaches the post; the agent's limits hold the summary like any post of its own; the memory's size is the store's.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ActivationRecords, type ActivationRecord } from '../activation/activation-records.ts';
import { ActivitySummaryLedger } from '../activation/activity-summary-ledger.ts';
import { ActivitySummaryTicker } from '../activation/activity-summary-ticker.ts';
import { HubClient } from '../hub-client/client.ts';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { HeldMentionStore } from '../scheduler/held-mentions.ts';
import { WriteAllowance } from '../scheduler/write-allowance.ts';
import { Redactor } from '../services/redact.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { parseDefinition } from '../store/parse-definition.ts';
import { hubCaller } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
let redis: Redis;
let hub: RunningHub;
beforeAll(async () => {
  redis = new Redis(redisUrl);
  hub = await startHub({ dbPath: ':memory:', port: 0 });
});
afterAll(async () => {
  await hub.close();
  await redis.quit();
});
afterEach(() => {
  hub.faults.failWith5xx = false;
});

const MINUTE = 60_000;
/** Times relative to a minute ten minutes ago: the records' retention (by age) is measured against the real clock. */
const T0 = Math.floor(Date.now() / MINUTE) * MINUTE - 10 * MINUTE;
const tm = (minutes: number, seconds = 0): number => T0 + minutes * MINUTE + seconds * 1_000;
/** `2026-11-26 07:13Z`, as the posts show a time. */
const minuteOf = (ms: number): string => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')}Z`;
/** A secret with capitals and no digits: a fingerprint (lower-cased) made before redaction would let it through. */
const CANARY = 'CanarySummarySecretWordXq';

function definition(name: string, behavior = 'behavior: {limits: {min_interval_seconds: 0}}'): AgentDefinition {
  const { definition: def, problems } = parseDefinition({
    folder: name,
    configFile: `agents/${name}/config.yaml`,
    configText: `name: ${name}\ntype: llm\nbrain: {provider: scripted, model: s, responses: [ok]}\ncapabilities: {grants: [hub:read, hub:write]}\n${behavior}\nobservability: {post_summaries: true, summary_schedule: "* * * * *"}\n`,
    promptFile: `agents/${name}/system-prompt.md`,
    promptText: 'You are {{name}}.',
  });
  if (!def) throw new Error(JSON.stringify(problems));
  return def;
}

function failure(agent: string, ended: number, error: string): ActivationRecord {
  return {
    activation_id: `act-${randomUUID().slice(0, 8)}`,
    agent,
    trigger: 'notification',
    outcome: 'terminal_failure',
    reason: 'ModelError',
    started_at: new Date(ended - 1_000).toISOString(),
    duration_ms: 1_000,
    usage: { input_tokens: 10, output_tokens: 1, cached_tokens: 0, cost_usd: 0 },
    replies: 0,
    posts: 0,
    handled_notifications: 0,
    attempt: 1,
    error,
    events: [],
  };
}

async function setup(defs: AgentDefinition[], memory?: SqliteMemoryStore, keep?: { perAgent: number }): Promise<{ ticker: () => ActivitySummaryTicker; clock: { now: number }; records: ActivationRecords; prefix: string; writes: WriteAllowance }> {
  for (const d of defs) await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name: d.name });
  const prefix = `summ-t-${randomUUID().slice(0, 8)}`;
  const clock = { now: tm(0, 30) };
  const records = new ActivationRecords(redis, prefix, keep ? { retention: keep } : {});
  const writes = new WriteAllowance(redis, prefix);
  const redactor = new Redactor([CANARY]);
  const ticker = (): ActivitySummaryTicker =>
    new ActivitySummaryTicker({
      definitions: () => defs,
      runnable: () => new Set(defs.map((d) => d.name)),
      ledger: new ActivitySummaryLedger(redis, prefix),
      records,
      held: new HeldMentionStore(redis, prefix),
      hub: new HubClient({ baseUrl: hub.url, apiKey: hub.adminKey, retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } }),
      writes,
      memory,
      redact: (t) => redactor.redact(t),
      clock: () => clock.now,
      retryMs: 0,
      logger: pino({ level: 'silent' }),
    });
  return { ticker, clock, records, prefix, writes };
}

async function activityPosts(agent: string): Promise<Array<{ title: string; content: string }>> {
  const posts = (await hubCaller(hub.url).get<{ posts: Array<{ title: string; content: string; author: { name: string } }> }>('/posts?community=agent-activity&limit=100', hub.adminKey)).posts;
  return posts.filter((p) => p.author.name === agent);
}

describe('the activity summary ticker', () => {
  it('a post the hub fails is tried again and made once, by one of two tickers, with no secret in it', async () => {
    const { ticker, clock, records } = await setup([definition('scout')]);
    const [one, two] = [ticker(), ticker()];
    expect(await one.round()).toEqual([]); // first sight: summaries start at 12:00
    // Stored as it is here (not redacted), to prove the ticker redacts before it fingerprints.
    await records.add(failure('scout', tm(0, 40), `upstream said: token ${CANARY} refused`));
    clock.now = tm(1, 0.5);
    hub.faults.failWith5xx = true;
    expect(await one.round()).toEqual([{ agent: 'scout', tick: tm(1), skipped: 'failed' }]);
    hub.faults.failWith5xx = false;
    const [a, b] = await Promise.all([one.round(), two.round()]);
    const results = [...a, ...b];
    expect(results.filter((r) => 'posted' in r)).toHaveLength(1);
    expect(results.filter((r) => !('posted' in r))).toEqual(results.length === 2 ? [{ agent: 'scout', tick: tm(1), skipped: 'claimed' }] : []);
    // Rounds at the same time: nothing more is due.
    expect([...(await one.round()), ...(await two.round())]).toEqual([]);
    const posts = await activityPosts('scout');
    expect(posts).toHaveLength(1);
    expect(posts[0]!.title).toBe(`📊 Activity: scout, ${minuteOf(tm(0))} to ${minuteOf(tm(1))}`);
    expect(posts[0]!.content).toContain('- Total: 1\n- notification: terminal_failure 1\n');
    expect(posts[0]!.content).toMatch(/- Failures: 1\n {2}- 1× `ModelError:upstream said: token \[redacted\] refused`/i);
    expect(posts[0]!.content.toLowerCase()).not.toContain(CANARY.toLowerCase());
  });

  it('under the agent\'s limits: no posts allowed skips the period; a minimum interval delays it', async () => {
    const { ticker, clock, writes } = await setup([definition('mute', 'behavior: {can_create_posts: false}'), definition('slow', 'behavior: {limits: {min_interval_seconds: 3600}}')]);
    const t = ticker();
    await t.round();
    // slow wrote a moment ago: its next own write is an hour away.
    await writes.reserve('slow', definition('slow', 'behavior: {limits: {min_interval_seconds: 3600}}').config.behavior, { kind: 'post', idempotencyKey: 'earlier-post' });
    clock.now = tm(1, 0.5);
    const results = await t.round();
    expect(results).toEqual([
      { agent: 'mute', tick: tm(1), skipped: 'refused', limit: 'can_create_posts' },
      { agent: 'slow', tick: tm(1), skipped: 'failed' },
    ]);
    // mute's period is over (the next tick is the next chance); slow's waits for its interval, not tried meanwhile.
    expect(await t.round()).toEqual([]);
    expect(await activityPosts('mute')).toEqual([]);
    expect(await activityPosts('slow')).toEqual([]);
    clock.now = tm(2, 0.5);
    expect(await t.round()).toEqual([{ agent: 'mute', tick: tm(2), skipped: 'refused', limit: 'can_create_posts' }]);
  });

  it('the memory\'s size, of an agent with memory on, from the store', async () => {
    const memory = new SqliteMemoryStore(':memory:');
    try {
      const { ticker, clock } = await setup([definition('keeper', 'behavior: {limits: {min_interval_seconds: 0}}\nmemory: {enabled: true}')], memory);
      const entries = ['the deploy runs on Fridays', 'dana prefers short answers'].map((text, i) => ({ key: `k${i}`, kind: 'fact' as const, text, createdAt: tm(-60) }));
      expect(await memory.write('keeper', entries)).toBe(2);
      const t = ticker();
      await t.round();
      clock.now = tm(1, 0.5);
      expect(await t.round()).toMatchObject([{ agent: 'keeper', posted: expect.any(String) as string, figures: { memory: { entries: 2, bytes: await memory.size('keeper') } } }]);
      expect((await activityPosts('keeper'))[0]!.content).toContain(`- Memory: 2 entries, ${await memory.size('keeper')} bytes`);
    } finally {
      await memory.close();
    }
  });

  it('a period longer than the kept records: the summary counts what is kept and says from when', async () => {
    const { ticker, clock, records } = await setup([definition('busy')], undefined, { perAgent: 2 });
    const t = ticker();
    await t.round();
    for (const ended of [tm(0, 35), tm(0, 40), tm(0, 45)]) await records.add(failure('busy', ended, 'model gone'));
    clock.now = tm(1, 0.5);
    expect(await t.round()).toMatchObject([{ agent: 'busy', figures: { activations: 2, countedFrom: tm(0, 40) } }]);
    expect((await activityPosts('busy'))[0]!.content).toContain(`- Counted from ${minuteOf(tm(0, 40))}: older records of the period may no longer be kept\n`);
  });
});
