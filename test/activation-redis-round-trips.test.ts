// warren's own Redis commands in one notification activation, beside BullMQ's: each is a guarantee of the failure
// path (the inbox claim, the write allowance, the reply outbox, the agent's state, its record), and each a round
// trip. They are fused into one script per phase of the activation (issue 32 item 5); this counts them on a private
// Redis with MONITOR, so a change that adds one back fails here. Commands, never time.
import { createHash, randomUUID } from 'node:crypto';
import { createConnection } from 'node:net';
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

/** warren's scripts (their ioredis commands, e.g. warrenActivationOpen) by the SHA-1 they run by (EVALSHA). */
const SCRIPTS = new Map([...scriptBodies()].map(([command, body]) => [sha1(body), command]));

function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

const AGENT = 'bee';
/** An agent with memory on: something is written after its answer, so the answer's outbox entry goes right away. */
const REMEMBERING = 'wasp';
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
  for (const name of [AGENT, REMEMBERING]) await api.post('/agents/register', hub.adminKey, { name, type: 'native' });
  const agentsDir = makeAgentsDir(
    Object.fromEntries([AGENT, REMEMBERING].map((name) => [name, {
      config: `name: ${name}\ntype: llm\nbrain:\n  provider: scripted\n  model: m\n  responses:\n    - {content: "Buzz."}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {limits: {min_interval_seconds: 0}}\n${name === REMEMBERING ? 'memory: {enabled: true}\n' : ''}`,
      prompt: 'You are {{name}}.',
    }])),
    { withGreeter: false },
  );
  prefix = `trips-${randomUUID().slice(0, 8)}`;
  const config = WarrenConfigSchema.parse({
    hub: { url: hub.url, embedded: false },
    redis: { url: redis.url, prefix, allow_unauthenticated: true },
    store: { path: agentsDir },
    workers: { concurrency: 2, shutdown_grace: '2s' },
    metrics: { enabled: false },
    memory: { store: ':memory:' },
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
async function oneActivation(agent = AGENT, mentions = 1): Promise<Sent[]> {
  for (let i = 0; i < mentions; i++) await hubCaller(hub.url).post('/posts', userKey, { title: 'Q', content: `@${agent} ping ${i}?` });
  const answered = outcomes.length;
  const monitor = await monitorRedis(redis.port);
  try {
    const id = await queue.enqueue(agent, 'notification');
    const job = await queue.queue.getJob(id!);
    const deadline = Date.now() + PROCESS_START_MS;
    while ((await job!.getState()) !== 'completed') {
      if (Date.now() > deadline) throw new Error('the activation did not complete');
      await new Promise((r) => setTimeout(r, 20));
    }
    // Everything sent before this PING has been printed before it: the trace is whole once the PING is seen.
    const marker = `trace-end-${randomUUID()}`;
    await conn.ping(marker);
    await monitor.seen(marker);
  } finally {
    monitor.stop();
  }
  const sent = monitor.lines
    .filter((l) => l.source !== 'lua')
    .map(({ args }): Sent => {
      const [command = '', ...rest] = args;
      const c = command.toLowerCase();
      return { name: c === 'evalsha' || c === 'eval' ? (SCRIPTS.get(c === 'eval' ? sha1(rest[0]!) : rest[0]!) ?? 'bullmq-script') : `${c} ${rest[0] ?? ''}`, args: rest };
    })
    .filter((s) => !s.name.startsWith('ping '));
  expect(outcomes.slice(answered).map((o) => o.outcome.kind)).toEqual(['answered']);
  return sent;
}

/**
 * MONITOR on a plain socket: ioredis's monitor() can take a trace line that arrives in the same read as MONITOR's
 * +OK for a reply ("Command queue state error", seen in a loaded CI run) and lose the trace. Each line is
 * `+<time> [<db> <client | lua>] "<command>" "<arg>" …` with C-style escapes in the quotes.
 */
async function monitorRedis(port: number): Promise<{ lines: Array<{ source: string; args: string[] }>; seen(arg: string): Promise<void>; stop(): void }> {
  const socket = createConnection({ host: '127.0.0.1', port });
  const lines: Array<{ source: string; args: string[] }> = [];
  const waiting = new Map<string, () => void>();
  let buffer = '';
  let ok!: () => void;
  const started = new Promise<void>((resolve) => (ok = resolve));
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\r\n'); end >= 0; end = buffer.indexOf('\r\n')) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (line === '+OK') {
        ok();
        continue;
      }
      const m = /^\+\S+ \[\d+ ([^\]]+)\] (.*)$/.exec(line);
      if (!m) continue;
      const args = [...m[2]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((a) => unescapeMonitorArg(a[1]!));
      lines.push({ source: m[1]!, args });
      for (const a of args) waiting.get(a)?.();
    }
  });
  socket.write('MONITOR\r\n');
  await started;
  return {
    lines,
    seen: (arg) => (lines.some((l) => l.args.includes(arg)) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(arg, resolve))),
    stop: () => socket.destroy(),
  };
}

function unescapeMonitorArg(text: string): string {
  return text.replace(/\\(x[0-9a-fA-F]{2}|.)/g, (_, e: string) => (e[0] === 'x' ? String.fromCharCode(parseInt(e.slice(1), 16)) : ({ n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' } as Record<string, string>)[e] ?? e));
}

/** warren's own commands about the agent: not BullMQ's (its scripts, its queue's keys), not the test's own polling. */
function warrensOwn(sent: readonly Sent[], agent = AGENT): string[] {
  const queueKeys = `${prefix}:activations:`;
  return sent
    .filter((s) => s.name !== 'bullmq-script' && !s.args[0]?.startsWith(queueKeys) && !s.name.startsWith('monitor') && !s.name.startsWith('exec') && !s.name.startsWith('multi'))
    .filter((s) => s.args.some((a) => a === agent || a.includes(`:${agent}`) || a.startsWith(`${agent}|`) || a.includes(`${agent}\u0000`)))
    .map((s) => s.name.replace(prefix, '<prefix>'));
}

describe("warren's own Redis round trips of one activation", () => {
  it('a notification answered: one command once the inbox is read, one before the reply, one at the end', async () => {
    await oneActivation(); // the scripts are loaded and the agent has run once (no failure streak to end)
    const sent = await oneActivation();
    // Were twelve (main before issue 32 item 5): activation-start, inbox-begin, inbox-claim, the outbox's GET, SET
    // and DEL, reserve-write, inbox-settle, record-activated, add-activation-record, the fleet's paused ledger
    // (HGET and HDEL in a MULTI) and inbox-release; then four. The answer is the run's last write: its outbox entry
    // goes with the end. The start's command is sent once the inbox is read, with the claim of what was read.
    expect(warrensOwn(sent)).toEqual(['warrenActivationOpen', 'warrenReplyBefore', 'warrenActivationEnd']);
    // And every guarantee those commands kept is still kept: the hold is released, no answer is left in the outbox,
    // the write is counted, the agent's state and both records are written.
    const k = new RedisKeys(prefix);
    expect(await conn.hget(k.inboxHold(AGENT), 'count')).toBeNull();
    expect(await conn.keys(k.outbox(AGENT, '*'))).toEqual([]);
    expect(await conn.hget(k.agentDay(utcDay()), `${AGENT}|comments`)).toBe('2');
    expect(Number(await conn.hget(k.agentLastActivated, AGENT))).toBeGreaterThan(0);
    expect(await conn.llen(k.activationRecords(AGENT))).toBe(2);
  }, PROCESS_TEST_MS);

  it('two notifications in one run: the first answer settles right after its reply, the last with the end; no answer is left kept', async () => {
    const sent = await oneActivation(AGENT, 2);
    expect(warrensOwn(sent)).toEqual(['warrenActivationOpen', 'warrenReplyBefore', 'warrenReplyAfter', 'warrenReplyBefore', 'warrenActivationEnd']);
    const k = new RedisKeys(prefix);
    expect(await conn.keys(k.outbox(AGENT, '*'))).toEqual([]);
    expect(await conn.hget(k.inboxHold(AGENT), 'count')).toBeNull();
    expect(outcomes.at(-1)?.replies).toBe(2);
  }, PROCESS_TEST_MS);

  it('with memory to write after the answer, the answer leaves the outbox and the claim is settled right after the reply', async () => {
    await oneActivation(REMEMBERING);
    const sent = await oneActivation(REMEMBERING);
    expect(warrensOwn(sent, REMEMBERING)).toEqual(['warrenActivationOpen', 'warrenReplyBefore', 'warrenReplyAfter', 'warrenActivationEnd']);
    const k = new RedisKeys(prefix);
    expect(await conn.hget(k.inboxHold(REMEMBERING), 'count')).toBeNull();
    expect(await conn.keys(k.outbox(REMEMBERING, '*'))).toEqual([]);
  }, PROCESS_TEST_MS);

  it('after a failure streak, a good run also asks the fleet whether the streak paused the agent (then only)', async () => {
    // What a final failure leaves (AgentStateStore.recordFailure): the last failure's time, which the good run clears.
    const k = new RedisKeys(prefix);
    await conn.hset(k.agentLastFailure, AGENT, Date.now());
    const own = warrensOwn(await oneActivation());
    expect(own).toEqual(['warrenActivationOpen', 'warrenReplyBefore', 'warrenActivationEnd', `hget <prefix>:status-paused`, `hdel <prefix>:status-paused`]);
    expect(await conn.hget(k.agentLastFailure, AGENT)).toBeNull();
    // The streak is over: the next good run does not ask again.
    expect(warrensOwn(await oneActivation())).not.toContain('hget <prefix>:status-paused');
  }, PROCESS_TEST_MS);
});
