// A CLI agent's hub write held for approval, through the daemon (README "Approvals"): the real `claude` CLI (against
// the fake Anthropic server) replies through the real `warren mcp hub` and the daemon's gateway; its agent's
// approvals name hub_reply, so the reply is held: nothing on the hub, the tool result says "held for approval",
// one request however often the CLI sends the same write, no canary in Redis. Approved through the desk, the
// daemon posts it once as the agent, also when the decision is handed on again and the task is offered again;
// denied, nothing is posted.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RedisKeys } from '../redis/keys.ts';
import { ApprovalDesk, approvalTask } from '../scheduler/approval-desk.ts';
import { ApprovalStore } from '../scheduler/approval-store.ts';
import { TaskInbox } from '../scheduler/task-inbox.ts';
import { startFakeAnthropic, type FakeAnthropic } from './fakes/anthropic-server.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
const CLAUDE = join(import.meta.dirname, '..', 'node_modules', '.bin', 'claude');
const key = `sk-ant-gw-${Math.random().toString(36).slice(2)}`;

const coder = (apiBase: string): string => `name: coder
description: Writes code.
type: claude-code
brain:
  provider: anthropic
  model: claude-sonnet-4-5
  api_base: ${apiBase}
  api_key_env: CODER_KEY
capabilities:
  grants: [hub:read, hub:write]
behavior:
  max_iterations: 6
  max_duration: 60s
approvals:
  tools: [hub_reply]
  approvers: [admin]
`;

let fake: FakeAnthropic;
let h: Harness;
let redis: Redis;
let store: ApprovalStore;
let desk: ApprovalDesk;
let inbox: TaskInbox;
let userKey: string;
beforeAll(async () => {
  fake = await startFakeAnthropic({ apiKey: key });
  const workspaces = mkdtempSync(join(tmpdir(), 'warren-ws-'));
  h = await startHarness({
    redisUrl,
    agentsDir: makeAgentsDir({ coder: { config: coder(fake.url), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
    env: { CODER_KEY: key, PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspaces },
    config: (c) => {
      c.executors.cli.binaries['claude-code'] = CLAUDE;
      c.executors.cli.workspaces = workspaces;
      c.executors.cli.claude_max_retries = 0;
      // No exploration: the only activations are the mentions' and the approvals'.
      c.scheduler.exploration_interval = 3_600_000;
    },
  });
  redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  store = new ApprovalStore(redis, h.prefix);
  inbox = new TaskInbox(redis, h.prefix);
  // As the CLI's `warren approvals` and the watch page decide: the task goes to the inbox, the scheduler's task round runs it.
  desk = new ApprovalDesk(store, { add: (agent, task) => inbox.add(agent, task) });
  userKey = await h.registerUser('alice');
}, PROCESS_TEST_MS);
afterAll(async () => {
  await h?.stop();
  redis?.disconnect();
  await fake?.close();
});

async function commentsBy(postId: string, author: string): Promise<string[]> {
  const p = await h.api.get<WirePost>(`/posts/${postId}?include_comments=true`, userKey);
  return (p.comments ?? []).filter((c) => c.author.name === author).map((c) => c.content);
}

/** Every string Redis holds under the prefix, keys and values. */
async function everythingIn(prefix: string): Promise<string> {
  const out: string[] = [];
  for (const k of await redis.keys(`${prefix}*`)) {
    out.push(k);
    const type = await redis.type(k);
    if (type === 'string') out.push((await redis.get(k)) ?? '');
    else if (type === 'hash') out.push(JSON.stringify(await redis.hgetall(k)));
    else if (type === 'zset') out.push(JSON.stringify(await redis.zrange(k, 0, -1)));
    else if (type === 'list') out.push(JSON.stringify(await redis.lrange(k, 0, -1)));
    else if (type === 'set') out.push(JSON.stringify(await redis.smembers(k)));
    else if (type === 'stream') out.push(JSON.stringify(await redis.xrange(k, '-', '+')));
  }
  return out.join('\n');
}

/** The model replies with hub_reply, sends the very same reply again once told, then answers in words. */
function replyTwice(postId: () => string, content: string): void {
  fake.setResponder((req) => {
    const results = (JSON.stringify(req.body?.messages ?? []).match(/"tool_result"/g) ?? []).length;
    if (results < 2) return { tool_uses: [{ name: 'mcp__hub__hub_reply', input: { post_id: postId(), content } }] };
    return 'My reply waits for approval.';
  });
}

/** The tool results the model was shown, as text. */
function toolResults(): string[] {
  const last: Array<{ content?: unknown }> = fake.messageRequests().at(-1)?.body?.messages ?? [];
  const blocks = last.flatMap((m): Array<{ type?: string; content?: unknown }> => (Array.isArray(m.content) ? (m.content as Array<{ type?: string; content?: unknown }>) : []));
  return blocks.filter((b) => b.type === 'tool_result').map((b) => JSON.stringify(b.content));
}

async function heldReply(title: string, content: string): Promise<{ postId: string; approvalId: string }> {
  let postId = '';
  replyTwice(() => postId, content);
  const before = h.outcomes.length;
  const post = await h.api.post<{ id: string }>('/posts', userKey, { title, content: '@coder please reply' });
  postId = post.id;
  await waitFor('the activation', () => (h.outcomes.length > before ? h.outcomes : undefined), 90_000);
  // The CLI's reply counted as its answer (the daemon posts nothing of its own), and nothing reached the thread.
  expect(h.outcomes[before]).toMatchObject({ outcome: { kind: 'posted_by_tool' } });
  expect(await commentsBy(post.id, 'coder')).toEqual([]);
  const results = toolResults();
  expect(results).toHaveLength(2);
  const ids = results.map((r) => /held for approval \(approval (ap_[0-9a-f]{20})\)/.exec(r)?.[1]);
  // Sent twice, one request: both results name it.
  expect(ids[0]).toBeDefined();
  expect(ids[1]).toBe(ids[0]);
  const open = (await store.open()).filter((e) => e.request.work.kind === 'hub_write' && e.request.work.write.kind === 'comment' && e.request.work.write.postId === post.id);
  expect(open.map((e) => e.request.id)).toEqual([ids[0]]);
  return { postId: post.id, approvalId: ids[0]! };
}

describe('a CLI agent whose hub replies need approval', () => {
  it('is held, then posted once after approval, however often the decision and its task come again', async () => {
    const { postId, approvalId } = await heldReply('Ship?', `Ship it. (my key is ${key})`);
    const entry = await store.get(approvalId);
    expect(entry?.request).toMatchObject({ agent: 'coder', approvers: ['admin'], calls: [{ name: 'hub_reply' }], work: { kind: 'hub_write', write: { kind: 'comment', postId, content: 'Ship it. (my key is [REDACTED])' } } });
    expect(await everythingIn(h.prefix)).not.toContain(key);
    expect(h.logs.join('')).not.toContain(key);
    // Told as any approval request is (the outbound event goes out from the same place).
    expect(h.logs.some((l) => l.includes('"approval requested"') && l.includes(approvalId))).toBe(true);

    const decided = h.outcomes.length;
    await desk.decide(approvalId, 'approved', { by: 'admin' });
    const posted = await waitFor('the held reply on the hub', async () => {
      const c = await commentsBy(postId, 'coder');
      return c.length ? c : undefined;
    }, 60_000);
    expect(posted).toEqual(['Ship it. (my key is [REDACTED])']);
    await waitFor('the request closed', async () => ((await store.isOpen(approvalId)) ? undefined : true), 30_000);
    expect(h.outcomes.length).toBeGreaterThan(decided);

    // The decision handed on again (a second approve, a sweep): the task is not taken twice.
    expect((await desk.decide(approvalId, 'approved', { by: 'admin' })).kind).toBe('already');
    await desk.sweep();
    // The task offered again after a daemon died between the write and closing the request: replayed, not repeated.
    await redis.zadd(new RedisKeys(h.prefix).approvalsOpen, Date.now() + 60_000, approvalId);
    const again = h.outcomes.length;
    const task = approvalTask({ ...entry!, decision: (await store.get(approvalId))!.decision! });
    expect(await inbox.add('coder', { ...task, id: `${task.id}:redelivered` })).toBe('added');
    await waitFor('the redelivered task carried out', async () => (h.outcomes.length > again && !(await store.isOpen(approvalId)) ? true : undefined), 60_000);
    expect(await commentsBy(postId, 'coder')).toEqual(['Ship it. (my key is [REDACTED])']);
    expect(await everythingIn(h.prefix)).not.toContain(key);
  }, PROCESS_TEST_MS);

  it('denied, posts nothing and closes the request', async () => {
    const { postId, approvalId } = await heldReply('Deploy on Friday?', 'Yes, deploy now.');
    const before = h.outcomes.length;
    await desk.decide(approvalId, 'denied', { by: 'admin', note: 'not on a Friday' });
    await waitFor('the denial carried out', async () => (h.outcomes.length > before && !(await store.isOpen(approvalId)) ? true : undefined), 60_000);
    expect(await commentsBy(postId, 'coder')).toEqual([]);
    expect(h.logs.some((l) => l.includes('held hub write denied; not made') && l.includes(approvalId))).toBe(true);
  }, PROCESS_TEST_MS);
});
