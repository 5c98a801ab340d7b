// An agent on an OpenAI-compatible endpoint, end to end through the real `openai` SDK over HTTP
// (against the fake server in test/fakes), JSON and SSE streaming.
import { describe, expect, it } from 'vitest';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { llmDaemonSuite } from './support/llm-daemon-suite.ts';

const s = llmDaemonSuite({ redis: false });
const redisUrl = s.redisUrl;

const oracle = (apiBase: string): string => `name: oracle
description: Knows things.
type: llm
brain:
  provider: openai
  model: fake-gpt
  api_base: ${apiBase}
  api_key_env: ORACLE_API_KEY
  temperature: 0.2
  max_tokens: 512
capabilities:
  grants: [hub:read, hub:write]
`;

async function replyOf(harness: Harness, postId: string, key: string, author: string): Promise<string | undefined> {
  const p = await harness.api.get<WirePost>(`/posts/${postId}?include_comments=true`, key);
  return p.comments?.find((c) => c.author.name === author)?.content;
}

describe.each([{ stream: false }, { stream: true }])('llm executor against an OpenAI-compatible server (stream: $stream)', ({ stream }) => {
  it('sends the thread to the model with the declared key and posts its answer', async () => {
    const key = `sk-oracle-${Math.random().toString(36).slice(2)}`;
    const canary = `canary-${Math.random().toString(36).slice(2)}`;
    s.fake.enqueue({ content: 'The answer is 42.', usage: { prompt_tokens: 120, completion_tokens: 6 } });
    s.h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ oracle: { config: oracle(s.fake.url), prompt: 'You are {{name}}. {{description}}' } }, { withGreeter: false }),
      env: { ORACLE_API_KEY: key, UNRELATED_SECRET: canary },
      config: (c) => (c.executors.llm.stream = stream),
    });
    const userKey = await s.h.registerUser('alice');
    const post = await s.h.api.post<{ id: string }>('/posts', userKey, { title: 'Life', content: '@oracle what is the answer?' });
    const harness = s.h;
    const reply = await waitFor('oracle reply', () => replyOf(harness, post.id, userKey, 'oracle'));
    expect(reply).toBe('The answer is 42.');

    expect(s.fake.requests).toHaveLength(1);
    const req = s.fake.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${key}`);
    const body = req.body as { model: string; stream?: boolean; temperature: number; max_tokens: number; messages: Array<{ role: string; content: string }> };
    expect(body.model).toBe('fake-gpt');
    expect(Boolean(body.stream)).toBe(stream);
    expect(body.temperature).toBe(0.2);
    expect(body.max_tokens).toBe(512);
    // System part in the design's order: the agent's prompt, its skills, the budget status.
    expect(body.messages[0]?.role).toBe('system');
    expect(body.messages[0]?.content).toMatch(/^You are oracle\. Knows things\.\n\n## Available Skills\n[\s\S]*\n## System Resource Status\n/);
    expect(body.messages[0]?.content).toMatch(/- \*\*Left today:\*\* \d+ posts?, \d+ comments?/); // from the daily counters in Redis
    expect(body.messages[1]?.role).toBe('user');
    expect(body.messages[1]?.content).toContain('@oracle what is the answer?');
    expect(body.messages[1]?.content).toContain('You were mentioned');
    // Nothing but the declared key leaves the daemon: no other secret in the request.
    expect(req.rawBody).not.toContain(canary);
    expect(JSON.stringify(req.headers)).not.toContain(canary);
    expect(JSON.stringify(req.headers)).not.toContain(s.h.adminKey);
  });
});

describe('llm executor failures', () => {
  it('keeps the notification unread when the model rejects the key, and backs the agent off', async () => {
    s.fake.enqueue({ error: { status: 401, message: 'invalid api key' } });
    s.h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ oracle: { config: oracle(s.fake.url), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { ORACLE_API_KEY: 'sk-wrong' },
    });
    const userKey = await s.h.registerUser('alice');
    await s.h.api.post('/posts', userKey, { content: '@oracle hello?' });
    const harness = s.h;
    s.fake.setResponder(() => ({ error: { status: 401, message: 'invalid api key' } }));
    await waitFor('the failed activation', () => (harness.logs.some((l) => l.includes('activation failed for good')) ? true : undefined));
    await new Promise((r) => setTimeout(r, 1_500));
    // A 401 is not retried by BullMQ or the SDK: one model call, then the agent waits out its backoff (ten
    // minutes by default), however often the scheduler polls (every 50 ms here).
    expect(s.fake.requests).toHaveLength(1);
    expect(harness.logs.filter((l) => l.includes('activation failed for good'))).toHaveLength(1);
    const inbox = await s.h.api.get<{ unread_count: number }>('/notifications?agent_id=oracle&unread=true', s.h.adminKey);
    expect(inbox.unread_count).toBe(1);
  });

  it('a stream cut after a tool call began, before any tool ran, is tried again and answered (issue 28 item 7)', async () => {
    // Event 0 is the role, 1 the call's identity, 2.. its argument fragments: cut inside the arguments.
    s.fake.enqueue({ tool_calls: [{ id: 'c1', name: 'hub_post', arguments: { content: 'x'.repeat(100) } }], cut_after_events: 3 }, 'Answered on the second attempt.');
    s.h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ oracle: { config: oracle(s.fake.url), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { ORACLE_API_KEY: 'sk-oracle' },
      config: (c) => (c.executors.llm.stream = true),
    });
    const userKey = await s.h.registerUser('alice');
    const post = await s.h.api.post<{ id: string }>('/posts', userKey, { content: '@oracle hello?' });
    const harness = s.h;
    expect(await waitFor('the retried answer', () => replyOf(harness, post.id, userKey, 'oracle'))).toBe('Answered on the second attempt.');
    expect(s.fake.requests).toHaveLength(2);
    expect(harness.logs.some((l) => l.includes('no tool ran: the activation may retry'))).toBe(true);
    expect(harness.logs.some((l) => l.includes('activation failed for good'))).toBe(false);
  });

  it('skips an agent whose key variable is unset, with a log line naming the variable', async () => {
    s.h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ oracle: { config: oracle(s.fake.url), prompt: 'x' } }) });
    expect([...s.h.daemon.registry.runnable()]).toEqual(['greeter']);
    expect(s.h.logs.join('')).toMatch(/agent oracle skipped: its key variable ORACLE_API_KEY \(brain\.api_key_env\) is not set/);
  });
});

describe('llm executor context', () => {
  it("tells the model what is left of today's comments, counted from the agent's earlier answers today", async () => {
    s.fake.enqueue({ content: 'First answer.' });
    s.fake.enqueue({ content: 'Second answer.' });
    const limited = `${oracle(s.fake.url)}behavior:\n  limits: {max_daily_comments: 5, min_interval_seconds: 0}\n`;
    s.h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ oracle: { config: limited, prompt: 'You are {{name}}.' } }, { withGreeter: false }), env: { ORACLE_API_KEY: 'sk-test-key' } });
    const userKey = await s.h.registerUser('alice');
    const harness = s.h;
    const first = await s.h.api.post<{ id: string }>('/posts', userKey, { content: '@oracle one?' });
    await waitFor('the first reply', () => replyOf(harness, first.id, userKey, 'oracle'));
    const second = await s.h.api.post<{ id: string }>('/posts', userKey, { content: '@oracle two?' });
    await waitFor('the second reply', () => replyOf(harness, second.id, userKey, 'oracle'));
    const prompts = s.fake.requests.map((r) => JSON.stringify((r.body as { messages: unknown[] }).messages));
    expect(prompts).toHaveLength(2);
    expect(prompts[0]).toContain('5 comments');
    expect(prompts[1]).toContain('4 comments');
  });
});
