// The failure path end to end (real hub, private Redis, real daemon): a failing agent makes one error post, is
// backed off instead of re-run at once, and a notification it cannot answer is given up on after a bound, visibly.
// Guard and limit stops on a notification are failures, never silent "idle" runs.
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { ActivationRecords, type ActivationRecord } from '../activation/activation-records.ts';
import { agentStatus } from '../daemon/ops/status.ts';
import { formatRecordLine } from '../daemon/ops/logs.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
let h: Harness | undefined;
let redis: Redis;
let fake: FakeOpenAI;
beforeAll(async () => {
  redis = new Redis(redisUrl);
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await redis.quit();
  await fake.close();
});
afterEach(async () => {
  await h?.stop();
  h = undefined;
  fake.reset();
});
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function scripted(name: string, responses: string, extra = ''): Record<string, { config: string; prompt: string }> {
  return { [name]: { config: `name: ${name}\ntype: llm\nbrain:\n  provider: scripted\n  model: m\n  responses: ${responses}\ncapabilities: {grants: [hub:read, hub:write]}\n${extra}`, prompt: 'You are {{name}}.' } };
}

interface ErrorPost {
  id: string;
  title: string;
  content: string;
  comment_count?: number;
  author: { name: string };
}

async function errorPosts(harness: Harness): Promise<ErrorPost[]> {
  return (await harness.api.get<{ posts: ErrorPost[] }>('/posts?community=agent-errors&limit=50', harness.adminKey)).posts;
}

/** What `warren status` shows of one agent, from the same Redis state. */
async function statusOf(harness: Harness, agent: string): Promise<ReturnType<typeof agentStatus>> {
  const store = new AgentStateStore(redis, harness.prefix);
  const state = (await store.getMany([agent])).get(agent);
  const last = (await new ActivationRecords(redis, harness.prefix).lastOf([agent])).get(agent);
  const today = (await store.dailyMany([agent])).get(agent)!;
  return agentStatus(harness.daemon.registry.get(agent)!, state, last, today, 0, new Date());
}

/** Dana mentions `agent`; resolves with the first post in m/agent-errors. */
async function mentionAndAwaitErrorPost(harness: Harness, agent: string): Promise<ErrorPost> {
  const dana = await harness.registerUser('dana');
  await harness.api.post('/posts', dana, { title: 'Hi', content: `@${agent} what is new?` });
  return waitFor('an error post', async () => (await errorPosts(harness))[0]);
}

/**
 * The agent's newest activation record. The worker writes it after the error post, so a test that has seen the
 * post waits for it: read at once, a busy machine had not written it yet (undefined).
 */
async function lastRecord(harness: Harness, agent: string): Promise<ActivationRecord> {
  const records = new ActivationRecords(redis, harness.prefix);
  return waitFor(`${agent}'s activation record`, async () => (await records.recent({ agent }))[0], 30_000);
}

async function unread(harness: Harness, agent: string): Promise<number> {
  return (await harness.api.get<{ unread_count: number }>(`/notifications?agent_id=${agent}&unread=true`, harness.adminKey)).unread_count;
}

describe('a model that always answers 400 (not retryable)', () => {
  it('one mention: one activation, one error post, the agent backed off for minutes, the notification still unread', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir(scripted('crash', '[{error: {status: 400}}]'), { withGreeter: false }) });
    const dana = await h.registerUser('dana');
    await h.api.post('/posts', dana, { title: 'Hi', content: '@crash hello?' });
    const harness = h;
    await waitFor('an error post', async () => ((await errorPosts(harness)).length ? true : undefined));
    await sleep(2_500); // the old scheduler re-ran it four more times within a second
    const records = await new ActivationRecords(redis, h.prefix).recent({ agent: 'crash' });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ outcome: 'terminal_failure', trigger: 'notification' });
    expect(await errorPosts(h)).toHaveLength(1);
    expect(await unread(h, 'crash')).toBe(1);
    const state = (await new AgentStateStore(redis, h.prefix).getMany(['crash'])).get('crash')!;
    expect(state.failures).toBe(1);
    // The default policy waits ten minutes after a terminal failure: at most `attempts` runs in the first ten.
    const crash = await statusOf(h, 'crash');
    expect(crash.waiting_for).toBe('backoff');
    expect(Date.parse(crash.next_eligible_at!) - Date.now()).toBeGreaterThan(9 * 60_000);
  });

  it('shortened backoff: retried on the backoff, given up after three terminal failures, one post plus a counter, visible in logs and status', async () => {
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir(scripted('crash', '[{error: {status: 400, message: "bad request 8f2e91"}}]'), { withGreeter: false }),
      config: (c) => {
        c.scheduler.failure_backoff = 300;
        c.workers.give_up_after = 3;
      },
    });
    const dana = await h.registerUser('dana');
    const mention = await h.api.post<{ id: string }>('/posts', dana, { title: 'Hi', content: '@crash hello?' });
    const harness = h;
    await waitFor('the notification to be given up on', async () => ((await unread(harness, 'crash')) === 0 ? true : undefined), 20_000);
    await sleep(1_500); // nothing more runs once it is given up on
    const records = await new ActivationRecords(redis, h.prefix).recent({ agent: 'crash' });
    expect(records).toHaveLength(3);
    expect(records.map((r) => r.outcome)).toEqual(['terminal_failure', 'terminal_failure', 'terminal_failure']);
    expect(records[0]!.abandoned).toHaveLength(1);
    expect(formatRecordLine(records[0]!)).toContain('abandoned');
    // One post for one fingerprint; the repeats are counted in a comment on it, not posted again.
    const posts = await errorPosts(h);
    expect(posts).toHaveLength(1);
    const full = await h.api.get<{ comments: Array<{ content: string }> }>(`/posts/${posts[0]!.id}?include_comments=true`, h.adminKey);
    expect(full.comments.at(-1)?.content).toMatch(/3 times/);
    // The thread of the mention got one could-not-answer line from the agent, not one per failure (no answer).
    const thread = await h.api.get<{ comments: Array<{ content: string; author: { name: string } }> }>(`/posts/${mention.id}?include_comments=true`, h.adminKey);
    expect(thread.comments.map((c) => `${c.author.name}: ${c.content}`)).toEqual(['crash: I could not answer: something went wrong on my side; the operator has been told.']);
    expect((await statusOf(h, 'crash')).abandoned).toBe(1);
  });
});

describe('the follow-up kept behind a failing run', () => {
  it('does not run the moment the run fails for good: it is skipped for the backoff', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir(scripted('crash', '[{error: {status: 400}, delay_ms: 1500}]'), { withGreeter: false }) });
    const dana = await h.registerUser('dana');
    await h.api.post('/posts', dana, { title: 'One', content: '@crash first?' });
    const harness = h;
    await waitFor('the run to start', () => (harness.logs.some((l) => l.includes('"msg":"activation enqueued"')) ? true : undefined));
    await sleep(300);
    await h.api.post('/posts', dana, { title: 'Two', content: '@crash second?' });
    await waitFor('the skipped follow-up', async () => ((await new ActivationRecords(redis, harness.prefix).recent({ agent: 'crash' })).some((r) => r.outcome === 'skipped') ? true : undefined));
    await sleep(1_000);
    const records = await new ActivationRecords(redis, h.prefix).recent({ agent: 'crash' });
    expect(records.map((r) => `${r.outcome}:${r.reason}`).sort()).toEqual(['skipped:backoff', 'terminal_failure:error']);
    expect((await new AgentStateStore(redis, h.prefix).getMany(['crash'])).get('crash')!.failures).toBe(1);
  });
});

describe('a model that always answers 500 (retryable)', () => {
  it('one mention: at most `attempts` activations and one error post, then the backoff', async () => {
    fake.setResponder(() => ({ error: { status: 500, message: 'upstream exploded' } }));
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir(
        { flaky: { config: `name: flaky\ntype: llm\nbrain:\n  provider: openai\n  model: fake-gpt\n  api_base: ${fake.url}\n  api_key_env: FLAKY_API_KEY\ncapabilities: {grants: [hub:read, hub:write]}\n`, prompt: 'You are {{name}}.' } },
        { withGreeter: false },
      ),
      env: { FLAKY_API_KEY: 'sk-flaky-123456' },
    });
    const dana = await h.registerUser('dana');
    await h.api.post('/posts', dana, { title: 'Hi', content: '@flaky hello?' });
    const harness = h;
    await waitFor('an error post', async () => ((await errorPosts(harness)).length ? true : undefined), 30_000);
    const callsAtPost = fake.requests.length;
    await sleep(3_000);
    expect(fake.requests.length).toBe(callsAtPost); // backed off: no more model calls
    const records = await new ActivationRecords(redis, h.prefix).recent({ agent: 'flaky' });
    expect(records.length).toBeLessThanOrEqual(3);
    // Its last attempt ended as a retryable failure; with the attempts spent, that was final.
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ outcome: 'retryable_failure', attempt: 3 });
    expect(await errorPosts(h)).toHaveLength(1);
  }, 45_000);
});

describe('guard and limit stops on a notification are failures, not silent drops', () => {
  const loopCall = '{tool_calls: [{name: hub_search, arguments: {query: "same"}}]}';
  it('a loop on a mention: a short guard post, counted as a failure, the notification kept unread', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir(scripted('looper', `[${Array(12).fill(loopCall).join(', ')}]`), { withGreeter: false }) });
    const post = await mentionAndAwaitErrorPost(h, 'looper');
    expect(post.title).toBe('🟠 Loop stopped: looper');
    expect(post.content).toContain('hub_search');
    expect(post.content).toMatch(/loop_detected/);
    expect(post.content).not.toContain('## Stack trace');
    expect(await lastRecord(h, 'looper')).toMatchObject({ outcome: 'guard_stop', reason: 'loop_detected' });
    expect(await unread(h, 'looper')).toBe(1);
    expect((await new AgentStateStore(redis, h.prefix).getMany(['looper'])).get('looper')!.failures).toBe(1);
  });

  it('max_steps with no answer: a limit post, counted as a failure', async () => {
    const calls = Array.from({ length: 6 }, (_, i) => `{tool_calls: [{name: hub_search, arguments: {query: "q${i}"}}]}`).join(', ');
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir(scripted('wanderer', `[${calls}, ""]`, 'behavior: {max_iterations: 2}\n'), { withGreeter: false }) });
    const post = await mentionAndAwaitErrorPost(h, 'wanderer');
    expect(post.title).toBe('🟠 Step limit reached: wanderer');
    expect(await lastRecord(h, 'wanderer')).toMatchObject({ outcome: 'limit_stop', reason: 'max_steps' });
    expect(await unread(h, 'wanderer')).toBe(1);
  });
});
