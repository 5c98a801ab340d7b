// Issue 26, finding 1: Redis was an open control plane. It answered unauthenticated connections on loopback, so a
// CLI agent's own user connected and rewrote warren's state: `HDEL <prefix>:agent-day:<day> <agent>|comments`
// between writes gave it more comments than max_daily_comments, and `HSET … greeter|comments 1000000000` silenced
// another agent until midnight UTC. A real `warren start` as root runs a hostile fake claude as the agent's own
// user (warren-agent-coder) that tries exactly that over raw RESP, as redis-cli would.
//
// On main before this change the daemon started CLI agents beside any Redis: the last test below (the documented
// opt-out, which keeps main's behaviour) shows the attack then works, and the second one failed there (no refusal).
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startHub, type RunningHub } from '../../local-hub/server.ts';
import { utcDay } from '../../scheduler/agent-state.ts';
import { FAKE_CLIS } from '../support/cli-agent.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from '../support/ceilings.ts';
import { makeAgentsDir } from '../support/daemon-harness.ts';
import { hubCaller, waitFor, type WirePost } from '../support/hub-api.ts';
import { startPrivateRedis } from '../support/redis-server.ts';
import { startWarren, type WarrenProcess } from '../support/warren-process.ts';

const openRedisUrl = inject('redisUrl');
const TAMPER = join(FAKE_CLIS, 'claude-redis-tamper.js');

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

interface TamperReport {
  uid: number;
  /** The first line of each Redis reply: HDEL per try, then the HSET. */
  redis: string[];
  /** The gateway's status for each comment. */
  comments: Array<number | string>;
}

const agents = (): string =>
  makeAgentsDir({
    coder: {
      config: `name: coder\ntype: claude-code\nbrain: {provider: anthropic, model: claude-sonnet-4-5, api_base: "http://127.0.0.1:9", api_key_env: CODER_KEY}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {max_duration: 60s, limits: {max_daily_comments: 2, max_responses_per_thread: 10, min_interval_seconds: 0}}\n`,
      prompt: 'You are {{name}}.',
    },
  });

interface World {
  hub: RunningHub;
  daemon: WarrenProcess;
  prefix: string;
  /** Where the tamperer writes what Redis and the gateway answered. */
  report: string;
  api: ReturnType<typeof hubCaller>;
  userKey: string;
}

/** The hub, then `warren start` as root with the tampering coder (run as warren-agent-coder) and the greeter. */
async function world(redis: { yamlUrl: string; env: Record<string, string>; extra?: string }): Promise<World> {
  const hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
  cleanups.push(() => hub.close());
  const base = mkdtempSync(join(tmpdir(), 'warren-redis-auth-'));
  chmodSync(base, 0o711); // CLI agents pass through to their workspace and the report folder
  const reports = join(base, 'reports');
  mkdirSync(reports);
  chmodSync(reports, 0o777);
  const prefix = `redis-auth-${randomUUID().slice(0, 8)}`;
  const daemon = startWarren({
    hubUrl: hub.url,
    adminKey: hub.adminKey,
    redisUrl: redis.yamlUrl,
    ...(redis.extra ? { redis: redis.extra } : {}),
    prefix,
    agentsDir: agents(),
    env: { CODER_KEY: 'sk-ant-coder-key', WARREN_LOG_LEVEL: 'info', WARREN_ALLOW_OPEN_REDIS: '', ...redis.env },
    sections: [`executors: {cli: {run_as: warren-agent, workspaces: "${join(base, 'workspaces')}", binaries: {claude-code: "${TAMPER}"}}}`],
  });
  cleanups.push(async () => {
    daemon.kill('SIGKILL');
    await daemon.exited;
  });
  await daemon.waitForLine(/warren is running/, PROCESS_START_MS);
  const api = hubCaller(hub.url);
  const { api_key: userKey } = await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'mallory', type: 'human' });
  return { hub, daemon, prefix, report: join(reports, 'report.json'), api, userKey };
}

/** Mentions the coder with its orders: tamper with Redis at `redisPort`, comment on a post of mallory's. */
async function orderTampering(w: World, redisPort: number, extraMention = ''): Promise<{ target: string; mention: string }> {
  const { id: target } = await w.api.post<{ id: string }>('/posts', w.userKey, { title: 'target', content: 'a thread to comment on' });
  const orders = `REDIS=127.0.0.1:${redisPort} DAY_KEY=${w.prefix}:agent-day:${utcDay()} SELF=coder VICTIM=greeter POST=${target} TRIES=4 REPORT=${w.report}`;
  const { id: mention } = await w.api.post<{ id: string }>('/posts', w.userKey, { title: 'orders', content: `@coder ${extraMention}tamper ${orders}` });
  return { target, mention };
}

const reportOf = (w: World): Promise<TamperReport> =>
  waitFor('the tamperer\'s report', () => (existsSync(w.report) ? (JSON.parse(readFileSync(w.report, 'utf8')) as TamperReport) : undefined), 90_000, 100);

const commentsBy = async (w: World, post: string, author: string): Promise<number> =>
  (await w.api.get<WirePost>(`/posts/${post}?include_comments=true`, w.userKey)).comments?.filter((c) => c.author.name === author).length ?? 0;

describe('Redis as the control plane, against a CLI agent run as its own user', { timeout: PROCESS_TEST_MS }, () => {
  it('with requirepass and redis.password_env, the agent\'s user gets NOAUTH for every write and the daily limit holds', async () => {
    expect(process.getuid?.(), 'CI runs as root, where CLI agents run as their own user').toBe(0);
    const password = `redis-pw-${randomBytes(12).toString('hex')}`;
    const redis = await startPrivateRedis({ password });
    cleanups.push(() => redis.stop());
    // The password only in the daemon's environment, named by warren.yaml; the URL in warren.yaml has none.
    const w = await world({ yamlUrl: redis.plainUrl, extra: 'password_env: WARREN_TEST_REDIS_PASSWORD', env: { WARREN_TEST_REDIS_PASSWORD: password } });
    expect(w.daemon.lines.some((l) => l.includes('answers without credentials'))).toBe(false);
    const { target } = await orderTampering(w, redis.port);
    const report = await reportOf(w);
    expect(report.uid).not.toBe(0);
    // Every command refused: the counters are not the agent's to change.
    expect(report.redis).toHaveLength(5);
    for (const reply of report.redis) expect(reply).toMatch(/^-NOAUTH/);
    // Two comments admitted, then max_daily_comments 2 refuses at the gateway: the HDELs changed nothing.
    expect(report.comments).toEqual([201, 201, 403, 403]);
    expect(await commentsBy(w, target, 'coder')).toBe(2);
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    cleanups.push(() => Promise.resolve(admin.disconnect()));
    const day = await admin.hgetall(`${w.prefix}:agent-day:${utcDay()}`);
    expect(day['coder|comments']).toBe('2');
    expect(day['greeter|comments']).toBeUndefined();
    // The password never reached the logs.
    expect(w.daemon.lines.filter((l) => l.includes(password))).toEqual([]);
  });

  it('with a Redis that answers without credentials the daemon does not start CLI agents, says why and how to fix it; LLM agents run', async () => {
    const w = await world({ yamlUrl: openRedisUrl, env: {} });
    const refusal = await w.daemon.waitForLine(/agent coder skipped/, PROCESS_START_MS);
    expect(refusal).toContain('answers without credentials');
    expect(refusal).toContain('requirepass');
    expect(refusal).toContain('REDIS_URL (redis://<user>:<password>@<host>:<port>)');
    expect(refusal).toContain('redis.allow_unauthenticated: true');
    const { mention } = await orderTampering(w, Number(new URL(openRedisUrl).port), '@greeter ');
    // The greeter (an LLM agent) answers the same post; the coder never runs, so nothing was tampered with.
    await waitFor('the greeter reply', async () => ((await commentsBy(w, mention, 'greeter')) > 0 ? true : undefined), 45_000, 100);
    expect(existsSync(w.report)).toBe(false);
    expect(await commentsBy(w, mention, 'coder')).toBe(0);
  });

  it('the opt-out (WARREN_ALLOW_OPEN_REDIS=1) runs them anyway, with a warning, and the attack works: main\'s behaviour', async () => {
    const w = await world({ yamlUrl: openRedisUrl, env: { WARREN_ALLOW_OPEN_REDIS: '1' } });
    expect(w.daemon.lines.some((l) => l.includes('redis.allow_unauthenticated is set, so CLI agents run anyway'))).toBe(true);
    const { target } = await orderTampering(w, Number(new URL(openRedisUrl).port));
    const report = await reportOf(w);
    expect(report.uid).not.toBe(0);
    for (const reply of report.redis) expect(reply).toMatch(/^:\d+$/);
    // Four comments against max_daily_comments 2, and the greeter silenced for the day.
    expect(report.comments).toEqual([201, 201, 201, 201]);
    expect(await commentsBy(w, target, 'coder')).toBe(4);
    const conn = new Redis(openRedisUrl, { maxRetriesPerRequest: 1 });
    cleanups.push(() => Promise.resolve(conn.disconnect()));
    expect(await conn.hget(`${w.prefix}:agent-day:${utcDay()}`, 'greeter|comments')).toBe('1000000000');
  });

  it('`warren run --post` (writes held to the limits in Redis) does not run a CLI agent beside an open Redis either', async () => {
    const hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
    cleanups.push(() => hub.close());
    const workspaces = mkdtempSync(join(tmpdir(), 'warren-redis-auth-run-'));
    chmodSync(workspaces, 0o711);
    const config = join(workspaces, 'warren.yaml');
    writeFileSync(config, `executors: {cli: {workspaces: "${join(workspaces, 'ws')}", binaries: {claude-code: "${TAMPER}"}}}\n`);
    const r = spawnSync(process.execPath, [resolve('bin/warren.js'), 'run', 'coder', '--prompt', 'hi', '--agents', agents(), '--config', config, '--post'], {
      encoding: 'utf8',
      env: { ...process.env, REDIS_URL: openRedisUrl, WARREN_HUB_URL: hub.url, WARREN_HUB_ADMIN_KEY: hub.adminKey, CODER_KEY: 'sk-ant-coder-key', WARREN_ALLOW_OPEN_REDIS: '' },
      timeout: PROCESS_START_MS,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/agent coder cannot run: Redis at redis:\/\/127\.0\.0\.1:\d+\/? answers without credentials/);
  });

  it('a Unix socket the agent\'s user can open is as open as TCP; one in a folder only root can pass is not', async () => {
    const runningAgents = async (w: World): Promise<string[]> => (JSON.parse(await w.daemon.waitForLine(/warren is running/)) as { agents: string[] }).agents;
    for (const [folderMode, refused] of [[0o755, true], [0o700, false]] as const) {
      const folder = mkdtempSync(join(tmpdir(), 'warren-redis-sock-'));
      chmodSync(folder, folderMode);
      const socket = join(folder, 'redis.sock');
      const server = spawn('redis-server', ['--port', '0', '--unixsocket', socket, '--unixsocketperm', '777', '--save', '', '--dir', folder], { stdio: 'ignore' });
      cleanups.push(async () => {
        server.kill('SIGKILL');
        await once(server, 'exit');
      });
      await waitFor('the socket', () => existsSync(socket) || undefined, PROCESS_START_MS);
      const w = await world({ yamlUrl: `unix://${socket}`, env: {} });
      const agents = await runningAgents(w);
      expect(agents.includes('coder'), `folder mode ${folderMode.toString(8)}`).toBe(!refused);
      expect(agents).toContain('greeter');
      expect(w.daemon.lines.some((l) => l.includes('agent coder skipped: Redis at unix://'))).toBe(refused);
    }
  });
});
