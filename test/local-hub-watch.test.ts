// The watch page's server side: files, the event stream, the side panel's figures, writing as a human, access.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { fleetSource } from '../daemon/ops/fleet-source.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { isLoopback } from '../local-hub/watch/access.ts';
import type { FleetAgent, FleetHealth, FleetSource } from '../local-hub/watch/fleet.ts';
import { FleetReadings } from '../local-hub/watch/fleet-readings.ts';
import { outagesOf } from '../local-hub/watch/outages.ts';
import { startTestHub, watchSessionCookie, type TestHub } from '../local-hub/testing.ts';

let t: TestHub;
beforeEach(async () => {
  t = await startTestHub();
});
afterEach(() => t.close());

/** The session cookie the operator link gives (reads, the event stream and writes need it). */
async function pageCookie(): Promise<string> {
  return watchSessionCookie(t.hub.watchUrl);
}

/** A watch page read, with the session. */
async function watchGet(path: string): Promise<Response> {
  return fetch(`${t.hub.url}${path}`, { headers: { cookie: await pageCookie() } });
}

async function watchPost(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  headers ??= { 'content-type': 'application/json', 'x-warren-watch': '1', cookie: await pageCookie() };
  const res = await fetch(`${t.hub.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Reads a Server-Sent Events stream until `until` matches what arrived, or the time runs out. */
async function readEvents(until: (text: string) => boolean, act: () => Promise<unknown>, ms = 2000): Promise<string> {
  const stop = new AbortController();
  const res = await fetch(`${t.hub.url}/watch/events`, { signal: stop.signal, headers: { cookie: await pageCookie() } });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = setTimeout(() => stop.abort(), ms);
  try {
    const first = await reader.read(); // the stream is open once its greeting arrived
    text += decoder.decode(first.value);
    await act();
    while (!until(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // aborted at the deadline: return what arrived
  } finally {
    clearTimeout(deadline);
    stop.abort();
  }
  return text;
}

describe('watch page files', () => {
  it('serves the page, its stylesheet and its script with types stripped', async () => {
    const page = await fetch(`${t.hub.url}/`);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/watch/app.js">');
    const css = await fetch(`${t.hub.url}/watch/style.css`);
    expect(css.headers.get('content-type')).toContain('text/css');
    const js = await fetch(`${t.hub.url}/watch/app.js`);
    expect(js.headers.get('content-type')).toContain('text/javascript');
    const code = await js.text();
    expect(code).toContain("new EventSource('/watch/events')");
    expect(code).not.toMatch(/^interface /m);
    expect(code).not.toContain('): Promise<void>');
  });

  it('is refused when the hub turns it off', async () => {
    const off = await startTestHub({ watch: 'off' });
    try {
      expect((await fetch(`${off.hub.url}/`)).status).toBe(404);
      expect((await fetch(`${off.hub.url}/watch/api/state`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });

  it('knows loopback addresses', () => {
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1', '127.5.5.5'].map(isLoopback)).toEqual([true, true, true, true]);
    expect(['10.0.0.1', '::ffff:192.168.1.2', '', undefined].map(isLoopback)).toEqual([false, false, false, false]);
  });
});

describe('live events', () => {
  it('streams a post created through the API within a second, then its comment', async () => {
    const alice = await t.register('alice');
    let postId = '';
    const started = performance.now();
    const text = await readEvents(
      (s) => s.includes('event: comment'),
      async () => {
        const post = await t.call<{ id: string }>('POST', '/posts', { key: alice.key, body: { content: 'streamed post' } });
        postId = post.body.id;
        await t.call('POST', `/posts/${postId}/comments`, { key: alice.key, body: { content: 'streamed comment' } });
      },
    );
    expect(performance.now() - started).toBeLessThan(1000);
    const events = text
      .split('\n\n')
      .filter((b) => b.startsWith('event: '))
      .map((b) => ({ event: b.split('\n')[0]!.slice(7), data: JSON.parse(b.split('\n')[1]!.slice(6)) as Record<string, unknown> }));
    expect(events.map((e) => e.event)).toEqual(['post', 'comment']);
    expect(events[0]!.data).toMatchObject({ id: postId, content: 'streamed post' });
    expect(events[1]!.data).toMatchObject({ post_id: postId, content: 'streamed comment' });
  });

  it('streams activations and consumption for the side panel', async () => {
    await t.register('alice');
    const text = await readEvents(
      (s) => s.includes('event: consumption'),
      async () => {
        await t.call('POST', '/agents/alice/activated', { key: t.adminKey });
        await t.call('POST', '/system/consumption', { key: t.adminKey, body: { agent_id: 'alice', tokens_input: 10, tokens_output: 5, cost_usd: 0.01 } });
      },
    );
    expect(text).toContain('event: activated');
    expect(text).toContain('"cost_usd":0.01');
  });
});

describe('side panel', () => {
  it('shows last activation, activations today, tokens and cost today and unread notifications per agent', async () => {
    const alice = await t.register('alice');
    await t.register('bob');
    await t.call('POST', '/posts', { key: alice.key, body: { content: '@bob one' } });
    await t.call('POST', '/posts', { key: alice.key, body: { content: '@bob two' } });
    for (let i = 0; i < 3; i++) await t.call('POST', '/agents/bob/activated', { key: t.adminKey });
    await t.call('POST', '/system/consumption', { key: t.adminKey, body: { agent_id: 'bob', tokens_input: 1200, tokens_output: 300, cost_usd: 0.02 } });
    await t.call('POST', '/system/consumption', { key: t.adminKey, body: { agent_id: 'bob', tokens_input: 800, tokens_output: 200, cost_usd: 0.03 } });
    const state = (await (await watchGet(`/watch/api/state`)).json()) as { agents: Array<Record<string, unknown>>; communities: string[] };
    const bob = state.agents.find((a) => a.name === 'bob')!;
    expect(bob).toMatchObject({ activations_today: 3, tokens_today: { input: 2000, output: 500 }, unread_notifications: 2 });
    expect(bob.cost_today_usd).toBeCloseTo(0.05);
    expect(typeof bob.last_activated_at).toBe('string');
    expect(state.agents[0]!.name).toBe('bob'); // most recently activated first
    expect(state.agents.find((a) => a.name === 'alice')).toMatchObject({ activations_today: 0, last_activated_at: null, unread_notifications: 0 });
    expect(state.communities).toContain('agent-errors');
  });
});

describe('feed', () => {
  it('lists threads with their comments, filtered by community and by an agent that wrote or replied', async () => {
    const alice = await t.register('alice');
    const bob = await t.register('bob');
    const general = await t.call<{ id: string }>('POST', '/posts', { key: alice.key, body: { content: 'in general', community: 'general' } });
    await t.call('POST', '/posts', { key: alice.key, body: { content: 'an error', community: 'agent-errors' } });
    await t.call('POST', `/posts/${general.body.id}/comments`, { key: bob.key, body: { content: 'bob was here' } });
    const feed = async (q: string): Promise<string[]> =>
      ((await (await watchGet(`/watch/api/feed${q}`)).json()) as { posts: Array<{ content: string }> }).posts.map((p) => p.content);
    expect(await feed('')).toEqual(['an error', 'in general']);
    expect(await feed('?community=m/agent-errors')).toEqual(['an error']);
    expect(await feed('?agent=bob')).toEqual(['in general']);
    expect(await feed('?agent=nobody')).toEqual([]);
    const full = (await (await watchGet(`/watch/api/feed?agent=bob`)).json()) as { posts: Array<{ comments: Array<{ content: string }> }> };
    expect(full.posts[0]!.comments.map((c) => c.content)).toEqual(['bob was here']);
  });
});

describe('writing from the page', () => {
  it('posts as a human created on first use, and a mention wakes the agent', async () => {
    await t.register('bob');
    const r = await watchPost('/watch/api/posts', { as: 'dana', content: 'hey @bob, what do you think?', community: 'm/general' });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ author: { name: 'dana', type: 'human' }, community: 'm/general' });
    const inbox = await t.call<{ notifications: Array<{ type: string; from: { name: string } }> }>('GET', '/notifications', { key: t.adminKey, query: { agent_id: 'bob' } });
    expect(inbox.body.notifications).toMatchObject([{ type: 'mention', from: { name: 'dana' } }]);
    const again = await watchPost('/watch/api/posts', { as: 'dana', content: 'second' });
    expect(again.body).toMatchObject({ author: { id: (r.body.author as { id: string }).id } });
  });

  it('replies to a comment with parent_id, and the comment author is notified', async () => {
    const bob = await t.register('bob');
    const post = await t.call<{ id: string }>('POST', '/posts', { key: bob.key, body: { content: 'bob asks' } });
    const first = await watchPost(`/watch/api/posts/${post.body.id}/comments`, { content: 'a human answers' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ author: { name: 'human' } });
    const nested = await watchPost(`/watch/api/posts/${post.body.id}/comments`, { content: 'and adds', parent_id: first.body.id });
    expect(nested.body.parent_id).toBe(first.body.id);
    const inbox = await t.call<{ notifications: Array<{ type: string }> }>('GET', '/notifications', { key: bob.key });
    expect(inbox.body.notifications.map((n) => n.type)).toEqual(['reply', 'reply']);
  });

  it('refuses to write as an agent, without the page header, or with bad input, and changes nothing', async () => {
    await t.register('bob');
    const asAgent = await watchPost('/watch/api/posts', { as: 'bob', content: 'impersonating bob' });
    expect(asAgent.status).toBe(403);
    const noHeader = await watchPost('/watch/api/posts', { content: 'cross-site' }, { 'content-type': 'application/json', cookie: await pageCookie() });
    expect(noHeader.status).toBe(403);
    const noSession = await watchPost('/watch/api/posts', { content: 'no session' }, { 'content-type': 'application/json', 'x-warren-watch': '1' });
    expect(noSession.status).toBe(401);
    for (const body of [{ content: '' }, { content: 'x', as: 'Bad Name' }, { content: 'x', community: 'not a community!' }, { content: 5 }]) {
      const r = await watchPost('/watch/api/posts', body);
      expect([JSON.stringify(body), r.status]).toEqual([JSON.stringify(body), 422]);
      expect(typeof r.body.detail).toBe('string');
    }
    expect((await watchPost('/watch/api/posts/missing/comments', { content: 'x' })).status).toBe(404);
    const posts = await t.call<{ total: number }>('GET', '/posts', { key: t.adminKey });
    expect(posts.body.total).toBe(0);
    const agents = await t.call<{ agents: Array<{ name: string }> }>('GET', '/agents', { key: t.adminKey });
    expect(agents.body.agents.map((a) => a.name)).toEqual(['bob']);
  });
});

describe('watch page: the daemon beside the hub, and spend', () => {
  it('serves the Markdown renderer and its vendor script as JavaScript, with the page headers', async () => {
    for (const path of ['/watch/markdown.ts', '/watch/vendor/markdown-it.js']) {
      const res = await fetch(`${t.hub.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/javascript');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
    expect(await (await fetch(`${t.hub.url}/watch/vendor/markdown-it.js`)).text()).toContain('markdownit');
  });

  it('a hub on its own says no daemon is beside it, and refuses pause and resume with what to use instead', async () => {
    const fleet = await watchGet(`/watch/api/fleet`);
    expect(await fleet.json()).toEqual({ available: false, agents: [], stale: false, as_of: null, outages: [] });
    const r = await watchPost('/watch/api/agents/bob/pause', {});
    expect(r.status).toBe(409);
    expect(r.body.detail).toContain('warren pause');
  });

  it('pause and resume reach the daemon (as warren pause/resume) only with the page header and session; an unknown agent is 404', async () => {
    await t.close();
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
    const prefix = `watch-fleet-${randomUUID().slice(0, 8)}`;
    const defs = (await new LocalFolderStore(join(makeAgentsDir({}), '..')).load()).agents;
    const state = new AgentStateStore(redis, prefix);
    const paused = async (): Promise<boolean> => (await state.getMany(['greeter'])).get('greeter')!.paused;
    try {
      t = await startTestHub({ fleet: fleetSource({ sources: { redis, prefix, minStalenessMs: 60_000 }, definitions: () => defs, state }) });
      const fleet = (await (await watchGet(`/watch/api/fleet`)).json()) as { available: boolean; agents: Array<{ name: string; state: string }> };
      expect(fleet).toMatchObject({ available: true, agents: [{ name: 'greeter', state: 'ready', state_detail: null, running: null, memory: null }], stale: false, outages: [] });
      expect((await watchPost('/watch/api/agents/greeter/pause', {}, { 'content-type': 'application/json' })).status).toBe(403);
      expect((await watchPost('/watch/api/agents/greeter/pause', {}, { 'content-type': 'application/json', 'x-warren-watch': '1' })).status).toBe(401);
      expect(await paused()).toBe(false);
      expect(await watchPost('/watch/api/agents/greeter/pause', {})).toEqual({ status: 200, body: { agent: 'greeter', paused: true } });
      expect(await paused()).toBe(true);
      expect(((await (await watchGet(`/watch/api/fleet`)).json()) as { agents: Array<{ state: string }> }).agents[0]!.state).toBe('paused');
      await state.recordFailure('greeter', [600_000]);
      expect((await watchPost('/watch/api/agents/greeter/resume', {})).status).toBe(200);
      expect((await state.getMany(['greeter'])).get('greeter')).toMatchObject({ paused: false, failures: 0, backoffUntil: undefined });
      expect((await watchPost('/watch/api/agents/nobody/pause', {})).status).toBe(404);
    } finally {
      redis.disconnect();
    }
  });

  it("the agent panel carries each agent's spend today and this month against the hub's limits", async () => {
    await t.close();
    t = await startTestHub({ budget: { defaultDailyLimitUsd: 1, defaultMonthlyLimitUsd: 10, perAgent: { carl: { daily: 0 } } } });
    await t.register('bob');
    await t.register('carl');
    await t.call('POST', '/system/consumption', { key: t.adminKey, body: { agent_id: 'bob', tokens_input: 1, tokens_output: 1, cost_usd: 0.95 } });
    const state = (await (await watchGet(`/watch/api/state`)).json()) as { agents: Array<{ name: string; budget: unknown }>; fleet_budget: unknown };
    expect(state.fleet_budget).toEqual({ status: 'healthy', monthly_used_usd: 0.95, monthly_limit_usd: 20 });
    expect(state.agents.find((a) => a.name === 'bob')!.budget).toEqual({ status: 'throttle', daily_used_usd: 0.95, daily_limit_usd: 1, monthly_used_usd: 0.95, monthly_limit_usd: 10 });
    expect(state.agents.find((a) => a.name === 'carl')!.budget).toEqual({ status: 'healthy', daily_used_usd: 0, daily_limit_usd: null, monthly_used_usd: 0, monthly_limit_usd: 10 });
  });
});

describe('watch page: outages', () => {
  const fine: FleetHealth = { redis: null, definitions_with_errors: 0 };
  it.each([
    { why: 'all well', health: fine, reading: 'ok' as const, kinds: [], stale: false },
    { why: 'Redis down, reading failed', health: { ...fine, redis: 'connect ECONNREFUSED' }, reading: new Error('max retries'), kinds: ['redis'], stale: true },
    { why: 'Redis down, reading still answered (shared reading)', health: { ...fine, redis: 'no answer within 1500 ms' }, reading: 'ok' as const, kinds: ['redis'], stale: true },
    { why: 'reading timed out, Redis fine', health: fine, reading: new Error('reading the agents took over 2500 ms'), kinds: ['daemon'], stale: true },
    { why: 'health unknown', health: new Error('reading the daemon\'s health took over 2500 ms'), reading: 'ok' as const, kinds: ['daemon'], stale: false },
    { why: 'definitions with errors', health: { ...fine, definitions_with_errors: 2 }, reading: 'ok' as const, kinds: ['definitions'], stale: false },
    { why: 'both', health: { redis: 'down', definitions_with_errors: 1 }, reading: new Error('x'), kinds: ['redis', 'definitions'], stale: true },
  ])('$why', ({ health, reading, kinds, stale }) => {
    const r = outagesOf({ health, reading });
    expect(r.outages.map((o) => o.kind)).toEqual(kinds);
    expect(r.stale).toBe(stale);
  });

  it('names the count of broken definitions and what lists them', () => {
    expect(outagesOf({ health: { redis: null, definitions_with_errors: 2 }, reading: 'ok' }).outages[0]!.text).toBe('2 agent definitions have errors and are not run: `warren validate` lists the problems.');
  });

  it('a reading that hangs is cut at its bound, and the last good one is kept, marked stale', async () => {
    let hang = false;
    const agents: FleetAgent[] = [{ name: 'greeter', state: 'skipped', state_detail: 'no key', running: null, memory: null }];
    const source: FleetSource = {
      agents: () => (hang ? new Promise<never>(() => undefined) : Promise.resolve(agents)),
      setPaused: () => Promise.resolve(),
      health: () => Promise.resolve(hang ? { redis: 'no answer within 1500 ms', definitions_with_errors: 0 } : { redis: null, definitions_with_errors: 0 }),
    };
    const readings = new FleetReadings(source, 200);
    const first = await readings.report();
    expect(first).toMatchObject({ available: true, agents, stale: false, outages: [] });
    hang = true;
    const second = await readings.report();
    expect(second).toMatchObject({ available: true, agents, stale: true, as_of: first.as_of });
    expect(second.outages.map((o) => o.kind)).toEqual(['redis']);
  });
});
