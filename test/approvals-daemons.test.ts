// Approvals across real daemon processes on one private Redis (README "Approvals"): an agent whose posts need a
// person's yes. Each daemon reaches the hub through its own proxy, so the test sees which daemon made which call and
// can hold a call in flight. A hub_post call pauses the run (no call made, outcome awaiting_approval, the agent free
// for its next mention); with every daemon stopped the request is still there; `warren approvals approve` with no
// daemon running, then a second daemon resumes the run and the post is made once; a denial gives the model the
// operator's note as the call's result; a timeout denies; and a daemon SIGKILLed with the approved call in flight
// leaves it to the other daemon, which makes it once (the same idempotency key: one post on the hub).
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ActivationRecords } from '../activation/activation-records.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { ApprovalStore } from '../scheduler/approval-store.ts';
import { TIMEOUT_NOTE } from '../scheduler/approval-desk.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { startHoldingProxy, type HoldingProxy, type ProxiedRequest } from './support/holding-proxy.ts';
import { hubCaller, waitFor, type HubCaller, type WirePost } from './support/hub-api.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';
import { warrenCli, type CliTarget } from './support/warren-cli.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';

const WAIT_MS = 60_000;

let redis: PrivateRedis;
let conn: Redis;
let hub: RunningHub;
let api: HubCaller;
let fake: FakeOpenAI;
let proxies: Record<'a' | 'b', HoldingProxy>;
let agentsDir: string;
let prefix: string;
let userKey: string;
let store: ApprovalStore;
const running: WarrenProcess[] = [];
/** The daemon now running behind each proxy. */
const byProxy: Partial<Record<'a' | 'b', WarrenProcess>> = {};

const agent = (name: string, approvals: string): string => `name: ${name}
type: llm
brain: {provider: openai, model: fake-gpt, api_base: FAKE_URL, api_key_env: APPROVALS_MODEL_KEY}
capabilities: {grants: [hub:read, hub:write]}
behavior: {limits: {min_interval_seconds: 0}, discovery: {enabled: false}}
approvals: ${approvals}
`;

/** The model: asked to announce X, it calls hub_post; given a call's result, it says what it got; asked for hi, hi. */
function model(): void {
  fake.setResponder((req) => {
    const messages = (req.body as { messages: Array<{ role: string; content: string | null }> }).messages;
    const result = messages.findLast((m) => m.role === 'tool');
    if (result) return { content: `after the call: ${result.content}` };
    const asked = messages.filter((m) => m.role === 'user').map((m) => m.content ?? '').join('\n');
    if (asked.includes('just say hi')) return { content: 'hi' };
    const what = /announce (\w+)/.exec(asked)?.[1] ?? 'nothing';
    return { tool_calls: [{ name: 'hub_post', arguments: { title: `News ${what}`, content: `We announce ${what}.` } }] };
  });
}

function daemon(which: 'a' | 'b'): WarrenProcess {
  const p = startWarren({ hubUrl: proxies[which].url, adminKey: hub.adminKey, redisUrl: redis.url, prefix, agentsDir, env: { APPROVALS_MODEL_KEY: 'sk-approvals' } });
  running.push(p);
  byProxy[which] = p;
  return p;
}

async function ready(p: WarrenProcess): Promise<WarrenProcess> {
  await p.waitForLine(/warren is running/, PROCESS_START_MS);
  return p;
}

async function stop(p: WarrenProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  p.kill(signal);
  await p.exited;
}

const cliTarget = (): CliTarget => ({ hubUrl: hub.url, redisUrl: redis.url, prefix, agentsDir });
const approvalsCli = (args: string[]) => warrenCli(cliTarget(), ['approvals', ...args], { WARREN_HUB_ADMIN_KEY: hub.adminKey });

/** A post the agent's hub_post makes (not warren's own status posts). */
const isPost = (r: ProxiedRequest): boolean => r.method === 'POST' && new URL(r.path, 'http://x').pathname.endsWith('/posts') && r.body.includes('We announce');
const postsMade = (): ProxiedRequest[] => [...proxies.a.requests, ...proxies.b.requests].filter(isPost);

async function mention(text: string): Promise<string> {
  return (await api.post<{ id: string }>('/posts', userKey, { title: 'for the poster', content: text })).id;
}

async function replyIn(postId: string, by: string): Promise<string | undefined> {
  const p = await api.get<WirePost>(`/posts/${postId}?include_comments=true`, hub.adminKey);
  return p.comments?.find((c) => c.author.name === by)?.content;
}

/** The request of `agent` waiting (not decided), once there is one more than `before`. */
async function waitingRequest(agentName: string, except: ReadonlySet<string> = new Set()): Promise<string> {
  return waitFor(`an approval request of ${agentName}`, async () => (await store.open()).find((e) => e.request.agent === agentName && !e.decision && !except.has(e.request.id))?.request.id, WAIT_MS, 100);
}

async function postsBy(name: string): Promise<Array<{ title: string | null; content: string }>> {
  const feed = await api.get<{ posts: Array<{ title: string | null; content: string; author: { name: string } }> }>('/posts?sort=new&limit=50', hub.adminKey);
  return feed.posts.filter((p) => p.author.name === name);
}

beforeAll(async () => {
  redis = await startPrivateRedis();
  conn = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
  api = hubCaller(hub.url);
  fake = await startFakeOpenAI();
  model();
  proxies = { a: await startHoldingProxy(hub.url), b: await startHoldingProxy(hub.url) };
  prefix = `approvals-${randomUUID().slice(0, 8)}`;
  store = new ApprovalStore(conn, prefix);
  agentsDir = makeAgentsDir(
    {
      poster: { config: agent('poster', '{tools: [hub_post]}').replace('FAKE_URL', fake.url), prompt: 'You are {{name}}.' },
      hasty: { config: agent('hasty', '{tools: [hub_post], timeout: 1s}').replace('FAKE_URL', fake.url), prompt: 'You are {{name}}.' },
    },
    { withGreeter: false },
  );
  ({ api_key: userKey } = await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'dana', type: 'human' }));
}, PROCESS_TEST_MS);

afterAll(async () => {
  // APPROVALS_DEBUG_DIR=<dir>: each daemon's log lines and the prefix's Redis keys, for reading a failure afterwards.
  if (process.env.APPROVALS_DEBUG_DIR) {
    running.forEach((p, i) => writeFileSync(`${process.env.APPROVALS_DEBUG_DIR}/daemon-${i}.log`, p.lines.join('\n')));
    const keys = await conn.keys(`${prefix}*`);
    const dump: Record<string, unknown> = {};
    for (const k of keys) {
      const t = await conn.type(k);
      dump[k] = t === 'string' ? await conn.get(k) : t === 'zset' ? await conn.zrange(k, 0, -1, 'WITHSCORES') : t === 'hash' ? await conn.hgetall(k) : t === 'list' ? await conn.lrange(k, 0, -1) : t;
    }
    writeFileSync(`${process.env.APPROVALS_DEBUG_DIR}/redis.json`, JSON.stringify(dump, null, 1));
  }
  for (const p of running) await stop(p, 'SIGKILL').catch(() => undefined);
  await proxies?.a.close();
  await proxies?.b.close();
  await fake?.close();
  await hub?.close();
  conn?.disconnect();
  await redis?.stop();
});

describe('approvals across daemons', { timeout: PROCESS_TEST_MS }, () => {
  let first: { approval: string; post: string };
  let timedOut: { approval: string; post: string };

  it('a call that needs approval pauses the run: no call made, outcome awaiting_approval, the agent free for its next mention', async () => {
    const a = await ready(daemon('a'));
    const post = await mention('@poster please announce Zebra');
    const approval = await waitingRequest('poster');
    first = { approval, post };
    const entry = (await store.get(approval))!;
    expect(entry.request.calls.map((c) => [c.name, c.arguments])).toEqual([['hub_post', '{"title":"News Zebra","content":"We announce Zebra."}']]);
    const records = new ActivationRecords(conn, prefix);
    const record = await waitFor('the paused activation record', async () => (await records.recent({ agent: 'poster' })).find((r) => r.outcome === 'awaiting_approval'), WAIT_MS, 100);
    expect(record.error).toBeUndefined();
    // The slot is released: the next mention is answered while the approval waits.
    const hi = await mention('@poster just say hi');
    expect(await waitFor('the hi reply', () => replyIn(hi, 'poster'), WAIT_MS, 100)).toBe('hi');
    expect(postsMade()).toEqual([]);
    expect(await replyIn(post, 'poster')).toBeUndefined();

    // hasty's request times out in a second; the daemons are all stopped before anyone sweeps it.
    const hastyPost = await mention('@hasty please announce Quokka');
    timedOut = { approval: await waitingRequest('hasty'), post: hastyPost };
    await stop(a);
  });

  it('every daemon stopped loses no pending approval: approved with the CLI and no daemon running, a second daemon resumes it, the post is made once', async () => {
    const listed = await approvalsCli(['list', '--json']);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as Array<{ id: string; status: string }>).map((r) => [r.id, r.status]).sort()).toEqual([[first.approval, 'waiting'], [timedOut.approval, 'waiting']].sort());
    const approved = await approvalsCli(['approve', first.approval]);
    expect(approved.code).toBe(0);

    await ready(daemon('b'));
    // The resumed run makes the call first, then asks the model again; a run that posted ends as posted_by_tool.
    const records = new ActivationRecords(conn, prefix);
    const resumed = await waitFor('the resumed run', async () => (await records.recent({ agent: 'poster' })).find((r) => r.trigger === 'task' && r.outcome !== 'skipped'), WAIT_MS, 100);
    expect(resumed).toMatchObject({ outcome: 'posted_by_tool', posts: 1 });
    expect(proxies.a.requests.filter(isPost)).toEqual([]);
    expect(proxies.b.requests.filter(isPost)).toHaveLength(1);
    expect(await postsBy('poster')).toEqual([expect.objectContaining({ title: 'News Zebra', content: 'We announce Zebra.' })]);
    await waitFor('the request done', async () => ((await store.isOpen(first.approval)) ? undefined : true), WAIT_MS, 100);
    // A second decision is told the first; nothing runs again.
    const again = await approvalsCli(['deny', first.approval, '--note', 'too late']);
    expect(again.code).toBe(2);
    expect(again.stdout).toContain(`${first.approval} was already approved by admin`);
  });

  it('the timeout denies: the model reads that nobody decided as the result, and goes on', async () => {
    const reply = await waitFor('the timed-out reply', () => replyIn(timedOut.post, 'hasty'), WAIT_MS, 100);
    expect(reply).toContain(TIMEOUT_NOTE);
    expect((await store.get(timedOut.approval))?.decision).toMatchObject({ kind: 'denied', by: 'timeout' });
    expect(await postsBy('hasty')).toEqual([]);
  });

  it("deny gives the model the operator's note as the call's result", async () => {
    const before = postsMade().length;
    const post = await mention('@poster please announce Yak');
    const approval = await waitingRequest('poster', new Set([first.approval]));
    const denied = await approvalsCli(['deny', approval, '--note', 'not before the launch, ask Dana']);
    expect(denied.code).toBe(0);
    const reply = await waitFor('the denied reply', () => replyIn(post, 'poster'), WAIT_MS, 100);
    expect(reply).toContain('Their note: not before the launch, ask Dana');
    expect(postsMade()).toHaveLength(before);
  });

  it('SIGKILL of the daemon making the approved call: the other daemon finishes it, and the post is made once', async () => {
    await ready(daemon('a'));
    const post = await mention('@poster please announce Walrus');
    const approval = await waitingRequest('poster', new Set((await store.done()).map((e) => e.request.id)));
    // Whichever daemon carries the decision out, its call is held in flight at its proxy.
    const walrus = (r: ProxiedRequest): boolean => isPost(r) && r.body.includes('Walrus');
    const inFlight = Promise.race([proxies.a.hold(walrus).then(() => 'a' as const), proxies.b.hold(walrus).then(() => 'b' as const)]);
    expect((await approvalsCli(['approve', approval])).code).toBe(0);
    const maker = await inFlight;
    const other = maker === 'a' ? 'b' : 'a';
    await proxies[other].release(); // holds nothing: the other daemon's calls go through from now on
    await stop(byProxy[maker]!, 'SIGKILL');
    // The call it made lands after all (it died before hearing the answer): the replay must not make a second post.
    await proxies[maker].release();

    await waitFor('the request done after the takeover', async () => ((await store.isOpen(approval)) ? undefined : true), WAIT_MS, 100);
    const walrusCalls = postsMade().filter((r) => r.body.includes('Walrus'));
    expect(walrusCalls.map((r) => r.headers['idempotency-key'])).toEqual([walrusCalls[0]!.headers['idempotency-key'], walrusCalls[0]!.headers['idempotency-key']]);
    expect(proxies[other].requests.filter(walrus)).toHaveLength(1);
    expect((await postsBy('poster')).filter((p) => p.title === 'News Walrus')).toHaveLength(1);
    // The mention itself is not answered twice either: a run that posted does not also reply.
    expect(await replyIn(post, 'poster')).toBeUndefined();
  });
});
