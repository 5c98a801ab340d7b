// Finding 4 of the attack run: behavior limits held only when scheduling. Here they must hold at every write:
// the in-process hub tools (the model sees a refusal as the call's result), the gateway a CLI agent can call
// however it likes, and the pipeline's own reply (a typed WriteRefused). Real Redis, real local hub, real HTTP.
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { EventLog } from '../../agent-loop/events.ts';
import { ActivationError, runActivation } from '../../activation/activation.ts';
import { ExecutorRegistry } from '../../services/executor-registry.ts';
import { HubGateway } from '../../services/hub-gateway.ts';
import { RedisReplyOutbox } from '../../activation/reply-outbox.ts';
import { LlmExecutor } from '../../executors/llm/llm-executor.ts';
import { HubClient } from '../../hub-client/client.ts';
import { HubError } from '../../hub-client/errors.ts';
import { startHub, type RunningHub } from '../../local-hub/server.ts';
import { AgentStateStore } from '../../scheduler/agent-state.ts';
import { WriteAllowance, WriteRefused, type WriteRules } from '../../scheduler/write-allowance.ts';
import { AgentConfigSchema, type AgentConfigInput } from '../../store/agent-config.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.ts';
import { hubCaller, type WirePost } from '../support/hub-api.ts';

let redis: Redis;
let hub: RunningHub;
let client: HubClient;
let fake: FakeOpenAI;
let n = 0;
const prefix = (): string => `wl${process.pid}-${++n}`;

beforeAll(async () => {
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  hub = await startHub({ dbPath: ':memory:', port: 0 });
  client = new HubClient({ baseUrl: hub.url, apiKey: hub.adminKey });
  fake = await startFakeOpenAI();
  await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name: 'alice', type: 'human' });
});
afterAll(async () => {
  await fake.close();
  await hub.close();
  redis.disconnect();
});
afterEach(() => fake.reset());

function agent(name: string, behavior: AgentConfigInput['behavior'] = {}, brain: Partial<AgentConfigInput['brain']> = {}): AgentDefinition {
  const config = AgentConfigSchema.parse({
    name,
    type: 'llm',
    brain: { provider: 'openai', model: 'fake-gpt', api_base: fake.url, api_key_env: 'WARREN_TEST_KEY', max_tokens: 500, ...brain },
    capabilities: { grants: ['hub:read', 'hub:write'] },
    behavior,
  });
  return { name, config, systemPrompt: 'x', files: { config: 'c', prompt: 'p' } };
}

async function register(name: string): Promise<void> {
  await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name });
}

async function questionBy(author: string, content = 'What is 6 x 7?'): Promise<string> {
  return (await hubCaller(hub.url).post<{ id: string }>('/posts', hub.adminKey, { content, agent_id: author })).id;
}

async function postsBy(name: string): Promise<number> {
  return (await client.listPosts({ limit: 100 })).posts.filter((p) => p.author.name === name).length;
}

async function commentsBy(name: string, postId: string): Promise<number> {
  const thread = await hubCaller(hub.url).get<WirePost>(`/posts/${postId}?include_comments=true`, hub.adminKey);
  return (thread.comments ?? []).filter((c) => c.author.name === name).length;
}

/** The tool results the model was sent in its last request. */
function toolResults(): string[] {
  const last = fake.requests.at(-1)!.body as { messages: Array<{ role: string; content: unknown }> };
  return last.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
}

const rules = (limits: Partial<WriteRules['limits']>, canCreatePosts = true): WriteRules =>
  ({ can_create_posts: canCreatePosts, limits: { max_daily_posts: 5, max_daily_comments: 50, max_responses_per_thread: 3, min_interval_seconds: 0, ...limits } });

describe('hub tools in the loop', () => {
  it('one reply with 9 hub_post calls and max_daily_posts 1 makes one post; the model is told why the others were refused; the counter says 1', async () => {
    const p = prefix();
    const writes = new WriteAllowance(redis, p);
    const executor = new LlmExecutor({ secret: (k) => (k === 'WARREN_TEST_KEY' ? 'sk-test' : undefined), writes });
    await register('poster-bot');
    const calls = Array.from({ length: 9 }, (_, i) => ({ id: `c${i}`, name: 'hub_post', arguments: { content: `spam ${i}`, community: 'general' } }));
    fake.enqueue({ tool_calls: calls }, 'done');
    const def = agent('poster-bot', { limits: { max_daily_posts: 1, min_interval_seconds: 0 } });
    const events = new EventLog('act-nine-posts');
    const result = await executor.run({ id: events.activationId, definition: def, context: { system: 's', task: 't' }, events, signal: new AbortController().signal, hub: client });

    expect(result.termination).toBe('final');
    expect(await postsBy('poster-bot')).toBe(1);
    const results = toolResults();
    expect(results).toHaveLength(9);
    expect(results.filter((r) => r.includes('refused: max_daily_posts 1 reached'))).toHaveLength(8);
    expect((await new AgentStateStore(redis, p).dailyMany(['poster-bot'])).get('poster-bot')?.posts).toBe(1);

    // The retried activation replays its calls with the same idempotency keys: nothing new, nothing counted twice.
    fake.enqueue({ tool_calls: calls }, 'done');
    const again = new EventLog('act-nine-posts');
    await executor.run({ id: again.activationId, definition: def, context: { system: 's', task: 't' }, events: again, signal: new AbortController().signal, hub: client });
    expect(await postsBy('poster-bot')).toBe(1);
    expect((await new AgentStateStore(redis, p).dailyMany(['poster-bot'])).get('poster-bot')?.posts).toBe(1);
    expect(toolResults().filter((r) => r.includes('refused'))).toHaveLength(8);
  });

  it('max_responses_per_thread and min_interval_seconds refuse replies as tool results', async () => {
    const writes = new WriteAllowance(redis, prefix());
    const executor = new LlmExecutor({ secret: (k) => (k === 'WARREN_TEST_KEY' ? 'sk-test' : undefined), writes });
    await register('thread-bot');
    const post = await questionBy('alice');
    const reply = (i: number, postId = post) => ({ id: `r${i}`, name: 'hub_reply', arguments: { post_id: postId, content: `reply ${i}` } });
    fake.enqueue({ tool_calls: [reply(1), reply(2), reply(3)] }, 'done');
    const def = agent('thread-bot', { limits: { max_responses_per_thread: 2, min_interval_seconds: 0 } });
    const events = new EventLog('act-thread');
    await executor.run({ id: events.activationId, definition: def, context: { system: 's', task: 't' }, events, signal: new AbortController().signal, hub: client });
    expect(await commentsBy('thread-bot', post)).toBe(2);
    expect(toolResults().filter((r) => r.includes(`refused: max_responses_per_thread 2 reached in post ${post}`))).toHaveLength(1);

    const spaced = agent('thread-bot', { limits: { min_interval_seconds: 3600 } });
    const other = await questionBy('alice', 'another question');
    fake.enqueue({ tool_calls: [reply(4, other), reply(5, other)] }, 'done');
    const later = new EventLog('act-interval');
    await executor.run({ id: later.activationId, definition: spaced, context: { system: 's', task: 't' }, events: later, signal: new AbortController().signal, hub: client });
    expect(await commentsBy('thread-bot', other)).toBe(0); // the last write was moments ago
    expect(toolResults().every((r) => /refused: min_interval_seconds 3600: the next write is allowed in \d+ s/.test(r))).toBe(true);
  });
});

describe('the hub gateway of CLI agents', () => {
  let gateway: HubGateway;
  let p: string;
  beforeAll(async () => {
    p = prefix();
    gateway = await HubGateway.start({ hubUrl: hub.url, adminKey: hub.adminKey, writes: new WriteAllowance(redis, p), logger: pino({ level: 'silent' }) });
  });
  afterAll(() => gateway.close());

  const send = (token: string, path: string, body: unknown, key?: string) =>
    fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }, body: JSON.stringify(body) });

  it('can_create_posts: false refuses a post made straight through the gateway, and no post appears', async () => {
    await register('cli-replier');
    const def = agent('cli-replier', { can_create_posts: false, limits: { min_interval_seconds: 0 } });
    const t = gateway.issue('cli-replier', ['hub:read', 'hub:write'], 60_000, def.config.behavior);
    const res = await send(t.token, '/api/v1/posts', { content: 'a post I may not make', community: 'general' });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ limit: 'can_create_posts', detail: expect.stringContaining('refused: can_create_posts') as unknown });
    expect(await postsBy('cli-replier')).toBe(0);
    // Replies are still fine.
    const post = await questionBy('alice');
    expect((await send(t.token, `/api/v1/posts/${post}/comments`, { content: 'a reply' })).status).toBe(201);
  });

  it('daily comments count across tokens; a write the hub refuses gives its reservation back; a replay passes uncounted', async () => {
    await register('cli-counter');
    const def = agent('cli-counter', { limits: { max_daily_comments: 2, min_interval_seconds: 0 } });
    const first = gateway.issue('cli-counter', ['hub:write'], 60_000, def.config.behavior);
    const post = await questionBy('alice');
    expect((await send(first.token, '/api/v1/posts/no-such-post/comments', { content: 'lost' })).status).toBe(404);
    expect((await send(first.token, `/api/v1/posts/${post}/comments`, { content: 'one' }, 'k-one')).status).toBe(201);
    expect((await send(first.token, `/api/v1/posts/${post}/comments`, { content: 'one' }, 'k-one')).status).toBe(201); // replay
    first.revoke();
    const second = gateway.issue('cli-counter', ['hub:write'], 60_000, def.config.behavior);
    expect((await send(second.token, `/api/v1/posts/${post}/comments`, { content: 'two' })).status).toBe(201);
    const third = await send(second.token, `/api/v1/posts/${post}/comments`, { content: 'three' });
    expect(third.status).toBe(403);
    expect(await third.json()).toMatchObject({ limit: 'max_daily_comments', detail: 'refused: max_daily_comments 2 reached' });
    expect(await commentsBy('cli-counter', post)).toBe(2);
    expect((await new AgentStateStore(redis, p).dailyMany(['cli-counter'])).get('cli-counter')?.comments).toBe(2);
  });

  it('a reused idempotency key is no way around the limits: another kind of write, another thread or an encoded path is checked and counted', async () => {
    await register('cli-reuser');
    const def = agent('cli-reuser', { can_create_posts: false, limits: { max_daily_comments: 2, min_interval_seconds: 0 } });
    const t = gateway.issue('cli-reuser', ['hub:read', 'hub:write'], 60_000, def.config.behavior);
    const a = await questionBy('alice');
    const b = await questionBy('alice');
    expect((await send(t.token, `/api/v1/posts/${a}/comments`, { content: 'one' }, 'k-reused')).status).toBe(201);
    // The same key for a post it may not make: refused, not taken for a replay.
    expect((await send(t.token, '/api/v1/posts', { content: 'sneaky post', community: 'general' }, 'k-reused')).status).toBe(403);
    expect(await postsBy('cli-reuser')).toBe(0);
    // The same key on another thread: a new comment, counted (the 2nd of 2).
    expect((await send(t.token, `/api/v1/posts/${b}/comments`, { content: 'two' }, 'k-reused')).status).toBe(201);
    // The same key on the first thread under a percent-encoded path: the hub sees the canonical path, so it is a replay
    // of comment one there, not a third comment.
    const encoded = a.replace(/^./, (c) => `%${c.charCodeAt(0).toString(16)}`);
    expect((await send(t.token, `/posts/${encoded}/comments`, { content: 'one' }, 'k-reused')).status).toBe(201);
    expect(await commentsBy('cli-reuser', a)).toBe(1);
    expect((await send(t.token, `/api/v1/posts/${b}/comments`, { content: 'three' }, 'k-three')).status).toBe(403);
  });

  it('what a CLI writes through the gateway passes the daemon redaction', async () => {
    const canary = 'gw-canary-4c1d9e7f2a';
    const redacting = await HubGateway.start({ hubUrl: hub.url, adminKey: hub.adminKey, writes: new WriteAllowance(redis, p), redact: (text) => text.split(canary).join('[REDACTED]'), logger: pino({ level: 'silent' }) });
    try {
      await register('cli-leaker');
      const def = agent('cli-leaker', { limits: { min_interval_seconds: 0 } });
      const t = redacting.issue('cli-leaker', ['hub:write'], 60_000, def.config.behavior);
      const post = await questionBy('alice');
      const res = await fetch(`${redacting.url}/api/v1/posts/${post}/comments`, { method: 'POST', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ content: `my key is ${canary}` }) });
      expect(res.status).toBe(201);
      const thread = await client.getPost(post, { includeComments: true });
      expect(JSON.stringify(thread)).not.toContain(canary);
      expect(thread.comments?.some((c) => c.content === 'my key is [REDACTED]')).toBe(true);
    } finally {
      await redacting.close();
    }
  });
});

describe('the pipeline’s own reply', () => {
  const pipeline = (p: string, def: ReturnType<typeof agent>) => ({
    hub: client,
    agents: { get: (name: string) => (name === def.name ? def : undefined) },
    executors: new ExecutorRegistry(new LlmExecutor({ secret: () => undefined })),
    outbox: new RedisReplyOutbox(redis, p),
    writes: new WriteAllowance(redis, p),
    logger: pino({ level: 'silent' }),
    redact: (text: string) => text,
  });

  it('a thread that has had its answers: nothing reaches the hub, the notification is handled, no failure', async () => {
    const p = prefix();
    await register('pipe-bot');
    const def = agent('pipe-bot', { limits: { max_responses_per_thread: 0 } }, { provider: 'scripted', responses: ['42, of course.'] });
    const post = await questionBy('alice', '@pipe-bot what is 6 x 7?');
    const outcome = await runActivation(pipeline(p, def), 'act-pipe', { agent: 'pipe-bot', trigger: 'notification', enqueuedAt: Date.now() }, new AbortController().signal);
    expect(outcome.outcome).toEqual({ kind: 'no_action', reason: 'max_responses_per_thread' });
    expect(await commentsBy('pipe-bot', post)).toBe(0);
    expect(outcome.handled).toHaveLength(1);
  });

  it('a reply the hub refuses (the post is gone) gives its count back: the daily limit is not spent on it', async () => {
    const p = prefix();
    await register('gone-bot');
    const def = agent('gone-bot', { limits: { max_daily_comments: 1, min_interval_seconds: 0 } }, { provider: 'scripted', responses: ['42.'] });
    await questionBy('alice', '@gone-bot what is 6 x 7?');
    // The hub answers 404 to the reply, as it does when the thread was deleted meanwhile.
    const refusing = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop === 'createComment') return () => Promise.reject(new HubError({ method: 'POST', path: '/posts/x/comments', status: 404, detail: 'post not found', retryable: false }));
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const err = await runActivation({ ...pipeline(p, def), hub: refusing }, 'act-gone', { agent: 'gone-bot', trigger: 'notification', enqueuedAt: Date.now() }, new AbortController().signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as ActivationError).outcome).toMatchObject({ kind: 'terminal_failure', source: 'hub' });
    expect((await new AgentStateStore(redis, p).dailyMany(['gone-bot'])).get('gone-bot')?.comments).toBe(0);
  });

  it('a daily limit: a typed WriteRefused behind a failure that comes back on the next UTC day, nothing on the hub', async () => {
    const p = prefix();
    await register('daily-bot');
    const def = agent('daily-bot', { limits: { max_daily_comments: 0 } }, { provider: 'scripted', responses: ['42, of course.'] });
    const post = await questionBy('alice', '@daily-bot what is 6 x 7?');
    const err = await runActivation(pipeline(p, def), 'act-daily', { agent: 'daily-bot', trigger: 'notification', enqueuedAt: Date.now() }, new AbortController().signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ActivationError);
    const failure = err as ActivationError;
    expect(failure.cause).toBeInstanceOf(WriteRefused);
    expect(failure.cause).toMatchObject({ agent: 'daily-bot', limit: 'max_daily_comments' });
    expect(failure.outcome.kind).toBe('retryable_failure');
    const now = new Date();
    const nextDay = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(Math.abs(Date.now() + (failure.retryAfterMs ?? 0) - nextDay)).toBeLessThan(5_000);
    expect(await commentsBy('daily-bot', post)).toBe(0);
  });
});

describe('the one decision', () => {
  it('is atomic: 20 concurrent comments under max_daily_comments 5 let exactly 5 through', async () => {
    const writes = new WriteAllowance(redis, prefix());
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => writes.reserve('racer', rules({ max_daily_comments: 5 }), { kind: 'comment', postId: `p${i}`, idempotencyKey: `k${i}` })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    expect(outcomes.filter((o) => o.status === 'rejected' && o.reason instanceof WriteRefused && o.reason.limit === 'max_daily_comments')).toHaveLength(15);
  });

  it('min_interval_seconds says when the next write is allowed, and days are counted in UTC', async () => {
    const writes = new WriteAllowance(redis, prefix());
    const t0 = Date.parse('2026-03-01T23:59:30Z');
    const spaced = rules({ min_interval_seconds: 60 });
    await writes.reserve('pacer', spaced, { kind: 'comment', postId: 'a', idempotencyKey: 'x1' }, t0);
    const early = await writes.reserve('pacer', spaced, { kind: 'comment', postId: 'b', idempotencyKey: 'x2' }, t0 + 20_000).catch((e: unknown) => e);
    expect(early).toMatchObject({ limit: 'min_interval_seconds', retryAfterMs: 40_000, retryable: true });

    const once = rules({ max_daily_comments: 1 });
    await writes.reserve('daily', once, { kind: 'comment', postId: 'a', idempotencyKey: 'y1' }, t0);
    const again = await writes.reserve('daily', once, { kind: 'comment', postId: 'b', idempotencyKey: 'y2' }, t0 + 1_000).catch((e: unknown) => e);
    expect(again).toMatchObject({ limit: 'max_daily_comments', retryable: false });
    // Half a minute later it is a new UTC day: the daily limit starts over.
    expect(await writes.reserve('daily', once, { kind: 'comment', postId: 'b', idempotencyKey: 'y2' }, t0 + 31_000)).toMatchObject({ replay: false, day: '2026-03-02' });
  });
});
