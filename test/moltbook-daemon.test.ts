// warren on Moltbook, end to end: the real daemon (scheduler, BullMQ, worker, LLM executor over HTTP) against
// the fake Moltbook and the fake OpenAI server.
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import { WarrenConfigSchema, type WarrenConfig } from '../services/config.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { ADVICE_MARKER, startFakeMoltbook, type FakeMoltbook } from './fakes/moltbook-server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';
import { startMoltbookHarness, type MoltbookHarness } from './support/moltbook-harness.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { setAgentPaused } from '../daemon/ops/pause.ts';
import { RedisKeys } from '../redis/keys.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';

const redisUrl = inject('redisUrl');
let model: FakeOpenAI;
let molt: FakeMoltbook | undefined;
let h: MoltbookHarness | undefined;
beforeAll(async () => {
  model = await startFakeOpenAI({ defaultReply: 'Thanks for stopping by, glad to meet you.' });
});
afterAll(() => model.close());
afterEach(async () => {
  if (h && process.env.MOLT_LOGS) (await import('node:fs')).writeFileSync(process.env.MOLT_LOGS, h.logs.join(''));
  await h?.stop();
  h = undefined;
  await molt?.close();
  molt = undefined;
  model.reset();
});

const lobster = (name: string, behavior = 'behavior: {limits: {min_interval_seconds: 0}}'): string => `name: ${name}
description: A friendly lobster.
type: llm
brain:
  provider: openai
  model: fake-gpt
  api_base: ${model.url}
  api_key_env: MODEL_KEY
capabilities:
  grants: [hub:read, hub:write]
${behavior}
`;

async function start(agents: Record<string, string | undefined>, defs: string[] = Object.keys(agents), opts: { behavior?: string; config?: (c: WarrenConfig) => void } = {}): Promise<MoltbookHarness> {
  return startMoltbookHarness({
    redisUrl,
    agentsDir: makeAgentsDir(Object.fromEntries(defs.map((n) => [n, { config: lobster(n, opts.behavior), prompt: 'You are {{name}}.' }])), { withGreeter: false }),
    moltbook: molt!,
    agents,
    env: { MODEL_KEY: 'sk-model' },
    config: opts.config,
  });
}

/** Comments an agent already made today, as the adapter counts them in Redis. */
async function commentedToday(prefix: string, agent: string, n: number): Promise<void> {
  const r = new Redis(redisUrl);
  await r.set(`${prefix}:moltbook:comments:${agent}:${new Date().toISOString().slice(0, 10)}`, String(n), 'EX', 86_400);
  await r.quit();
}

describe('warren on moltbook', () => {
  it('answers a comment on its post exactly once, solving and verifying the challenge, and reads the post', async () => {
    molt = await startFakeMoltbook();
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const post = molt.post('pinchy', { title: 'Hello Moltbook', content: 'First molt!' });
    const comment = molt.comment('alice', post.id, 'Welcome, pinchy! What brings you here?');
    h = await start({ pinchy: pinchy.key });

    const mine = await waitFor('pinchy replied', () => {
      const c = molt!.commentsBy('pinchy', post.id).filter((x) => x.verified);
      return c.length ? c : undefined;
    }, 15_000);
    expect(mine).toMatchObject([{ content: 'Thanks for stopping by, glad to meet you.', parentId: comment.id }]);
    expect(molt.challenges).toMatchObject([{ used: true }]);
    await waitFor('post read', () => (molt!.unread('pinchy').length === 0 ? true : undefined));
    await sleep(600); // several more polls of /home: nothing more to answer
    expect(molt.commentsBy('pinchy')).toHaveLength(1);
    expect(model.requests.filter((r) => r.path.includes('/chat/completions'))).toHaveLength(1);
  });

  it('answers exactly once when the first comment POST answers 500 after creating the comment', async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const post = molt.post('pinchy', { title: 'Hello', content: 'hi' });
    molt.comment('alice', post.id, 'hello pinchy');
    molt.failNextCommentAfterCreate();
    h = await start({ pinchy: pinchy.key });

    await waitFor('post read after the retry', () => (molt!.unread('pinchy').length === 0 ? true : undefined), 20_000);
    await sleep(600);
    expect(molt.commentsBy('pinchy', post.id).map((c) => c.content)).toEqual(['Thanks for stopping by, glad to meet you.']);
    expect(molt.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/comments'))).toHaveLength(1);
    expect(molt.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/comments')).map((r) => r.status)).toEqual([500]);
    // The write skipped as already there names the comment it found (issue 30, item 2).
    const found = molt.commentsBy('pinchy', post.id)[0]!.id;
    expect(h.logs.some((l) => l.includes(`the write is already on Moltbook as comment ${found}; not writing again`))).toBe(true);
    // The answer was kept from the first attempt: the model was asked once.
    expect(model.requests.filter((r) => r.path.includes('/chat/completions'))).toHaveLength(1);
  });

  it('never lets server-written advice reach a model request', async () => {
    molt = await startFakeMoltbook();
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const post = molt.post('pinchy', { title: 'Hello', content: 'hi' });
    molt.comment('alice', post.id, 'first');
    const other = molt.post('pinchy', { title: 'Again', content: 'more' });
    molt.comment('alice', other.id, 'second');
    h = await start({ pinchy: pinchy.key });
    await waitFor('both answered', () => (molt!.commentsBy('pinchy').filter((c) => c.verified).length === 2 ? true : undefined), 15_000);
    const bodies = model.requests.map((r) => r.rawBody);
    expect(bodies.length).toBeGreaterThanOrEqual(2);
    // The fake writes the marker into /home, post lists, comment lists and the verification answer.
    expect(molt.requests.some((r) => r.path.startsWith('/home'))).toBe(true);
    for (const b of bodies) {
      expect(b).not.toContain(ADVICE_MARKER);
      expect(b).not.toMatch(/what_to_do_next|suggested_actions|quick_links|_model_guide/);
    }
  });

  it('holds an agent\'s next write back for a 429\'s retry_after_seconds while other agents go on', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    const snappy = molt.addAgent('snappy');
    molt.addAgent('alice');
    const p1 = molt.post('pinchy', { title: 'One', content: 'hi' });
    const p2 = molt.post('snappy', { title: 'Two', content: 'hi' });
    molt.rateLimitNext({ on: 'comment', agent: 'pinchy', retry_after_seconds: 20 });
    molt.comment('alice', p1.id, 'hello pinchy');
    h = await start({ pinchy: pinchy.key, snappy: snappy.key });
    const refused = await waitFor('the 429', () => molt!.requests.find((r) => r.status === 429 && r.agent === 'pinchy'), 15_000);
    molt.comment('alice', p2.id, 'hello snappy');
    await waitFor('snappy replied', () => (molt!.commentsBy('snappy').length ? true : undefined), 15_000);
    const snappyPost = molt.requests.find((r) => r.method === 'POST' && r.agent === 'snappy' && r.path.endsWith('/comments'))!;
    expect(snappyPost.at - refused.at).toBeLessThan(20_000);
    await waitFor('pinchy replied', () => (molt!.commentsBy('pinchy').length ? true : undefined), 40_000, 200);
    const pinchyPosts = molt.requests.filter((r) => r.method === 'POST' && r.agent === 'pinchy' && r.path.endsWith('/comments'));
    expect(pinchyPosts.map((r) => r.status)).toEqual([429, 201]);
    expect(pinchyPosts[1]!.at - refused.at).toBeGreaterThanOrEqual(20_000);
    expect(molt.commentsBy('pinchy')).toHaveLength(1);
  });

  it('asks the agent\'s own model for the number when the solver is unsure, and verifies in time', async () => {
    // No operation named: the solver is unsure; the model answers with the number.
    molt = await startFakeMoltbook({ problems: [{ plain: 'A lobster has twenty claws and ninety legs, what is the count of its limbs?', answer: '110.00' }] });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const post = molt.post('pinchy', { title: 'Hello', content: 'hi' });
    molt.comment('alice', post.id, 'welcome!');
    model.setResponder((r) => (r.rawBody.includes('arithmetic word problem') ? '110' : 'Thanks, glad to be here.'));
    h = await start({ pinchy: pinchy.key });
    await waitFor('pinchy replied, verified', () => (molt!.commentsBy('pinchy').some((c) => c.verified) ? true : undefined), 15_000);
    expect(molt.challenges).toMatchObject([{ used: true }]);
    expect(molt.requests.filter((r) => r.path === '/verify').map((r) => [r.status, (r.body as { answer: string }).answer])).toEqual([[200, '110.00']]);
    const asked = model.requests.filter((r) => r.rawBody.includes('arithmetic word problem'));
    expect(asked).toHaveLength(1);
    expect(asked[0]!.rawBody).toContain(JSON.stringify(molt.challenges[0]!.text).slice(1, -1));
    expect(asked[0]!.rawBody).toContain('fake-gpt'); // the agent's own model
    for (const r of model.requests) expect(r.rawBody).not.toContain(ADVICE_MARKER);
  });

  it('answers an @mention in a new post of its communities once, with a stable id', async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const mention = molt.post('alice', { title: 'Question', content: 'Hey @Pinchy, what do you molt into next?', submolt: 'general' });
    const notMe = molt.post('alice', { title: 'Other', content: 'ask @pinchy2 or mail pinchy@example.org', submolt: 'general' });
    const elsewhere = molt.post('alice', { title: 'Far', content: '@pinchy over here', submolt: 'offtopic' });
    h = await start({ pinchy: pinchy.key }, ['pinchy'], { behavior: 'behavior: {limits: {min_interval_seconds: 0}}\ninterests: {communities: [general]}' });
    await waitFor('pinchy answered the mention', () => (molt!.commentsBy('pinchy').length ? true : undefined), 15_000);
    await sleep(1_000); // more polls: the mention is not found again
    expect(molt.commentsBy('pinchy').map((c) => [c.postId, c.parentId])).toEqual([[mention.id, null]]);
    expect(molt.commentsBy('pinchy', notMe.id)).toEqual([]);
    expect(molt.commentsBy('pinchy', elsewhere.id)).toEqual([]);
    expect(h.outcomes.filter((o) => o.agent === 'pinchy' && o.handled.length).flatMap((o) => o.handled)).toEqual([`${mention.id}:mention`]);
  });

  it('keeps /home polling of 20 agents under 100 requests a minute per key, and still answers', { timeout: 60_000 }, async () => {
    // About the pace per key: a server that limits per key only (the published API); the per-IP limit of the
    // open-source server and warren's per-host pace have their own tests (moltbook-real-server.test.ts).
    molt = await startFakeMoltbook({ challenges: false, rateLimits: { requestsPerMinute: 100_000 } });
    const names = Array.from({ length: 20 }, (_, i) => `lobster-${i}`);
    const keys = Object.fromEntries(names.map((n) => [n, molt!.addAgent(n).key]));
    molt.addAgent('alice');
    const post = molt.post('lobster-7', { title: 'Hello', content: 'hi' });
    // /home every 100 ms per agent: unpaced, that would be 600 requests a minute per key.
    h = await start(keys, Object.keys(keys), { config: (c) => void delete c.hub.requests_per_minute_per_host });
    const began = Date.now();
    await sleep(6_000);
    molt.comment('alice', post.id, 'hello lobster-7');
    await waitFor('lobster-7 replied', () => (molt!.commentsBy('lobster-7').length ? true : undefined), 20_000);
    await sleep(Math.max(0, 12_000 - (Date.now() - began)));
    const seconds = (Date.now() - began) / 1000;
    const burst = Math.round(100 / 6); // what the harness's requests_per_minute: 100 gives (services/runtime.ts)
    for (const n of names) {
      const mine = molt.requests.filter((r) => r.agent === n);
      expect(mine.some((r) => r.path === '/home'), n).toBe(true); // every agent is polled
      // A token bucket of 100 a minute: never more than its burst plus what refilled meanwhile.
      expect(mine.length, n).toBeLessThanOrEqual(burst + Math.ceil((100 * seconds) / 60));
      // And in any 6 s window no more than a burst plus 6 s of refill (a minute at this pace stays under 100).
      for (const r of mine) expect(mine.filter((x) => x.at >= r.at && x.at < r.at + 6_000).length, n).toBeLessThanOrEqual(burst + 10);
    }
  });

  it.each([
    { challenges: true, when: 'after the comment POST, around its challenge' },
    { challenges: false, when: 'after the comment POST, before the notification is handled' },
  ])('answers exactly once when the daemon is SIGKILLed mid-activation ($when)', { timeout: PROCESS_TEST_MS }, async ({ challenges }) => {
    molt = await startFakeMoltbook({ challenges });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const post = molt.post('pinchy', { title: 'Hello', content: 'hi' });
    molt.comment('alice', post.id, 'welcome, pinchy');
    const agentsDir = makeAgentsDir({ pinchy: { config: lobster('pinchy'), prompt: 'You are {{name}}.' } }, { withGreeter: false });
    const settings = {
      hubUrl: '',
      adminKey: '',
      redisUrl,
      prefix: `warren-molt-kill-${Date.now()}`,
      agentsDir,
      hub: `hub: {type: moltbook, url: "${molt.url}", agents: {pinchy: {api_key_env: MOLTBOOK_KEY_PINCHY}}, home_interval: 100ms, requests_per_minute: 100, requests_per_minute_per_host: 90, write_limits: {comment_gap: 0}}`,
      env: { MOLTBOOK_KEY_PINCHY: pinchy.key, MODEL_KEY: 'sk-model' },
    };
    const procs: WarrenProcess[] = [];
    try {
      procs.push(startWarren(settings));
      // Killed the moment the comment exists on Moltbook: its challenge is still to be answered, the notification unhandled.
      await waitFor('the comment POST', () => molt!.requests.find((r) => r.method === 'POST' && r.path.endsWith('/comments') && r.status === 201), PROCESS_START_MS + 30_000, 5);
      procs[0]!.kill('SIGKILL');
      expect(await procs[0]!.exited).toBe('SIGKILL');
      procs.push(startWarren(settings));
      await waitFor('the comment published', () => (molt!.commentsBy('pinchy').some((c) => c.verified) ? true : undefined), 30_000);
      // The comment is visible before the restarted daemon is even up (a start takes seconds on a busy machine).
      await waitFor('post read', () => (molt!.unread('pinchy').length === 0 ? true : undefined), PROCESS_START_MS + 15_000);
      await sleep(1_500); // more polls of /home: nothing more to answer
      // Published exactly once. Killed before its challenge was written down, the first comment stays unverified,
      // which Moltbook never shows (nor lists to its author): the retry writes anew, and only that one is published.
      expect(molt.commentsBy('pinchy', post.id).filter((c) => c.verified)).toHaveLength(1);
      expect(molt.challenges.filter((c) => c.used)).toHaveLength(challenges ? 1 : 0);
      const posts = molt.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/comments'));
      // Without a challenge the comment is visible at once: the next daemon finds it and never POSTs again.
      expect(posts.length).toBeLessThanOrEqual(challenges ? 2 : 1);
      expect(molt.commentsBy('pinchy', post.id)).toHaveLength(posts.length);
    } finally {
      for (const p of procs) {
        p.kill('SIGKILL');
        await p.exited;
      }
    }
  });

  it('keeps the budget locally: spend recorded in Redis, and at 100 % of the daily limit the agent is not run', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const post = molt.post('pinchy', { title: 'Hello', content: 'hi' });
    molt.comment('alice', post.id, 'first');
    const prefix = `warren-molt-budget-${Date.now()}`;
    h = await start({ pinchy: pinchy.key }, ['pinchy'], {
      config: (c) => {
        c.redis.prefix = prefix;
        // $1 per token: one answer costs far more than the $1 a day pinchy may spend.
        c.executors.llm.prices = { 'fake-gpt': { input: 1_000_000, output: 1_000_000 } };
        c.budget.agents = { pinchy: { daily_usd: 1 } };
      },
    });
    await waitFor('first answer', () => (molt!.commentsBy('pinchy').length ? true : undefined), 15_000);
    const r = new Redis(redisUrl);
    // Usage is reported once the activation ends, just after its reply.
    const spent = await waitFor('spend recorded', async () => Number(await r.get(`${prefix}:moltbook:budget:pinchy:d:${new Date().toISOString().slice(0, 10)}`)) || undefined, 15_000);
    await r.quit();
    expect(spent).toBeGreaterThan(1);
    molt.comment('alice', post.id, 'second');
    await waitFor('skipped by the budget', () => h!.outcomes.find((o) => o.agent === 'pinchy' && o.reason === 'budget_critical'), 15_000);
    expect(molt.commentsBy('pinchy')).toHaveLength(1);
    expect(model.requests.filter((x) => x.path.includes('/chat/completions'))).toHaveLength(1);
  });

  it('never writes more than 50 comments a day for an agent', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    let answer = 0;
    model.setResponder(() => `Answer number ${++answer}.`);
    const prefix = `warren-molt-cap-${Date.now()}`;
    await commentedToday(prefix, 'pinchy', 47); // 47 written earlier today
    for (let i = 0; i < 6; i++) molt.comment('alice', molt.post('pinchy', { title: `Ask me anything ${i}`, content: 'go' }).id, `question ${i}`);
    h = await start({ pinchy: pinchy.key }, ['pinchy'], { config: (c) => void (c.redis.prefix = prefix) });
    await waitFor('three answers', () => (molt!.commentsBy('pinchy').length >= 3 ? true : undefined), 30_000);
    await waitFor('the cap seen', () => (h!.logs.some((l) => l.includes('50 comments today already')) ? true : undefined), 15_000);
    await sleep(1_500); // more polls and retries: still no further comment
    expect(molt.commentsBy('pinchy')).toHaveLength(3);
    expect(molt.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/comments'))).toHaveLength(3);
    expect(molt.requests.some((r) => r.status === 429)).toBe(false); // held back locally, never refused by the hub
  });

  it('does not explore with an agent that has no comments left today', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    const snappy = molt.addAgent('snappy');
    molt.addAgent('alice');
    molt.post('alice', { title: 'Anyone into tide pools?', content: 'Let us talk about tide pools.' });
    const prefix = `warren-molt-explore-${Date.now()}`;
    await commentedToday(prefix, 'pinchy', 50);
    h = await start({ pinchy: pinchy.key, snappy: snappy.key }, ['pinchy', 'snappy'], {
      behavior: 'behavior: {limits: {min_interval_seconds: 0}, discovery: {enabled: true}}',
      config: (c) => {
        c.redis.prefix = prefix;
        c.scheduler.exploration_interval = 100;
      },
    });
    await waitFor('snappy explored', () => (h!.outcomes.some((o) => o.agent === 'snappy' && o.trigger === 'exploration') ? true : undefined), 30_000);
    await sleep(1_000);
    expect(h.outcomes.filter((o) => o.agent === 'pinchy' && o.trigger === 'exploration')).toEqual([]);
  });

  it('uses a key rotated in its file after `warren reload`, without a restart', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const dir = mkdtempSync(join(tmpdir(), 'warren-molt-keys-'));
    const file = join(dir, 'pinchy-key');
    writeFileSync(file, `${pinchy.key}\n`);
    const post = molt.post('pinchy', { title: 'Hello', content: 'hi' });
    molt.comment('alice', post.id, 'hello pinchy');
    h = await startMoltbookHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ pinchy: { config: lobster('pinchy'), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      moltbook: molt,
      agents: { pinchy: undefined },
      env: { MODEL_KEY: 'sk-model', MOLTBOOK_KEY_PINCHY_FILE: file },
    });
    await waitFor('pinchy replied with its first key', () => (molt!.commentsBy('pinchy').length === 1 ? true : undefined), 15_000);

    // The owner rotates the key on Moltbook: the old one is refused, warren stops the agent and pauses it.
    const rotated = molt.rotateKey('pinchy');
    const r = new Redis(redisUrl);
    const paused = new RedisKeys(h.prefix).agentPaused;
    await waitFor('the old key refused and pinchy paused', async () => ((await r.hget(paused, 'pinchy')) ? true : undefined), 15_000);
    expect(h.logs.some((l) => l.includes('pinchy needs its operator and is paused'))).toBe(true);
    // The operator puts the new key in the file, reloads and resumes the agent.
    writeFileSync(file, `${rotated}\n`);
    await h.daemon.reload();
    const state = new AgentStateStore(r, h.prefix);
    await setAgentPaused(state, 'pinchy', false); // what `warren resume pinchy` does
    molt.comment('alice', post.id, 'still there, pinchy?');
    // An activation under way with the old key may fail after the resume and hold the agent in a backoff: the
    // operator resumes again. (Without the new key read, each resume would only end in another 401 and pause.)
    await waitFor('pinchy replied with its new key', async () => {
      if (molt!.commentsBy('pinchy').length === 2) return true;
      await setAgentPaused(state, 'pinchy', false);
      return undefined;
    }, 30_000, 1_000);
    await r.quit();
    const withNew = molt.requests.filter((r) => r.agent === 'pinchy' && r.method === 'POST' && r.path.endsWith('/comments'));
    expect(withNew.map((r) => r.status)).toEqual([201, 201]);
    expect(h.logs.some((l) => l.includes('pinchy: a new Moltbook key is in use'))).toBe(true);
    expect(h.logs.some((l) => l.includes(rotated) || l.includes(pinchy.key))).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it('skips an agent without a key, saying so, and runs the others', async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    molt.addAgent('snappy');
    const post = molt.post('pinchy', { title: 'Hello', content: 'hi' });
    molt.comment('alice', post.id, 'hello pinchy');
    h = await start({ pinchy: pinchy.key, snappy: undefined }, ['pinchy', 'snappy']);
    await waitFor('pinchy replied', () => (molt!.commentsBy('pinchy').length ? true : undefined), 15_000);
    const lines = h.logs.filter((l) => l.includes('snappy'));
    expect(lines.some((l) => l.includes('has no Moltbook key'))).toBe(true);
    expect(molt.requests.some((r) => r.agent === 'snappy')).toBe(false);
  });
});

describe('moltbook config', () => {
  it('reads hub.type moltbook with per-agent key variables, and refuses hub.embedded with it', () => {
    const c = WarrenConfigSchema.parse({ hub: { type: 'moltbook', url: 'https://www.moltbook.com/api/v1', agents: { greeter: { api_key_env: 'MOLTBOOK_KEY_GREETER' } } } });
    expect(c.hub).toMatchObject({ type: 'moltbook', agents: { greeter: { api_key_env: 'MOLTBOOK_KEY_GREETER' } }, home_interval: 60_000 });
    expect(WarrenConfigSchema.parse({}).hub.type).toBe('warren');
    const refused = WarrenConfigSchema.safeParse({ hub: { type: 'moltbook', embedded: true } });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toMatch(/cannot be combined with hub.type moltbook/);
    expect(WarrenConfigSchema.safeParse({ hub: { type: 'moltbook', agents: { greeter: { api_key_env: 'lowercase' } } } }).success).toBe(false);
  });
});
