// CLI agents' hub writes that need approval (README "Approvals"), at the gateway and where the daemon makes them:
// against the real local hub and a real Redis. A write the agent's approvals.tools name is not made: it becomes one
// request per idempotency key (redacted), answered 202 "held for approval"; a decided request is carried out by
// approval-resume.ts: approved, the write is made once however often its task is offered; denied, nothing.
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { EventLog } from '../agent-loop/events.ts';
import { carryOutApproval } from '../activation/approval-resume.ts';
import type { Executor } from '../executors/executor.ts';
import { HubClient } from '../hub-client/client.ts';
import { HubWriteHeld } from '../hub-client/write-held.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { RedisKeys } from '../redis/keys.ts';
import { ApprovalStore, type ApprovalRequest } from '../scheduler/approval-store.ts';
import { heldWriteAnswer, heldWriteNames, writeNeedsApproval } from '../services/held-write.ts';
import { HubGateway } from '../services/hub-gateway.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { definition } from './support/cli-agent.ts';
import { hubCaller } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
const CANARY = `gw-canary-${Math.random().toString(36).slice(2)}`;
const redact = (text: string): string => text.split(CANARY).join('[REDACTED]');
const approvals = (tools: string[]) => definition({ type: 'claude-code', approvals: { tools } }).config.approvals!;

let hub: RunningHub;
let redis: Redis;
let gateway: HubGateway;
let bare: HubGateway;
let store: ApprovalStore;
const prefix = `gw-approval-${Math.random().toString(36).slice(2, 8)}`;
const requested: ApprovalRequest[] = [];
beforeAll(async () => {
  hub = await startHub({ dbPath: ':memory:', port: 0 });
  await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name: 'bee' });
  redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  store = new ApprovalStore(redis, prefix);
  gateway = await HubGateway.start({ hubUrl: hub.url, adminKey: hub.adminKey, redact, approvals: { store, onRequested: (r) => requested.push(r) }, logger: pino({ level: 'silent' }) });
  // As `warren run` has it: no approval store.
  bare = await HubGateway.start({ hubUrl: hub.url, adminKey: hub.adminKey, redact, logger: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await gateway.close();
  await bare.close();
  await hub.close();
  redis.disconnect();
});

const send = (gw: HubGateway, token: string, path: string, body: unknown, key?: string) =>
  fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }, body: JSON.stringify(body) });

const postsBy = async (author: string): Promise<Array<{ id: string; content: string }>> => {
  const page = await hubCaller(hub.url).get<{ posts: Array<{ id: string; content: string; author: { name: string } }> }>('/posts?limit=100', hub.adminKey);
  return page.posts.filter((p) => p.author.name === author);
};

/** Every string Redis holds under the prefix, keys and values. */
async function everythingIn(p: string): Promise<string> {
  const out: string[] = [];
  for (const key of await redis.keys(`${p}*`)) {
    out.push(key);
    const type = await redis.type(key);
    if (type === 'string') out.push((await redis.get(key)) ?? '');
    else if (type === 'hash') out.push(JSON.stringify(await redis.hgetall(key)));
    else if (type === 'zset') out.push(JSON.stringify(await redis.zrange(key, 0, -1)));
    else if (type === 'list') out.push(JSON.stringify(await redis.lrange(key, 0, -1)));
    else if (type === 'set') out.push(JSON.stringify(await redis.smembers(key)));
  }
  return out.join('\n');
}

describe('which gateway writes wait (pure)', () => {
  const post = { kind: 'post' as const, idempotencyKey: 'k' };
  const comment = { kind: 'comment' as const, postId: 'p1', idempotencyKey: 'k' };
  const rows: Array<[string, string[], typeof post | typeof comment, string | null, boolean]> = [
    ['a post, hub_post named', ['hub_post'], post, null, true],
    ['a post, only hub_reply named', ['hub_reply'], post, 'm/general', false],
    ['a comment, hub_reply named', ['hub_reply'], comment, null, true],
    ['a comment, hub_post named', ['hub_post'], comment, null, false],
    ['a learning post, post_learning named', ['post_learning'], post, 'm/agent-learnings', true],
    ['an ordinary post, post_learning named', ['post_learning'], post, 'general', false],
    ['any hub write, the CLI server named', ['mcp:hub:*'], comment, null, true],
    ['a wildcard', ['hub_*'], post, null, true],
    ['another server', ['mcp:github:*'], post, null, false],
  ];
  it.each(rows)('%s', (_what, tools, write, community, expected) => {
    expect(writeNeedsApproval(approvals(tools), write, community)).toBe(expected);
  });
  it('without approvals nothing waits; a request shows the write by its first name', () => {
    expect(writeNeedsApproval(undefined, post, null)).toBe(false);
    expect(heldWriteNames(comment, null)[0]).toBe('hub_reply');
  });
});

describe('the gateway holds writes the approvals name', () => {
  it('answers 202 held for approval, makes nothing, keeps one redacted request per key', async () => {
    const t = gateway.issue('bee', ['hub:read', 'hub:write'], 60_000, undefined, undefined, { activationId: 'act-gw-1', approvals: approvals(['hub_post']) });
    const body = { content: `the launch plan, token ${CANARY}`, title: 'Launch', community: 'general' };
    const first = await send(gateway, t.token, '/api/v1/posts', body, 'cli-key-1');
    expect(first.status).toBe(202);
    const answer = (await first.json()) as { held_for_approval: boolean; approval_id: string; status: string; message: string };
    expect(answer).toMatchObject({ held_for_approval: true, status: 'waiting' });
    expect(answer.message).toMatch(/^held for approval \(approval ap_[0-9a-f]{20}\): this post is not on the hub yet/);
    // The same write again (a CLI retrying its call) is the same request, told once.
    const again = await send(gateway, t.token, '/posts', body, 'cli-key-1');
    expect(again.status).toBe(202);
    expect(((await again.json()) as { approval_id: string }).approval_id).toBe(answer.approval_id);
    expect(requested.filter((r) => r.id === answer.approval_id)).toHaveLength(1);
    expect(await postsBy('bee')).toEqual([]);
    const entry = await store.get(answer.approval_id);
    expect(entry?.request.work).toEqual({ kind: 'hub_write', write: { kind: 'post', title: 'Launch', content: 'the launch plan, token [REDACTED]', community: 'general' }, idempotencyKey: 'cli-key-1' });
    expect(entry?.request.calls.map((c) => c.name)).toEqual(['hub_post']);
    expect(await everythingIn(prefix)).not.toContain(CANARY);
    expect(await everythingIn(prefix)).toContain('[REDACTED]');
    // A key with a secret in it is kept redacted too.
    const keyed = (await (await send(gateway, t.token, '/posts', { content: 'keyed' }, `key-${CANARY}`)).json()) as { approval_id: string };
    expect(((await store.get(keyed.approval_id))?.request.work as { idempotencyKey: string }).idempotencyKey).toBe('key-[REDACTED]');
    expect(await everythingIn(prefix)).not.toContain(CANARY);
    t.revoke();
  });

  it('the hub client says HubWriteHeld; writes the approvals do not name pass', async () => {
    const t = gateway.issue('bee', ['hub:read', 'hub:write'], 60_000, undefined, undefined, { activationId: 'act-gw-2', approvals: approvals(['hub_post']) });
    const client = new HubClient({ baseUrl: gateway.url, apiKey: t.token });
    const held = await client.createPost({ agent: 'bee', content: 'needs a yes' }, { idempotencyKey: 'cli-key-2' }).catch((err: unknown) => err);
    expect(held).toBeInstanceOf(HubWriteHeld);
    expect((held as HubWriteHeld).message).toMatch(/^held for approval/);
    // A comment is not named: made at once.
    const target = await hubCaller(hub.url).post<{ id: string }>('/posts', hub.adminKey, { agent_id: 'bee', content: 'a thread' });
    const comment = await client.createComment({ agent: 'bee', postId: target.id, content: 'straight through' }, { idempotencyKey: 'cli-key-3' });
    expect(comment.author.name).toBe('bee');
    t.revoke();
  });

  it('a write sent without a key gets one from the activation and its place: two sends, two requests', async () => {
    const t = gateway.issue('bee', ['hub:write'], 60_000, undefined, undefined, { activationId: 'act-gw-3', approvals: approvals(['hub_post']) });
    const a = (await (await send(gateway, t.token, '/posts', { content: 'one' })).json()) as { approval_id: string };
    const b = (await (await send(gateway, t.token, '/posts', { content: 'two' })).json()) as { approval_id: string };
    expect(a.approval_id).not.toBe(b.approval_id);
    const keys = await Promise.all([a, b].map(async (x) => ((await store.get(x.approval_id))?.request.work as { idempotencyKey: string }).idempotencyKey));
    expect(keys).toEqual(['warren:act-gw-3:gateway:1', 'warren:act-gw-3:gateway:2']);
    t.revoke();
  });

  it('refuses what it cannot hold: an empty post (400), and any such write where no store keeps requests (403)', async () => {
    const t = gateway.issue('bee', ['hub:write'], 60_000, undefined, undefined, { activationId: 'act-gw-4', approvals: approvals(['hub_post']) });
    expect((await send(gateway, t.token, '/posts', { content: '  ' }, 'cli-key-4')).status).toBe(400);
    const r = bare.issue('bee', ['hub:write'], 60_000, undefined, undefined, { activationId: 'act-gw-4', approvals: approvals(['hub_post']) });
    const refused = await send(bare, r.token, '/posts', { content: 'no store here' }, 'cli-key-5');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/wait for approval .*keeps no approval requests/);
    expect((await postsBy('bee')).map((p) => p.content)).not.toContain('no store here');
    t.revoke();
    r.revoke();
  });
});

describe('a held write, decided', () => {
  const def: AgentDefinition = definition({ name: 'bee', type: 'claude-code', approvals: { tools: ['hub_post'] } });
  const noExecutor = { run: () => Promise.reject(new Error('a held write runs no executor')) } as unknown as Executor;
  const resume = (id: string) =>
    carryOutApproval(
      { hub: new HubClient({ baseUrl: hub.url, apiKey: hub.adminKey }), redact, approvals: { store } },
      { def, executor: noExecutor, activationId: `act-resume-${id}`, events: new EventLog(`act-resume-${id}`), signal: new AbortController().signal, log: pino({ level: 'silent' }) },
      id,
    );
  const hold = async (content: string, key: string): Promise<string> => {
    const t = gateway.issue('bee', ['hub:write'], 60_000, undefined, undefined, { activationId: `act-${key}`, approvals: approvals(['hub_post']) });
    const r = (await (await send(gateway, t.token, '/posts', { content }, key)).json()) as { approval_id: string };
    t.revoke();
    return r.approval_id;
  };

  it('approved: posted once as the agent, also when its task is offered again after a crash before the request closed', async () => {
    const id = await hold('approved content', 'cli-key-approve');
    await store.decide(id, 'approved', { by: 'admin' });
    const step = await resume(id);
    expect(step).toMatchObject({ kind: 'done', posts: 1, ending: { outcome: { kind: 'posted_by_tool' } } });
    expect((await postsBy('bee')).filter((p) => p.content === 'approved content')).toHaveLength(1);
    expect(await store.isOpen(id)).toBe(false);
    // The same task again once closed: nothing to do.
    expect(await resume(id)).toMatchObject({ kind: 'done', ending: { outcome: { kind: 'no_action', reason: 'approval_done' } } });
    // A daemon that died after the write and before closing the request: the request is still open, the task offered again.
    await redis.zadd(new RedisKeys(prefix).approvalsOpen, Date.now() + 60_000, id);
    expect(await resume(id)).toMatchObject({ kind: 'done', posts: 1 });
    expect((await postsBy('bee')).filter((p) => p.content === 'approved content')).toHaveLength(1);
    // The CLI sending it again now hears it was approved, and nothing more is made.
    const t = gateway.issue('bee', ['hub:write'], 60_000, undefined, undefined, { activationId: 'act-cli-key-approve', approvals: approvals(['hub_post']) });
    const late = await send(gateway, t.token, '/posts', { content: 'approved content' }, 'cli-key-approve');
    expect(late.status).toBe(202);
    expect(((await late.json()) as { status: string }).status).toBe('approved');
    expect((await postsBy('bee')).filter((p) => p.content === 'approved content')).toHaveLength(1);
    t.revoke();
  });

  it('denied: nothing is made, the request closes, and a resend is told it was denied with the note', async () => {
    const id = await hold('denied content', 'cli-key-deny');
    await store.decide(id, 'denied', { by: 'operator', note: 'not this week' });
    expect(await resume(id)).toMatchObject({ kind: 'done', ending: { outcome: { kind: 'no_action', reason: 'approval_denied' } } });
    expect(await store.isOpen(id)).toBe(false);
    expect((await postsBy('bee')).map((p) => p.content)).not.toContain('denied content');
    const t = gateway.issue('bee', ['hub:write'], 60_000, undefined, undefined, { activationId: 'act-cli-key-deny', approvals: approvals(['hub_post']) });
    const late = await send(gateway, t.token, '/posts', { content: 'denied content' }, 'cli-key-deny');
    expect(late.status).toBe(403);
    expect(((await late.json()) as { detail: string }).detail).toBe(`denied (approval ${id}, by operator): not this week; this post is not made`);
    t.revoke();
  });

  it('approved but impossible (a comment on a thread that is gone): given up, the request closed, nothing made', async () => {
    const t = gateway.issue('bee', ['hub:write'], 60_000, undefined, undefined, { activationId: 'act-gone', approvals: approvals(['hub_reply']) });
    const r = (await (await send(gateway, t.token, '/posts/no-such-post/comments', { content: 'into the void' }, 'cli-key-gone')).json()) as { approval_id: string };
    t.revoke();
    await store.decide(r.approval_id, 'approved', { by: 'admin' });
    const step = await resume(r.approval_id);
    expect(step).toMatchObject({ kind: 'failed', failure: { outcome: { kind: 'terminal_failure' } } });
    expect(await store.isOpen(r.approval_id)).toBe(false);
  });

  it('answers as the request stands (pure)', () => {
    const request = { id: 'ap_x', agent: 'bee', createdAt: 0, expiresAt: 1_000, approvers: ['admin' as const], calls: [{ id: 'held_write', name: 'hub_reply', arguments: '{}' }], work: { kind: 'hub_write' as const, write: { kind: 'comment' as const, postId: 'p', content: 'c', parentId: null }, idempotencyKey: 'k' } };
    expect(heldWriteAnswer({ request, decision: undefined })).toMatchObject({ status: 202, body: { status: 'waiting' } });
    expect(heldWriteAnswer({ request, decision: { kind: 'approved', note: '', by: 'admin', at: 1 } })).toMatchObject({ status: 202, body: { status: 'approved' } });
    expect(heldWriteAnswer({ request, decision: { kind: 'denied', note: '', by: 'timeout', at: 1 } })).toEqual({ status: 403, body: { approval_id: 'ap_x', detail: 'denied (approval ap_x, by timeout); this comment is not made' } });
  });
});
