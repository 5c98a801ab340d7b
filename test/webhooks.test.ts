// Inbound webhooks through the real daemon and its ingress: a signed delivery runs once however often it is
// delivered; unsigned, unknown, oversized and rate-limited deliveries are refused without touching the task inbox
// or the activation queue; the hook's secret reaches no log and no Redis key.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ActivationRecords } from '../activation/activation-records.ts';
import { formatRecordLine } from '../daemon/ops/logs.ts';
import { signBody } from '../policy/hub-signature.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { TaskInbox } from '../scheduler/task-inbox.ts';
import { WEBHOOK_MAX_BYTES } from '../daemon/webhooks/webhook-route.ts';
import { waitFor } from './support/hub-api.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';

const redisUrl = inject('redisUrl');
const SECRET = `whsec-canary-${randomUUID()}`;
let h: Harness | undefined;
const conns: Redis[] = [];
const queues: ActivationQueue[] = [];
afterEach(async () => {
  for (const q of queues.splice(0)) await q.close();
  await h?.stop();
  h = undefined;
  for (const c of conns.splice(0)) await c.quit();
});

const clerk = `name: clerk
type: llm
brain: {provider: scripted, model: m, responses: ["Deploy summarised."]}
capabilities: {grants: [hub:read]}
webhooks:
  - name: deploys
    secret_env: DEPLOY_HOOK_SECRET
    per_minute: 4
    task: |
      A {{header.x-github-event}} event for {{payload.repository.full_name}}:
      {{payload}}
`;

async function start(): Promise<{ url: string; inbox: TaskInbox; queue: ActivationQueue; redis: Redis }> {
  h = await startHarness({
    redisUrl,
    agentsDir: makeAgentsDir({ clerk: { config: clerk, prompt: 'You are a clerk.' } }, { withGreeter: false }),
    env: { DEPLOY_HOOK_SECRET: SECRET },
    // No exploration: the only activations are the deliveries'.
    config: (c) => void (c.scheduler.exploration_interval = 3_600_000),
  });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  conns.push(redis);
  const queue = new ActivationQueue(redis, { prefix: h.prefix, logger: pino({ level: 'silent' }) });
  queues.push(queue);
  expect(h.daemon.ingressUrl).toBeDefined();
  return { url: h.daemon.ingressUrl!, inbox: new TaskInbox(redis, h.prefix), queue, redis };
}

function deliver(url: string, body: string, headers: Record<string, string> = {}, secret = SECRET): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-hub-signature-256': signBody(secret, body), ...headers } });
}

/** Every string Redis holds under the prefix, keys and values, for the canary. */
async function everythingIn(redis: Redis, prefix: string): Promise<string> {
  const out: string[] = [];
  for (const key of await redis.keys(`${prefix}*`)) {
    out.push(key);
    const type = await redis.type(key);
    if (type === 'string') out.push((await redis.get(key)) ?? '');
    else if (type === 'hash') out.push(JSON.stringify(await redis.hgetall(key)));
    else if (type === 'zset') out.push(JSON.stringify(await redis.zrange(key, 0, -1)));
    else if (type === 'list') out.push(JSON.stringify(await redis.lrange(key, 0, -1)));
    else if (type === 'set') out.push(JSON.stringify(await redis.smembers(key)));
    else if (type === 'stream') out.push(JSON.stringify(await redis.xrange(key, '-', '+')));
  }
  return out.join('\n');
}

describe('inbound webhooks', () => {
  it('a signed delivery delivered three times runs once, as a task with the rendered, redacted payload', async () => {
    const { url, inbox, redis } = await start();
    const body = JSON.stringify({ repository: { full_name: 'acme/site' }, ref: 'refs/heads/main', leaked: SECRET });
    const headers = { 'x-github-event': 'push', 'x-github-delivery': `d-${randomUUID()}` };
    const answers = await Promise.all([1, 2, 3].map(() => deliver(`${url}/hooks/clerk/deploys`, body, headers)));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202]);
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as Array<{ task_id: string; status: string }>;
    expect(new Set(bodies.map((b) => b.task_id))).toEqual(new Set([`webhook:deploys:${headers['x-github-delivery']}`]));
    expect(bodies.filter((b) => b.status === 'queued')).toHaveLength(1);
    await waitFor('the task activation', () => h!.outcomes.some((o) => o.trigger === 'task') || undefined, 30_000);
    await waitFor('the task settled', async () => (await inbox.pending('clerk')) === 0 || undefined, 30_000);
    // A fourth delivery after the run adds nothing either.
    expect(((await (await deliver(`${url}/hooks/clerk/deploys`, body, headers)).json()) as { status: string }).status).toBe('duplicate');
    const asked = JSON.stringify(h!.outcomes.find((o) => o.trigger === 'task')!.events.find((e) => e.type === 'user_message'));
    expect(asked).toContain('A push event for acme/site');
    expect(asked).toContain('refs/heads/main');
    expect(asked).not.toContain(SECRET);
    expect(h!.outcomes.filter((o) => o.trigger === 'task' && o.outcome.kind === 'answered')).toHaveLength(1);
    // The run is found by the id the sender was given: its record (and `warren logs` line) names the task.
    const taskId = bodies[0]!.task_id;
    const record = (await new ActivationRecords(redis, h!.prefix).lastOf(['clerk'])).get('clerk');
    expect(record).toMatchObject({ trigger: 'task', task_id: taskId });
    expect(formatRecordLine(record!)).toContain(`task ${taskId}`);
  });

  it('without a delivery id the same body counts as one delivery', async () => {
    const { url } = await start();
    const body = JSON.stringify({ n: randomUUID() });
    const [a, b] = await Promise.all([deliver(`${url}/hooks/clerk/deploys`, body), deliver(`${url}/hooks/clerk/deploys`, body)]);
    const ids = [((await a.json()) as { task_id: string }).task_id, ((await b.json()) as { task_id: string }).task_id];
    expect(ids[0]).toMatch(/^webhook:deploys:body-[0-9a-f]{32}$/);
    expect(ids[1]).toBe(ids[0]);
  });

  it('401, 404 (unknown agent or hook alike), 413 at the cap and 429 leave the inbox and the queue untouched', async () => {
    const { url, inbox, queue, redis } = await start();
    const before = await queue.counts();
    const body = JSON.stringify({ hello: 'world' });
    const bad = await deliver(`${url}/hooks/clerk/deploys`, body, { 'x-github-delivery': 'x1' }, 'not-the-secret');
    expect(bad.status).toBe(401);
    const unsigned = await fetch(`${url}/hooks/clerk/deploys`, { method: 'POST', body });
    expect(unsigned.status).toBe(401);
    const noAgent = await deliver(`${url}/hooks/nobody/deploys`, body);
    const noHook = await deliver(`${url}/hooks/clerk/releases`, body);
    expect([noAgent.status, noHook.status]).toEqual([404, 404]);
    expect(await noAgent.json()).toEqual(await noHook.json());
    // 1 MB, correctly signed: refused at the documented cap.
    const big = JSON.stringify({ blob: 'x'.repeat(1024 * 1024) });
    expect(big.length).toBeGreaterThan(WEBHOOK_MAX_BYTES);
    expect((await deliver(`${url}/hooks/clerk/deploys`, big)).status).toBe(413);
    expect(await inbox.pending('clerk')).toBe(0);
    expect(await redis.keys(`${h!.prefix}:*task*`)).toEqual([]);
    expect(await queue.counts()).toEqual(before);
    expect(h!.outcomes).toHaveLength(0);
    const all = await everythingIn(redis, h!.prefix);
    expect(all).not.toContain(SECRET);
    expect(h!.logs.join('\n')).not.toContain(SECRET);
  });

  it('rate limits a hook per minute: the fifth delivery in a minute is 429 with Retry-After and adds no task', async () => {
    const { url, inbox } = await start();
    // Four deliveries in one fixed window: not across a minute's edge.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await deliver(`${url}/hooks/clerk/deploys`, JSON.stringify({ i }), { 'idempotency-key': `k-${i}-${randomUUID()}` })).status);
    expect(statuses).toEqual([202, 202, 202, 202, 429]);
    const limited = await deliver(`${url}/hooks/clerk/deploys`, JSON.stringify({ i: 9 }), { 'idempotency-key': `k-9` });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const answered = (): number => h!.outcomes.filter((o) => o.trigger === 'task' && o.outcome.kind === 'answered').length;
    await waitFor('the four accepted tasks run', () => answered() >= 4 || undefined, 60_000);
    await waitFor('the inbox empty', async () => (await inbox.pending('clerk')) === 0 || undefined, 30_000);
    expect(answered()).toBe(4);
  });
});
