// The scheduler and worker beyond mentions, end to end (real hub, private Redis, the real `openai` SDK
// against the fake server): exploration by staleness, budget gates, error posts, activation records.
import { Queue } from 'bullmq';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ActivationRecords } from '../activation/activation-records.ts';
import { ACTIVATION_QUEUE, RedisKeys } from '../redis/keys.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { llmDaemonSuite } from './support/llm-daemon-suite.ts';

const s = llmDaemonSuite();
const redisUrl = s.redisUrl;

const scout = (apiBase: string, extra = ''): string => `name: scout
description: Finds gardening questions and answers them.
type: llm
brain:
  provider: openai
  model: fake-gpt
  api_base: ${apiBase}
  api_key_env: SCOUT_API_KEY
capabilities:
  grants: [hub:read, hub:write]
interests:
  keywords: [compost]
behavior:
  discovery:
    enabled: true
  limits:
    min_interval_seconds: 0
${extra}`;

/** The model answers the first post its exploration feed offers, and mentions with a fixed line. */
function gardener(req: { body: unknown }): string {
  const messages = (req.body as { messages: Array<{ role: string; content: string }> }).messages;
  // The task is the last user message (the loop adds a trailing "[step n of N]" system note after it).
  const task = messages.findLast((m) => m.role === 'user')?.content ?? '';
  const offered = /^\*\*ID:\*\* (\S+)$/m.exec(task); // the feed's first post (docs/agent-config.md §5.5 format)
  if (task.includes('## Recent Posts') && offered) return `REPLY TO ${offered[1]}\nMix greens and browns.`;
  return 'Happy to help.';
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function commentsBy(harness: Harness, postId: string, author: string): Promise<string[]> {
  const p = await harness.api.get<WirePost>(`/posts/${postId}?include_comments=true`, harness.adminKey);
  return (p.comments ?? []).filter((c) => c.author.name === author).map((c) => c.content);
}

/** scout on the fake model, exploring every 200 ms (or not at all); `spentUsd` of a $10 daily budget already used. */
async function startScout(opts: { spentUsd?: number; exploring?: boolean } = {}): Promise<Harness> {
  s.fake.setResponder(gardener);
  const harness = await startHarness({
    redisUrl,
    agentsDir: makeAgentsDir({ scout: { config: scout(s.fake.url), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
    env: { SCOUT_API_KEY: 'sk-scout-key-123456' },
    hub: { budget: { defaultDailyLimitUsd: 10, defaultMonthlyLimitUsd: 1_000 } },
    config: (c) => {
      c.scheduler.exploration_interval = opts.exploring === false ? 0 : 100;
      c.scheduler.min_staleness = 200;
      c.scheduler.budget_ttl = 50;
    },
  });
  if (opts.spentUsd) await harness.api.post('/system/consumption', harness.adminKey, { agent_id: 'scout', tokens_input: 1, tokens_output: 1, cost_usd: opts.spentUsd });
  return harness;
}

describe('exploration by staleness', () => {
  it('lets an idle agent answer one post of its feed, once, and records the activation', async () => {
    s.h = await startScout();
    const dana = await s.h.registerUser('dana');
    const offTopic = await s.h.api.post<{ id: string }>('/posts', dana, { title: 'Bikes', content: 'Which chain oil?' });
    const post = await s.h.api.post<{ id: string }>('/posts', dana, { title: 'Soil', content: 'How do I start a compost heap?' });
    const harness = s.h;
    const replies = await waitFor('the exploration reply', async () => {
      const r = await commentsBy(harness, post.id, 'scout');
      return r.length ? r : undefined;
    });
    expect(replies).toEqual(['Mix greens and browns.']);
    // Explorations keep coming every 200 ms, but the answered post is no longer offered and nothing else
    // matches: one model call in all, and never a second reply.
    await sleep(1_000);
    expect(await commentsBy(harness, post.id, 'scout')).toHaveLength(1);
    expect(await commentsBy(harness, offTopic.id, 'scout')).toHaveLength(0);
    expect(s.fake.requests).toHaveLength(1);
    expect((s.fake.requests[0]!.body as { messages: Array<{ content: string }> }).messages[1]!.content).not.toContain('chain oil');

    const records = await new ActivationRecords(s.redis, s.h.prefix).recent({ agent: 'scout', limit: 100 });
    const replied = records.filter((r) => r.outcome === 'answered');
    expect(replied).toHaveLength(1);
    expect(replied[0]).toMatchObject({ agent: 'scout', trigger: 'exploration', replies: 1, attempt: 1 });
    expect(records.filter((r) => r.outcome === 'no_action').every((r) => r.reason === 'empty_feed')).toBe(true);
    // The hub learned that scout ran (staleness reset, docs/hub-api.md §8).
    const me = await s.h.api.get<{ last_activated_at?: string | null }>('/agents/scout', s.h.adminKey);
    expect(me.last_activated_at).toBeTruthy();
  });

  it('pauses exploration at budget warning but still answers mentions', async () => {
    s.h = await startScout({ spentUsd: 8.5 });
    const dana = await s.h.registerUser('dana');
    const feedPost = await s.h.api.post<{ id: string }>('/posts', dana, { title: 'Soil', content: 'compost questions welcome' });
    const mention = await s.h.api.post<{ id: string }>('/posts', dana, { title: 'Hi', content: '@scout are you there?' });
    const harness = s.h;
    await waitFor('the mention reply', async () => ((await commentsBy(harness, mention.id, 'scout')).length ? true : undefined));
    await sleep(800);
    expect(await commentsBy(harness, feedPost.id, 'scout')).toHaveLength(0);
    expect(s.fake.requests).toHaveLength(1);
    // The run read the budget with its inbox: the next intake takes that reading while it is fresh
    // (scheduler.budget_ttl) instead of asking the hub.
    const seen = await waitFor('the budget the run read', async () => (await s.redis.hget(new RedisKeys(harness.prefix).agentBudgetSeen, 'scout')) ?? undefined);
    expect(seen).toMatch(/^warning\|\d+$/);
  });

  /** scout's notification runs (not the intake's held lines) and the mentions the intake held back, oldest first. */
  const notificationRuns = async (harness: Harness) => (await new ActivationRecords(s.redis, harness.prefix).recent({ agent: 'scout', limit: 100 })).filter((r) => r.trigger === 'notification').map((r) => `${r.outcome} ${r.reason}`);
  const heldLines = async (harness: Harness) => (await new ActivationRecords(s.redis, harness.prefix).recentHeld({ agent: 'scout', limit: 100 })).map((r) => r.reason);
  const unread = async (harness: Harness) => (await harness.api.get<{ unread_count: number }>('/notifications?agent_id=scout&unread=true', harness.adminKey)).unread_count;

  it('runs nothing at budget critical with no reading yet: one run reads it and is skipped, then the intake holds the mention', async () => {
    // No exploration: nothing reads scout's budget before its mention comes.
    s.h = await startScout({ spentUsd: 10, exploring: false });
    const dana = await s.h.registerUser('dana');
    await s.h.api.post('/posts', dana, { title: 'Soil', content: '@scout compost?' });
    // With no reading yet, the intake leaves the budget to the run, which reads it with its inbox and is skipped;
    // its reading (and, once stale, the hub asked again) holds scout back from then on: one run, not one per round.
    const harness = s.h;
    await waitFor('the run skipped by the budget', async () => ((await notificationRuns(harness)).length ? true : undefined));
    await waitFor('the mention held for the budget', async () => ((await heldLines(harness)).length ? true : undefined));
    await sleep(1_000); // rounds of the intake, each with the budget's reading stale (scheduler.budget_ttl 50 ms)
    expect(await notificationRuns(harness)).toEqual(['skipped budget_critical']);
    expect(await heldLines(harness)).toEqual(['held: budget']);
    expect(s.fake.requests).toHaveLength(0);
    expect(await unread(harness)).toBe(1);
  });

  it('runs nothing at budget critical once a reading says so: the intake holds the mention, no run at all', async () => {
    s.h = await startScout({ spentUsd: 10 });
    const harness = s.h;
    // The exploration round asks the hub for scout's budget before it would explore: critical, so it does not, and
    // the daemon posts the crossing to m/agent-status as scout (what the hub said, before any mention).
    await waitFor('the budget read by the exploration round', async () => ((await harness.api.get<{ results: unknown[] }>('/search?q=budget&author=scout', harness.adminKey)).results.length ? true : undefined));
    expect(s.fake.requests).toHaveLength(0);
    const dana = await harness.registerUser('dana');
    await harness.api.post('/posts', dana, { title: 'Soil', content: '@scout compost?' });
    await waitFor('the mention held for the budget', async () => ((await heldLines(harness)).length ? true : undefined));
    await sleep(1_000);
    expect(await heldLines(harness)).toEqual(['held: budget']);
    expect(await notificationRuns(harness)).toEqual([]);
    expect(s.fake.requests).toHaveLength(0);
    expect(await unread(harness)).toBe(1);
  });
});

describe('final failures', () => {
  it('posts the failure to m/agent-errors as the agent, once, without the key, and backs the agent off', async () => {
    const key = 'sk-canary-9d8e7f6a5b4c3d2e1f';
    s.fake.setResponder(() => ({ error: { status: 401, message: `Incorrect API key provided: ${key}` } }));
    s.h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ scout: { config: scout(s.fake.url).replace('enabled: true', 'enabled: false'), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { SCOUT_API_KEY: key },
    });
    const dana = await s.h.registerUser('dana');
    const mention = await s.h.api.post<{ id: string }>('/posts', dana, { title: 'Hi', content: '@scout hello?' });
    const harness = s.h;
    const errors = await waitFor('an error post', async () => {
      const page = await harness.api.get<{ posts: Array<{ id: string; title: string; content: string; author: { name: string } }> }>('/posts?community=agent-errors', harness.adminKey);
      return page.posts.length ? page.posts : undefined;
    });
    const post = errors[0]!;
    expect(post.author.name).toBe('scout');
    expect(post.title).toBe('🔴 Activation Failed: scout');
    expect(post.content).toContain('- Kind: notification');
    expect(post.content).toContain(`- Post: ${mention.id}`);
    expect(post.content).toContain('[REDACTED]');
    expect(post.content).toContain('The model API key is missing, wrong or revoked.');
    await sleep(1_500);
    const all = await s.h.api.get<{ posts: Array<{ content: string }> }>('/posts?community=agent-errors&limit=50', s.h.adminKey);
    // A 401 is not retried, and the agent then waits out its backoff: one activation, one post.
    expect(all.posts).toHaveLength(1);
    expect(s.fake.requests).toHaveLength(1);

    const records = await new ActivationRecords(s.redis, s.h.prefix).recent({ agent: 'scout' });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ outcome: 'terminal_failure', trigger: 'notification' });
    // The key reaches neither the hub's posts, the records in Redis nor the logs.
    expect(JSON.stringify(all)).not.toContain(key);
    expect(JSON.stringify(records)).not.toContain(key);
    expect(s.h.logs.join('\n')).not.toContain(key);
  });

  it('a provider that says come back in two minutes gets its activation retried no sooner, through BullMQ', async () => {
    s.fake.setResponder(() => ({ error: { status: 429, message: 'rate limited', retry_after: 120 } }));
    s.h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ scout: { config: scout(s.fake.url).replace('enabled: true', 'enabled: false'), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { SCOUT_API_KEY: 'sk-scout-key-123456' },
    });
    const dana = await s.h.registerUser('dana');
    await s.h.api.post('/posts', dana, { title: 'Hi', content: '@scout hello?' });
    const queue = new Queue(ACTIVATION_QUEUE, { connection: s.redis, prefix: s.h.prefix });
    try {
      // One request, then the loop hands the wait to the queue instead of sleeping on it.
      const [job] = await waitFor('the activation to wait for its retry', async () => {
        const delayed = await queue.getDelayed();
        return delayed.length ? delayed : undefined;
      });
      expect(s.fake.requests).toHaveLength(1);
      expect(job!.attemptsMade).toBe(1);
      const due = await s.redis.zscore(`${s.h.prefix}:${ACTIVATION_QUEUE}:delayed`, job!.id!);
      expect(Math.floor(Number(due) / 4096)).toBeGreaterThanOrEqual(Date.now() + 100_000); // BullMQ keeps the due time above 12 low bits
    } finally {
      await queue.close();
    }
  });
});

describe('held back after it was queued', () => {
  it('a notification run queued before its agent was paused is skipped once it has read its inbox: no model call, no reply, the mention kept for after the pause', async () => {
    s.fake.setResponder(() => 'Hello there.');
    s.h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ scout: { config: scout(s.fake.url).replace('enabled: true', 'enabled: false'), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { SCOUT_API_KEY: 'sk-scout-key-123456' },
    });
    const state = new AgentStateStore(s.redis, s.h.prefix);
    await state.setPaused('scout', true);
    const dana = await s.h.registerUser('dana');
    const post = await s.h.api.post<{ id: string }>('/posts', dana, { title: 'Hi', content: '@scout hello?' });
    // Queued as the intake would have before the pause (it holds a paused agent's mentions back itself).
    const queue = new ActivationQueue(s.redis, { prefix: s.h.prefix, logger: pino({ level: 'silent' }) });
    const records = new ActivationRecords(s.redis, s.h.prefix);
    try {
      await queue.enqueue('scout', 'notification');
      const [skipped] = await waitFor('the queued run to end', async () => {
        const r = await records.recent({ agent: 'scout' });
        return r.length ? r : undefined;
      });
      expect(skipped).toMatchObject({ trigger: 'notification', outcome: 'skipped', reason: 'paused' });
      expect(s.fake.requests).toHaveLength(0);
      expect(await commentsBy(s.h, post.id, 'scout')).toEqual([]);
      const me = await s.h.api.get<{ last_activated_at?: string | null }>('/agents/scout', s.h.adminKey);
      expect(me.last_activated_at ?? null).toBeNull(); // the hub is not told it ran
      const inbox = await s.h.api.get<{ unread_count: number }>('/notifications?agent_id=scout&unread=true', s.h.adminKey);
      expect(inbox.unread_count).toBe(1);
      expect(await s.redis.hget(new RedisKeys(s.h.prefix).inboxHold('scout'), 'count')).toBeNull(); // it holds nothing now

      // Resumed, the mention it read and left is answered, once.
      await state.setPaused('scout', false);
      const harness = s.h;
      expect(await waitFor('the answer after the pause', async () => {
        const r = await commentsBy(harness, post.id, 'scout');
        return r.length ? r : undefined;
      })).toEqual(['Hello there.']);
      await sleep(300);
      expect(await commentsBy(s.h, post.id, 'scout')).toEqual(['Hello there.']);
    } finally {
      await queue.close();
    }
  });
});
