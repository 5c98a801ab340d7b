// The walking skeleton, end to end: a mention on the hub → scheduler → BullMQ → worker → executor → reply.
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

async function greeterReplies(harness: Harness, postId: string, key: string): Promise<string[]> {
  const post = await harness.api.get<WirePost>(`/posts/${postId}?include_comments=true`, key);
  return (post.comments ?? []).filter((c) => c.author.name === 'greeter').map((c) => c.content);
}

describe('walking skeleton', () => {
  it('answers "@greeter hello" through the hub API alone, then marks the mention read', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({}) });
    const aliceKey = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', aliceKey, { content: '@greeter hello', community: 'm/general' });

    const harness = h;
    const replies = await waitFor('greeter reply', async () => {
      const r = await greeterReplies(harness, post.id, aliceKey);
      return r.length ? r : undefined;
    });
    expect(replies).toEqual(["Hello! 👋 I'm greeter, warren's example agent. Nice to meet you — mention me any time."]);

    const inbox = await h.api.get<{ notifications: Array<{ read: boolean; type: string }>; unread_count: number }>('/notifications?agent_id=greeter', h.adminKey);
    expect(inbox.notifications).toMatchObject([{ type: 'mention', read: true }]);
    expect(inbox.unread_count).toBe(0);
    // greeter's reply notifies alice (the post's author), never greeter itself.
    const aliceInbox = await h.api.get<{ notifications: Array<{ type: string; from: { name: string } }> }>('/notifications', aliceKey);
    expect(aliceInbox.notifications).toMatchObject([{ type: 'reply', from: { name: 'greeter' } }]);
    // The hub hears that greeter ran once the activation has ended (after the reply and the read).
    const greeter = await waitFor('activated', async () => {
      const a = await harness.api.get<{ activation_count: number; last_activated_at: string | null }>('/agents/greeter', harness.adminKey);
      return a.activation_count >= 1 ? a : undefined;
    });
    expect(greeter.activation_count).toBe(1);
    expect(greeter.last_activated_at).not.toBeNull();
  });

  it('answers a mention once even when the scheduler polls many times before the worker finishes', async () => {
    const slow = `name: slowpoke
type: llm
brain:
  provider: scripted
  model: m
  responses:
    - {content: "I thought about it for a while.", delay_ms: 1500}
capabilities: {}
`;
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ slowpoke: { config: slow, prompt: 'You are slow.' } }), config: (c) => (c.scheduler.poll_interval = 20) });
    const key = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', key, { content: 'hey @slowpoke, are you there?' });
    const harness = h;
    await waitFor('slowpoke reply', async () => {
      const p = await harness.api.get<WirePost>(`/posts/${post.id}?include_comments=true`, key);
      return p.comments?.some((c) => c.author.name === 'slowpoke') ? true : undefined;
    });
    // Give any duplicate activation time to run and post, then count.
    await new Promise((r) => setTimeout(r, 800));
    const p = await h.api.get<WirePost>(`/posts/${post.id}?include_comments=true`, key);
    expect(p.comments?.filter((c) => c.author.name === 'slowpoke')).toHaveLength(1);
    const runs = h.outcomes.filter((o) => o.agent === 'slowpoke');
    // ~75 polls during the 1.5 s run collapse into the running activation plus at most one follow-up.
    expect(runs.length).toBeGreaterThanOrEqual(1);
    expect(runs.length).toBeLessThanOrEqual(2);
    expect(runs.filter((o) => o.replies > 0)).toHaveLength(1);
  });

  it('skips a broken agent config with file:line in the log and keeps the good agent answering', async () => {
    const broken = 'name: broken-bot\ntype: llm\nbrain:\n  model: m\n  temperature: 9\ncapabilities: {}\n';
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ 'broken-bot': { config: broken, prompt: 'x' } }) });
    const logText = h.logs.join('');
    expect(logText).toMatch(/broken-bot\/config\.yaml:5:16: brain\.temperature/);
    expect([...h.daemon.registry.runnable()]).toEqual(['greeter']);
    const key = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', key, { content: '@greeter hi and @broken-bot hi' });
    const harness = h;
    await waitFor('greeter reply despite the broken agent', async () => ((await greeterReplies(harness, post.id, key)).length ? true : undefined));
  });

  it('keeps secrets out of BullMQ job data in Redis', async () => {
    const canary = `sk-canary-${Math.random().toString(36).slice(2)}`;
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({}), env: { OPENAI_API_KEY: canary, SOME_SECRET: canary } });
    const key = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', key, { content: '@greeter hello' });
    const harness = h;
    await waitFor('reply', async () => ((await greeterReplies(harness, post.id, key)).length ? true : undefined));
    const redis = new Redis(redisUrl);
    try {
      const jobKeys = (await redis.keys(`${h.prefix}:activations:*`)).filter((k) => /:\d+$/.test(k));
      expect(jobKeys.length).toBeGreaterThan(0);
      for (const k of jobKeys) {
        const job = await redis.hgetall(k);
        expect(JSON.parse(job.data ?? '{}')).toMatchObject({ agent: 'greeter', trigger: 'notification' });
        expect(JSON.stringify(job)).not.toContain(canary);
        expect(JSON.stringify(job)).not.toContain(h.adminKey);
      }
      // Nothing anywhere under the prefix carries a secret.
      for (const k of await redis.keys(`${h.prefix}:*`)) {
        const type = await redis.type(k);
        const dump = type === 'hash' ? JSON.stringify(await redis.hgetall(k)) : type === 'string' ? await redis.get(k) : '';
        expect(dump ?? '').not.toContain(canary);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('falls back to polling when the hub has no long-poll (404), and still answers', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({}), faults: { pollNotFound: true } });
    const key = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', key, { content: '@greeter hello' });
    const harness = h;
    await waitFor('reply via the polling fallback', async () => ((await greeterReplies(harness, post.id, key)).length ? true : undefined));
    expect(h.logs.join('')).toMatch(/hub has no long-poll \(404\); polling agents with notifications instead/);
  });
});
