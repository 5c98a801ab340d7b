// warren on Moltbook as real servers behave (issue 30, part 1): the daemon against the fake made as strict as the
// open-source Moltbook API server (test/fakes/moltbook-server.ts says where): per-IP limits, limiters before
// validation, `createdAt`, one community field, comments paged 100 at a time shallowest first.
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Redis } from 'ioredis';
import type { WarrenConfig } from '../services/config.ts';
import { MoltbookAdapter } from '../hub-client/moltbook/adapter.ts';
import { MoltbookInvalidWrite } from '../hub-client/moltbook/write-checks.ts';
import { bucketOf429, bucketsOf } from '../hub-client/moltbook/buckets.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { startFakeMoltbook, type FakeMoltbook } from './fakes/moltbook-server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { waitFor } from './support/hub-api.ts';
import { startMoltbookHarness, type MoltbookHarness } from './support/moltbook-harness.ts';

const redisUrl = inject('redisUrl');
let redis: Redis;
let model: FakeOpenAI;
let molt: FakeMoltbook | undefined;
const harnesses: MoltbookHarness[] = [];
beforeAll(async () => {
  redis = new Redis(redisUrl);
  model = await startFakeOpenAI({ defaultReply: 'Molting is mostly patience.' });
});
afterAll(async () => {
  await model.close();
  await redis.quit();
});
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.stop();
  await molt?.close();
  molt = undefined;
  model.reset();
});

const lobster = (name: string, extra = '', grants = 'hub:read, hub:write', limits = ''): string => `name: ${name}
description: A friendly lobster.
type: llm
brain:
  provider: openai
  model: fake-gpt
  api_base: ${model.url}
  api_key_env: MODEL_KEY
capabilities:
  grants: [${grants}]
behavior: {limits: {min_interval_seconds: 0${limits ? `, ${limits}` : ''}}${extra ? `, ${extra}` : ''}}
`;

async function start(agents: Record<string, string>, opts: { extra?: string; limits?: string; interests?: string; grants?: Record<string, string>; config?: (c: WarrenConfig) => void } = {}): Promise<MoltbookHarness> {
  const defs = Object.fromEntries(Object.keys(agents).map((n) => [n, { config: lobster(n, opts.extra, opts.grants?.[n], opts.limits) + (opts.interests ?? ''), prompt: 'You are {{name}}.' }]));
  const h = await startMoltbookHarness({ redisUrl, agentsDir: makeAgentsDir(defs, { withGreeter: false }), moltbook: molt!, agents, env: { MODEL_KEY: 'sk-model' }, config: opts.config });
  harnesses.push(h);
  return h;
}

const chats = (): number => model.requests.filter((r) => r.path.includes('/chat/completions')).length;

describe('warren on Moltbook as real servers behave', () => {
  it('answers a mention while /home fails, and reads the failing /home at a growing interval, not at every poll (item 1)', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    molt.failHome('pinchy', 500);
    const mention = molt.post('alice', { title: 'Question', content: 'Hey @pinchy, when do you molt?', submolt: 'general' });
    const h = await start({ pinchy: pinchy.key }, { interests: 'interests: {communities: [general]}\n' });
    await waitFor('the mention answered while /home fails', () => (molt!.commentsBy('pinchy', mention.id).length ? true : undefined), 20_000);
    const homes = (): number[] => molt!.requests.filter((r) => r.agent === 'pinchy' && r.path === '/home').map((r) => r.at);
    const first = homes()[0]!;
    await sleep(Math.max(0, first + 4_000 - Date.now()));
    // home_interval is 100 ms and the scheduler polls every 50 ms: unchecked, ~40 reads in 4 s. Backed off (waits of
    // at least 100, 200, 400, 800, 1600 ms), at most 7.
    const early = homes().filter((at) => at < first + 4_000);
    expect(early.length).toBeGreaterThanOrEqual(2);
    expect(early.length).toBeLessThanOrEqual(7);
    expect(h.logs.some((l) => l.includes('could not read the agent\'s Moltbook home; its mentions are still looked for'))).toBe(true);

    // /home back: a comment on pinchy's own post is found and answered.
    molt.failHome('pinchy', undefined);
    const own = molt.post('pinchy', { title: 'Mine', content: 'hello' });
    const c = molt.comment('alice', own.id, 'nice shell');
    await waitFor('the comment answered once /home works again', () => (molt!.commentsBy('pinchy', own.id).length ? true : undefined), 30_000);
    expect(molt.commentsBy('pinchy', own.id).map((x) => x.parentId)).toEqual([c.id]);
  });

  it('answers two questions in one thread that draw the same answer text, each under its own comment (item 2)', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    molt.addAgent('bob');
    const post = molt.post('pinchy', { title: 'Ask me about molting', content: 'go' });
    const q1 = molt.comment('alice', post.id, 'When do you molt?');
    const q2 = molt.comment('bob', post.id, 'How long does a molt take?');
    const h = await start({ pinchy: pinchy.key });
    await waitFor('both answered', () => (molt!.commentsBy('pinchy', post.id).length === 2 ? true : undefined), 20_000);
    await waitFor('post read', () => (molt!.unread('pinchy').length === 0 ? true : undefined), 10_000);
    const replies = molt.commentsBy('pinchy', post.id);
    expect(replies.map((r) => r.content)).toEqual(['Molting is mostly patience.', 'Molting is mostly patience.']);
    expect(replies.map((r) => r.parentId).sort()).toEqual([q1.id, q2.id].sort());
    expect(h.logs.some((l) => l.includes('not writing again'))).toBe(false);
    // The outcomes are recorded as the activations end, just after their replies.
    const handled = await waitFor('both recorded handled', () => { const ids = h.outcomes.flatMap((o) => o.handled); return ids.length >= 2 ? ids : undefined; }, 10_000);
    expect(handled.sort()).toEqual([`${post.id}:${q1.id}`, `${post.id}:${q2.id}`].sort());
  });

  it.each([
    { fields: 'camelCase', field: 'createdAt', ageH: 7 * 24, tier: 'established', msg: 'pinchy: Moltbook\'s posting limits for established agents apply' },
    { fields: 'snake_case', field: 'created_at', ageH: 7 * 24, tier: 'established', msg: 'pinchy: Moltbook\'s posting limits for established agents apply' },
    { fields: 'snake_case', field: 'created_at', ageH: 2, tier: 'new', msg: 'pinchy: Moltbook\'s posting limits for agents younger than 24 h apply' },
    { fields: 'camelCase', field: 'createdAt', ageH: 2, tier: 'new', msg: 'pinchy: Moltbook\'s posting limits for agents younger than 24 h apply' },
  ] as const)('reads the agent\'s age from /agents/me $field: $ageH h old, the $tier agents\' limits apply, and it says so (item 3)', { timeout: 60_000 }, async ({ fields, ageH, tier, msg }) => {
    molt = await startFakeMoltbook({ challenges: false, agentFields: fields });
    const pinchy = molt.addAgent('pinchy', { createdAt: new Date(Date.now() - ageH * 3_600_000).toISOString() });
    molt.addAgent('alice');
    const post = molt.post('pinchy', { title: 'Hello', content: 'hi' });
    const prefix = `warren-molt-age-${randomUUID().slice(0, 8)}`;
    // 20 comments today: a new agent's cap (20) is reached, an established agent's (50) is not.
    await redis.set(`${prefix}:moltbook:comments:pinchy:${new Date().toISOString().slice(0, 10)}`, '20', 'EX', 86_400);
    molt.comment('alice', post.id, 'still there?');
    const h = await start({ pinchy: pinchy.key }, { config: (c) => void (c.redis.prefix = prefix) });
    if (tier === 'established') await waitFor('pinchy answered the 21st comment of its day', () => (molt!.commentsBy('pinchy').length ? true : undefined), 20_000);
    else {
      await waitFor('the new agent\'s cap seen', () => (h.logs.some((l) => l.includes('20 comments today already')) ? true : undefined), 20_000);
      await sleep(1_000);
      expect(molt.commentsBy('pinchy')).toEqual([]);
    }
    const told = await waitFor('the tier logged', () => h.logs.map((l) => JSON.parse(l) as { tier?: string; msg: string; agent?: string }).find((l) => l.tier !== undefined), 10_000);
    expect(told).toMatchObject({ agent: 'pinchy', tier, msg });
    expect(molt.requests.find((r) => r.path === '/agents/me')?.status).toBe(200);
  });

  it('shares the per-host allowance between two daemons on one Redis (item 4)', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const keys = Object.fromEntries(['pinchy', 'snappy', 'clawd'].map((n) => [n, molt!.addAgent(n).key]));
    const prefix = `warren-molt-shared-${randomUUID().slice(0, 8)}`;
    // 60 a minute for the host, a burst of 10; each daemon alone would poll three agents far faster.
    const config = (c: WarrenConfig): void => {
      c.redis.prefix = prefix;
      c.hub.requests_per_minute_per_host = 60;
    };
    await start(keys, { config });
    const began = Date.now();
    await start(keys, { config });
    await sleep(8_000);
    const seconds = (Date.now() - began) / 1000;
    const sent = molt.requests.filter((r) => r.at >= began && r.at <= began + seconds * 1000);
    expect(sent.length).toBeGreaterThan(5); // both polled
    expect(sent.length).toBeLessThanOrEqual(10 + Math.ceil(seconds) + 1); // one burst and one refill between both
    expect(molt.requests.filter((r) => r.status === 429)).toEqual([]);
  });

  it('holds every agent of both daemons back when the host answers 429, for its Retry-After / retryAfter (item 4)', { timeout: 60_000 }, async () => {
    // The server's per-IP limit, made small and short: six requests per 10 s window (the burst spends it at once).
    molt = await startFakeMoltbook({ challenges: false, rateLimits: { requestsPerMinute: 6, requestWindowMs: 10_000 } });
    const keys = Object.fromEntries(['pinchy', 'snappy'].map((n) => [n, molt!.addAgent(n).key]));
    const prefix = `warren-molt-429-${randomUUID().slice(0, 8)}`;
    const config = (c: WarrenConfig): void => {
      c.redis.prefix = prefix;
      c.hub.requests_per_minute_per_host = 90; // above what the server allows: its 429 must teach the rest
    };
    const a = await start(keys, { config });
    await start(keys, { config });
    const refused = await waitFor('the first 429', () => molt!.requests.find((r) => r.status === 429), 20_000);
    const held = await waitFor('the 429 held in Redis', async () => (await redis.hget(`${prefix}:pace:moltbook:host:${new URL(molt!.url).host}`, 'until')) ?? undefined, 5_000);
    const until = Number(held);
    expect(until - refused.at).toBeGreaterThan(3_000);
    expect(until).toBeGreaterThan(refused.at);
    await sleep(Math.max(0, until - Date.now()) + 1_000);
    // Requests already on their way when the 429 came may still arrive just after it; then nothing until the hold ends.
    const during = molt.requests.filter((r) => r.at > refused.at + 1_000 && r.at < until - 100);
    expect(during).toEqual([]);
    expect(molt.requests.some((r) => r.at >= until)).toBe(true);
    expect(a.logs.some((l) => l.includes('holding every agent on this host back')) || harnesses[1]!.logs.some((l) => l.includes('holding every agent on this host back'))).toBe(true);
  });

  it('holds a key\'s comments back for a 429 that says how long only in the body\'s camelCase `retryAfter` (item 4)', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const post = molt.post('pinchy', { title: 'One', content: 'hi' });
    molt.rateLimitNext({ on: 'comment', agent: 'pinchy', retryAfter: 40 }); // no Retry-After header, no snake_case field
    molt.comment('alice', post.id, 'hello pinchy');
    const prefix = `warren-molt-camel-${randomUUID().slice(0, 8)}`;
    await start({ pinchy: pinchy.key }, { config: (c) => void (c.redis.prefix = prefix) });
    const refused = await waitFor('the 429', () => molt!.requests.find((r) => r.status === 429), 15_000);
    const until = Number(await waitFor('the hold in Redis', async () => (await redis.hget(`${prefix}:pace:moltbook:agent:pinchy:comment`, 'until')) ?? undefined, 5_000));
    expect(until - refused.at).toBeGreaterThan(39_000);
    expect(until - refused.at).toBeLessThan(42_000);
    await sleep(2_000);
    expect(molt.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/comments')).map((r) => r.status)).toEqual([429]);
  });

  it('finds a reply deep in a thread of more than 100 comments, on a later page (item 6)', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    molt.addAgent('bob');
    const post = molt.post('bob', { title: 'Big thread', content: 'everyone say hi' });
    const mine = molt.comment('pinchy', post.id, 'hi from pinchy');
    for (let i = 0; i < 120; i++) molt.comment('bob', post.id, `hi number ${i}`);
    // A reply to pinchy's comment: depth 1, after the 121 comments of depth 0, so not on the first page of 100.
    const reply = molt.comment('alice', post.id, 'pinchy, what do you eat?', mine.id);
    await start({ pinchy: pinchy.key });
    await waitFor('pinchy answered alice', () => (molt!.commentsBy('pinchy', post.id).length === 2 ? true : undefined), 20_000);
    expect(molt.commentsBy('pinchy', post.id).find((c) => c.id !== mine.id)?.parentId).toBe(reply.id);
    const pages = molt.requests.filter((r) => r.agent === 'pinchy' && r.method === 'GET' && r.path.startsWith(`/posts/${post.id}/comments`));
    expect(pages.some((r) => /[?&](offset|cursor)=100/.test(r.path))).toBe(true);
  });

  it('does not ask the model again about a post the agent already commented on while exploring (item 7)', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const post = molt.post('alice', { title: 'Anyone into tide pools?', content: 'Let us talk about tide pools.', submolt: 'general' });
    model.setResponder((r) => (r.rawBody.includes(post.id) ? `REPLY TO ${post.id}\nTide pools are the best nurseries.` : 'NO_ACTION'));
    const h = await start({ pinchy: pinchy.key }, {
      extra: 'discovery: {enabled: true}',
      config: (c) => {
        c.scheduler.exploration_interval = 100;
        c.scheduler.min_staleness = 0; // explore again at once: each round sees the same post
      },
    });
    await waitFor('pinchy commented while exploring', () => (molt!.commentsBy('pinchy', post.id).length ? true : undefined), 20_000);
    await waitFor('three more explorations', () => (h.outcomes.filter((o) => o.trigger === 'exploration').length >= 4 ? true : undefined), 30_000);
    expect(model.requests.filter((r) => r.rawBody.includes(post.id))).toHaveLength(1);
    expect(molt.commentsBy('pinchy', post.id)).toHaveLength(1);
    expect(h.outcomes.filter((o) => o.trigger === 'exploration').slice(1).map((o) => o.reason)).toContain('empty_feed');
    expect(chats()).toBe(1);
  });
});

describe('warren on the open-source Moltbook server (found running it: docs/moltbook-real-server.md)', () => {
  it('answers a mention on a server without /home, notifications or DMs, and the activation ends well: nothing to mark read, DMs not asked for again and again', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false, notifications: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const mention = molt.post('alice', { title: 'Question', content: 'Hey @pinchy, when do you molt?', submolt: 'general' });
    const h = await start({ pinchy: pinchy.key }, { interests: 'interests: {communities: [general]}\n' });
    await waitFor('the mention answered', () => (molt!.commentsBy('pinchy', mention.id).length ? true : undefined), 20_000);
    const outcome = await waitFor('its activation ended', () => h.outcomes.find((o) => o.agent === 'pinchy'), 10_000);
    // A mention is warren's own find: there is no read state on the hub to set for it (here the endpoint is absent).
    expect(outcome).toMatchObject({ reason: 'final', replies: 1, handled: [`${mention.id}:mention`] });
    expect(molt.requests.filter((r) => r.path.startsWith('/notifications/'))).toEqual([]);
    // A server without DMs (404) is not asked again at every round (home_interval is 100 ms here).
    await sleep(3_000);
    expect(molt.requests.filter((r) => r.path === '/agents/dm/check').length).toBeLessThanOrEqual(2);
    expect(h.logs.filter((l) => l.includes('"level":50')).filter((l) => !l.includes('answers without credentials'))).toEqual([]);
  });

  it('finds a reply deep in a thread of more than 100 comments on a server that does not page comments, and never marks it read unanswered', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false, commentPaging: 'ignored' });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    molt.addAgent('bob');
    const post = molt.post('bob', { title: 'Big thread', content: 'everyone say hi' });
    const mine = molt.comment('pinchy', post.id, 'hi from pinchy');
    for (let i = 0; i < 120; i++) molt.comment('bob', post.id, `hi number ${i}`);
    const reply = molt.comment('alice', post.id, 'pinchy, what do you eat?', mine.id);
    await start({ pinchy: pinchy.key });
    await waitFor('pinchy answered alice', () => (molt!.commentsBy('pinchy', post.id).length === 2 ? true : undefined), 20_000);
    expect(molt.commentsBy('pinchy', post.id).find((c) => c.id !== mine.id)?.parentId).toBe(reply.id);
    // The post was marked read only after the answer.
    const answeredAt = molt.requests.find((r) => r.method === 'POST' && r.path === `/posts/${post.id}/comments`)!.at;
    expect(molt.requests.filter((r) => r.path === `/notifications/read-by-post/${post.id}` && r.at < answeredAt)).toEqual([]);
    // Found out once that the server does not page comments: every later read of the thread is one wide request.
    const reads = molt.requests.filter((r) => r.method === 'GET' && r.path.startsWith(`/posts/${post.id}/comments`)).map((r) => new URL(r.path, 'http://x').searchParams);
    expect(reads.filter((q) => q.get('offset') === '100')).toHaveLength(1);
    expect(reads.slice(2).map((q) => q.get('limit'))).toEqual(reads.slice(2).map(() => '500'));
    expect(reads.length).toBeGreaterThan(3);
  });
});

describe('Moltbook DMs and the hub tools real clients use (item 8)', () => {
  it('answers a direct message in its conversation, once, and the next one too', { timeout: 120_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const conv = molt.dm('alice', 'pinchy', 'Psst, pinchy: when do you molt?');
    const h = await start({ pinchy: pinchy.key });
    const replied = (n: number) => (): true | undefined => (molt!.dmsIn(conv.id).filter((m) => m.from === 'pinchy').length >= n ? true : undefined);
    await waitFor('pinchy answered the DM', replied(1), 40_000);
    molt.dm('alice', 'pinchy', 'And how long does it take?');
    await waitFor('pinchy answered the second DM', replied(2), 40_000);
    await sleep(1_000); // more polls: nothing more to answer
    expect(molt.dmsIn(conv.id).map((m) => m.from)).toEqual(['alice', 'pinchy', 'alice', 'pinchy']);
    expect(molt.dmsIn(conv.id)[1]!.message).toBe('Molting is mostly patience.');
    // The model saw the conversation as the thread it answers.
    expect(model.requests.some((r) => r.rawBody.includes('when do you molt?'))).toBe(true);
    await waitFor('both DMs recorded handled', () => (h.outcomes.flatMap((o) => o.handled).length >= 2 ? true : undefined), 10_000);
    expect(h.outcomes.flatMap((o) => o.handled)).toEqual(molt.dmsIn(conv.id).filter((m) => m.from === 'alice').map((m) => `dm:pinchy:${conv.id}:${m.id}`));
    expect(molt.requests.filter((r) => r.path.startsWith('/notifications/read-by-post'))).toEqual([]);
  });
});

describe('Moltbook DMs within the agent\'s limits (item 8)', () => {
  it('answers DMs through the same write allowance as comments: over behavior.limits, the next DM is not answered', { timeout: 120_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const conv = molt.dm('alice', 'pinchy', 'Psst, pinchy: when do you molt?');
    const h = await start({ pinchy: pinchy.key }, { limits: 'max_daily_comments: 1' });
    await waitFor('pinchy answered the first DM', () => (molt!.dmsIn(conv.id).some((m) => m.from === 'pinchy') ? true : undefined), 40_000);
    molt.dm('alice', 'pinchy', 'And how long does it take?');
    // Its answer is ready, but the write allowance refuses it, as it would a comment over the day's count.
    await waitFor('the second answer refused by the limits', () => (h.logs.some((l) => l.includes('refused: max_daily_comments 1 reached')) ? true : undefined), 40_000);
    await sleep(1_000);
    expect(molt.dmsIn(conv.id).map((m) => m.from)).toEqual(['alice', 'pinchy', 'alice']);
    expect(molt.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/send'))).toHaveLength(1);
  });
});

describe('Moltbook social hub tools (item 8)', () => {
  it('lets an agent vote, follow, subscribe, read its feed and search comments through hub tools, within its grants', { timeout: 60_000 }, async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    const snappy = molt.addAgent('snappy');
    molt.addAgent('alice');
    const tide = molt.post('alice', { title: 'Tide pools', content: 'It is molt season.', submolt: 'tidepools' });
    molt.comment('alice', molt.post('pinchy', { title: 'Hello', content: 'hi' }).id, 'pinchy, do you like tide pools?');
    molt.comment('alice', molt.post('snappy', { title: 'Hello', content: 'hi' }).id, 'snappy, do you like tide pools?');
    model.setResponder((r) => {
      if (r.rawBody.includes('"role":"tool"')) return 'I do, they are lovely.';
      return {
        tool_calls: [
          { name: 'hub_vote', arguments: { target: 'post', id: tide.id, direction: 'up' } },
          { name: 'hub_follow', arguments: { agent: 'alice' } },
          { name: 'hub_subscribe', arguments: { community: 'm/tidepools' } },
          { name: 'hub_feed', arguments: {} },
          { name: 'hub_search_comments', arguments: { query: 'tide pools' } },
        ],
      };
    });
    // snappy may read the hub but not write to it: its votes, follows and subscriptions are refused by its grants.
    const h = await start({ pinchy: pinchy.key, snappy: snappy.key }, { grants: { snappy: 'hub:read' } });
    await waitFor('both ran', () => (['pinchy', 'snappy'].every((a) => h.outcomes.some((o) => o.agent === a)) ? true : undefined), 30_000);
    expect(model.requests.some((r) => r.rawBody.includes('"hub_vote"') && r.rawBody.includes('"hub_search_comments"'))).toBe(true);
    expect(molt.social.votes).toEqual([{ agent: 'pinchy', kind: 'post', id: tide.id, direction: 'up' }]);
    expect(molt.social.follows).toEqual([{ agent: 'pinchy', name: 'alice' }]);
    expect(molt.social.subscriptions).toEqual([{ agent: 'pinchy', submolt: 'tidepools' }]);
    for (const agent of ['pinchy', 'snappy']) {
      expect(molt.requests.some((r) => r.agent === agent && r.path.startsWith('/feed'))).toBe(true);
      expect(molt.requests.some((r) => r.agent === agent && r.path.startsWith('/search') && r.path.includes('type=comments'))).toBe(true);
    }
    // What the search found reached the model as the tool's result.
    expect(model.requests.some((r) => r.rawBody.includes('pinchy, do you like tide pools?') && r.rawBody.includes('"role":"tool"'))).toBe(true);
  });
});

describe('Moltbook one-off actions and pacing buckets', () => {
  it('votes at most once per idempotency key (a second vote could take the first back), and again after a refusal', async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const hub = new MoltbookAdapter({ baseUrl: molt.url, keys: new Map([['pinchy', molt.addAgent('pinchy').key]]), redis, prefix: `molt-${randomUUID().slice(0, 8)}` });
    molt.addAgent('alice');
    const post = molt.post('alice', { title: 'Vote me', content: 'please' });
    await hub.vote('pinchy', { kind: 'post', id: post.id }, 'up', { idempotencyKey: 'warren:a1:step:1:call:0' });
    await hub.vote('pinchy', { kind: 'post', id: post.id }, 'up', { idempotencyKey: 'warren:a1:step:1:call:0' }); // a retried activation
    expect(molt.social.votes).toHaveLength(1);
    const refused = await hub.vote('pinchy', { kind: 'comment', id: 'no-such-comment' }, 'down', { idempotencyKey: 'warren:a2:step:1:call:0' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 404 });
    const c = molt.comment('alice', post.id, 'now it exists');
    await hub.vote('pinchy', { kind: 'comment', id: c.id }, 'down', { idempotencyKey: 'warren:a3:step:1:call:0' });
    expect(molt.social.votes.map((v) => [v.kind, v.direction])).toEqual([['post', 'up'], ['comment', 'down']]);
  });

  it.each([
    { kind: 'read', hostRate: undefined, buckets: ['moltbook:agent:pinchy'], on429: 'moltbook:agent:pinchy' },
    { kind: 'read', hostRate: { perMinute: 90, burst: 15 }, buckets: ['moltbook:agent:pinchy', 'moltbook:host:h'], on429: 'moltbook:host:h' },
    { kind: 'comment', hostRate: undefined, buckets: ['moltbook:agent:pinchy', 'moltbook:agent:pinchy:comment'], on429: 'moltbook:agent:pinchy:comment' },
    { kind: 'post', hostRate: { perMinute: 90, burst: 15 }, buckets: ['moltbook:agent:pinchy', 'moltbook:agent:pinchy:post', 'moltbook:host:h'], on429: 'moltbook:agent:pinchy:post' },
  ] as const)('paces a $kind (host paced: $hostRate) by $buckets; its 429 holds $on429', ({ kind, hostRate, buckets, on429 }) => {
    const scope = { agent: 'pinchy', kind, host: 'h', keyRate: { perMinute: 60, burst: 10 }, ...(hostRate ? { hostRate } : {}) };
    expect(bucketsOf(scope).map((b) => b.key)).toEqual(buckets);
    expect(bucketOf429(scope)).toBe(on429);
  });
});

describe('Moltbook writes checked before they are sent (item 5)', () => {
  it('through the daemon: a post the server would refuse is refused locally, naming the field, and the half hour\'s one post still goes out, naming its community twice', { timeout: 60_000 }, async () => {
    // The server's own limits (one post per key per 30 min, counted before its validation), and it reads `submolt`.
    molt = await startFakeMoltbook({ challenges: false });
    const pinchy = molt.addAgent('pinchy');
    molt.addAgent('alice');
    const own = molt.post('pinchy', { title: 'Ask me', content: 'about molting' });
    molt.comment('alice', own.id, 'pinchy, could you write a molting diary for m/general?');
    const diary = 'Day one: the old shell splits along the back.';
    let step = 0;
    model.setResponder(() => {
      step++;
      // First two malformed posts the open-source server would refuse after counting them (content over 40,000
      // characters; a community name that cannot exist), then the good one, then the answer to alice.
      if (step === 1) return { tool_calls: [
        { name: 'hub_post', arguments: { title: 'Molting diary', content: 'x'.repeat(40_001), community: 'general' } },
        { name: 'hub_post', arguments: { title: 'Molting diary', content: diary, community: 'm/tide pools!' } },
      ] };
      if (step === 2) return { tool_calls: [{ name: 'hub_post', arguments: { title: 'Molting diary', content: diary, community: 'm/general' } }] };
      return 'Done: the diary is up in m/general.';
    });
    const h = await start({ pinchy: pinchy.key });
    // The post is the activation's answer (a tool posted): the text after it is not written as a comment.
    const done = await waitFor('pinchy\'s activation ended', () => h.outcomes.find((o) => o.agent === 'pinchy'), 30_000);
    expect(done).toMatchObject({ reason: 'posted', outcome: { kind: 'posted_by_tool' } });
    expect(molt.postsBy('pinchy').map((p) => [p.title, p.content, p.submolt])).toContainEqual(['Molting diary', diary, 'general']);
    // The model was told which field was wrong, from warren, not from the server.
    const second = model.requests.filter((r) => r.path.includes('/chat/completions'))[1]!.rawBody;
    expect(second).toMatch(/content: pinchy: 40001 characters, at most 40000 \(checked before sending/);
    expect(second).toMatch(/community: pinchy: \\"tide pools!\\" is not a community name/);
    // One POST /posts reached the server: the good one, within the post limiter's one, naming the community both ways.
    const sent = molt.requests.filter((r) => r.method === 'POST' && r.path === '/posts');
    expect(sent.map((r) => r.status)).toEqual([201]);
    expect(sent[0]!.body).toMatchObject({ submolt: 'general', submolt_name: 'general', title: 'Molting diary', content: diary });
    expect(molt.requests.filter((r) => r.status === 429)).toEqual([]);

    // Why it matters: sent as they were, the first malformed post would have spent the half hour.
    const key = molt.addAgent('snappy').key;
    const raw = (body: unknown): Promise<number> => fetch(`${molt!.url}/posts`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.status);
    expect(await raw({ submolt: 'general', title: 'Molting diary', content: 'x'.repeat(40_001) })).toBe(400);
    expect(await raw({ submolt: 'general', title: 'Molting diary', content: diary })).toBe(429);
  });

  const adapter = (f: FakeMoltbook, agent: string): MoltbookAdapter =>
    new MoltbookAdapter({ baseUrl: f.url, keys: new Map([[agent, f.addAgent(agent).key]]), redis, prefix: `molt-${randomUUID().slice(0, 8)}`, writeLimits: { established: { postGapMs: 0, commentGapMs: 0, commentsPerDay: 50 }, newAgent: { postGapMs: 0, commentGapMs: 0, commentsPerDay: 20 } } });

  it('posts on a server that reads `submolt` and on one that reads `submolt_name`: the body names both', async () => {
    for (const submoltField of ['submolt', 'submolt_name'] as const) {
      molt = await startFakeMoltbook({ challenges: false, submoltField });
      const hub = adapter(molt, 'pinchy');
      const p = await hub.createPost({ agent: 'pinchy', title: 'Hello', content: 'first molt', community: 'm/general' });
      expect((await hub.getPost(p.id)).community).toBe('general');
      expect(molt.requests.find((r) => r.method === 'POST')?.body).toMatchObject({ submolt: 'general', submolt_name: 'general' });
      await molt.close();
    }
    molt = undefined;
  });

  it('refuses a malformed post locally, naming the field, so the server\'s post limiter (before its validation) is not spent', async () => {
    molt = await startFakeMoltbook({ challenges: false });
    const hub = adapter(molt, 'pinchy');
    const long = await hub.createPost({ agent: 'pinchy', title: 'x'.repeat(301), content: 'too long a title' }).catch((e: unknown) => e);
    expect(long).toBeInstanceOf(MoltbookInvalidWrite);
    expect(long).toMatchObject({ field: 'title', retryable: false });
    expect((long as Error).message).toMatch(/title: pinchy: 301 characters, at most 300/);
    expect(await hub.createPost({ agent: 'pinchy', title: 'Hi', content: '   ' }).catch((e: unknown) => e)).toMatchObject({ field: 'content' });
    expect(await hub.createPost({ agent: 'pinchy', title: 'Hi', content: 'x', community: 'not a community!' }).catch((e: unknown) => e)).toMatchObject({ field: 'community' });
    expect(await hub.createComment({ agent: 'pinchy', postId: 'p1', content: '' }).catch((e: unknown) => e)).toMatchObject({ field: 'content' });
    expect(molt.requests.filter((r) => r.method === 'POST')).toEqual([]);
    // The one post of the half hour is still there for the good post.
    const ok = await hub.createPost({ agent: 'pinchy', title: 'Hi', content: 'a proper post' });
    expect(ok.title).toBe('Hi');

    // Why: the server counts a post before it validates it. Sent as it is, a bad post costs the half hour.
    const key = molt.addAgent('snappy').key;
    const raw = (body: unknown): Promise<number> => fetch(`${molt!.url}/posts`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.status);
    expect(await raw({ submolt: 'general', content: 'no title' })).toBe(400);
    expect(await raw({ submolt: 'general', title: 'Now', content: 'a good one' })).toBe(429);
  });
});
