// warren's own Redis commands in one notification activation, beside BullMQ's: each is a guarantee of the failure
// path (the inbox claim, the write allowance, the reply outbox, the agent's state, its record), and each a round
// trip. They are fused into one script per phase of the activation (issue 32 item 5); this counts them on a private
// Redis with MONITOR, so a change that adds one back fails here. Commands, never time.
import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../daemon/daemon.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { WarrenConfigSchema } from '../services/config.ts';
import { scriptBodies } from '../redis/scripts.ts';
import { RedisKeys } from '../redis/keys.ts';
import { utcDay } from '../scheduler/agent-state.ts';
import type { ActivationOutcome } from '../activation/activation.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller } from './support/hub-api.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';

/** warren's scripts (their ioredis commands, e.g. warrenActivationBegin) by the SHA-1 they run by (EVALSHA). */
const SCRIPTS = new Map([...scriptBodies()].map(([command, body]) => [sha1(body), command]));

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

const AGENT = 'bee';
let redis: PrivateRedis;
let hub: RunningHub;
let daemon: RunningDaemon;
let queue: ActivationQueue;
let conn: Redis;
let prefix: string;
let userKey: string;
const outcomes: ActivationOutcome[] = [];

beforeAll(async () => {
  redis = await startPrivateRedis();
  hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
  const api = hubCaller(hub.url);
  userKey = (await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'dana', type: 'human' })).api_key;
  await api.post('/agents/register', hub.adminKey, { name: AGENT, type: 'native' });
  const agentsDir = makeAgentsDir(
    { [AGENT]: { config: `name: ${AGENT}\ntype: llm\nbrain:\n  provider: scripted\n  model: m\n  responses:\n    - {content: "Buzz."}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {limits: {min_interval_seconds: 0}}\n`, prompt: 'You are {{name}}.' } },
    { withGreeter: false },
  );
  prefix = `trips-${randomUUID().slice(0, 8)}`;
  const config = WarrenConfigSchema.parse({
    hub: { url: hub.url, embedded: false },
    redis: { url: redis.url, prefix, allow_unauthenticated: true },
    store: { path: agentsDir },
    workers: { concurrency: 2, shutdown_grace: '2s' },
    metrics: { enabled: false },
  });
  // Only a worker: the jobs are queued here, so no scheduler's round reads the agent's state between them.
  daemon = await startDaemon({ config, role: 'worker', logger: pino({ level: 'silent' }), env: { WARREN_HUB_ADMIN_KEY: hub.adminKey }, onOutcome: (o) => outcomes.push(o) });
  conn = new Redis(redis.url);
  queue = new ActivationQueue(conn, { prefix, logger: pino({ level: 'silent' }) });
}, PROCESS_START_MS);

afterAll(async () => {
  await daemon?.stop();
  await queue?.close();
  conn?.disconnect();
  await hub?.close();
  await redis?.stop();
});

/** A command a client sent (not one a script ran), named for reading: a warren script by its file, else the command and its first key. */
interface Sent {
  name: string;
  args: string[];
}

/** One mention answered by one queued activation, with every command clients sent Redis meanwhile, up to the job's completion. */
async function oneActivation(): Promise<Sent[]> {
  await hubCaller(hub.url).post('/posts', userKey, { title: 'Q', content: `@${AGENT} ping?` });
  const answered = outcomes.length;
  const monitor = await conn.monitor();
  const sent: Sent[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source === 'lua') return;
    const [command = '', ...rest] = args;
    const c = command.toLowerCase();
    sent.push({ name: c === 'evalsha' || c === 'eval' ? (SCRIPTS.get(c === 'eval' ? sha1(rest[0]!) : rest[0]!) ?? 'bullmq-script') : `${c} ${rest[0] ?? ''}`, args: rest });
  });
  try {
    const id = await queue.enqueue(AGENT, 'notification');
    const job = await queue.queue.getJob(id!);
    const deadline = Date.now() + PROCESS_START_MS;
    while ((await job!.getState()) !== 'completed') {
      if (Date.now() > deadline) throw new Error('the activation did not complete');
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    monitor.disconnect();
  }
  expect(outcomes.slice(answered).map((o) => o.outcome.kind)).toEqual(['answered']);
  return sent;
}

/** warren's own commands about the agent: not BullMQ's (its scripts, its queue's keys), not the test's own polling. */
function warrensOwn(sent: readonly Sent[]): string[] {
  const queueKeys = `${prefix}:activations:`;
  return sent
    .filter((s) => s.name !== 'bullmq-script' && !s.args[0]?.startsWith(queueKeys) && !s.name.startsWith('monitor') && !s.name.startsWith('exec') && !s.name.startsWith('multi'))
    .filter((s) => s.args.some((a) => a === AGENT || a.includes(`:${AGENT}`) || a.startsWith(`${AGENT}|`) || a.includes(`${AGENT}\u0000`)))
    .map((s) => s.name.replace(prefix, '<prefix>'));
}

describe("warren's own Redis round trips of one activation", () => {
  it('a notification answered: one command at the start, one as the inbox is read, one before the reply, one after it, one at the end', async () => {
    await oneActivation(); // the scripts are loaded and the agent has run once (no failure streak to end)
    const sent = await oneActivation();
    // Were twelve (main before issue 32 item 5): activation-start, inbox-begin, inbox-claim, the outbox's GET, SET
    // and DEL, reserve-write, inbox-settle, record-activated, add-activation-record, the fleet's paused ledger
    // (HGET and HDEL in a MULTI) and inbox-release.
    expect(warrensOwn(sent)).toEqual(['warrenActivationBegin', 'warrenInboxRead', 'warrenReplyBefore', 'warrenReplyAfter', 'warrenActivationEnd']);
    // And every guarantee those commands kept is still kept: the hold is released, no answer is left in the outbox,
    // the write is counted, the agent's state and both records are written.
    const k = new RedisKeys(prefix);
    expect(await conn.hget(k.inboxHold(AGENT), 'count')).toBeNull();
    expect(await conn.keys(k.outbox(AGENT, '*'))).toEqual([]);
    expect(await conn.hget(k.agentDay(utcDay()), `${AGENT}|comments`)).toBe('2');
    expect(Number(await conn.hget(k.agentLastActivated, AGENT))).toBeGreaterThan(0);
    expect(await conn.llen(k.activationRecords(AGENT))).toBe(2);
  }, PROCESS_TEST_MS);

  it('after a failure streak, a good run also asks the fleet whether the streak paused the agent (then only)', async () => {
    // What a final failure leaves (AgentStateStore.recordFailure): the last failure's time, which the good run clears.
    const k = new RedisKeys(prefix);
    await conn.hset(k.agentLastFailure, AGENT, Date.now());
    const own = warrensOwn(await oneActivation());
    expect(own).toEqual(['warrenActivationBegin', 'warrenInboxRead', 'warrenReplyBefore', 'warrenReplyAfter', 'warrenActivationEnd', `hget <prefix>:status-paused`, `hdel <prefix>:status-paused`]);
    expect(await conn.hget(k.agentLastFailure, AGENT)).toBeNull();
    // The streak is over: the next good run does not ask again.
    expect(warrensOwn(await oneActivation())).not.toContain('hget <prefix>:status-paused');
  }, PROCESS_TEST_MS);
});
