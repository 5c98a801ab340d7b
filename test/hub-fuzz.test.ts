// Fuzzing both sides of the hub contract with seeded, repeatable inputs:
// - 1,000+ malformed or unexpected answers fed to hub-client over real HTTP: every call either returns typed
//   data or fails with HubError / HubProtocolError; nothing else escapes, nothing is polluted.
// - 2,000+ malformed requests sent to the local hub (bad keys, bodies, queries, methods and paths; JSON nested
//   thousands deep; numbers like 1e308; watch page requests from another Host or Origin or without the page's
//   session): each answered 4xx with a string `detail`, no request crashes the hub or logs an error, and a
//   digest of every table (read directly) is the same after each rejected request as before it.
import { createHash } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubClient, HubError, HubProtocolError } from '../hub-client/index.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { watchSessionCookie } from '../local-hub/testing.ts';
import { Prng } from './support/prng.ts';

const RUNS = 1200;
const HUB_RUNS = 2000;

// ---------------------------------------------------------------------------------------------------------------
// Client side

const at = '2026-02-07T10:15:00Z';
const agent = { id: 'a1', name: 'alice', type: 'native' };
const VALID: Record<string, unknown> = {
  agent: { id: 'a1', name: 'alice', type: 'native', created_at: at, last_activated_at: null },
  post: { id: 'p1', author: agent, content: 'hi', created_at: at, community: 'm/general', comments: [{ id: 'c1', author: agent, content: 'yo', created_at: at, parent_id: null }] },
  comment: { id: 'c1', post_id: 'p1', parent_id: null, author: agent, content: 'yo', created_at: at },
  notification: { id: 'n1', type: 'mention', post_id: 'p1', from_agent: agent, content: 'hi', created_at: at, read: false },
  budget: { agent_id: 'alice', daily_limit: 1, daily_used: 0.5, healthy: true, status: 'healthy', used_pct: 50 },
  community: { name: 'general', description: 'd', created_at: at },
  count: { unread: 1, total: 2 },
  stale: { id: 'a1', name: 'alice', last_activated_at: null },
};

function randomScalar(r: Prng): unknown {
  return r.pick<() => unknown>([
    () => null,
    () => r.int(2) === 0,
    () => r.int(1e6) - 5e5,
    () => r.next() * 1e308 * (r.chance(0.5) ? -1 : 1),
    () => '',
    () => 'x'.repeat(r.int(5000)),
    () => 'not-a-date',
    () => '2026-13-45T99:99:99Z',
    () => '\u0000\uffff\ud800',
    () => '__proto__',
    () => r.pick(['mention', 'reply', 'dm', 'thread_update', 'comment', 'MENTION']),
  ])();
}

function randomValue(r: Prng, depth = 0): unknown {
  if (depth > 3 || r.chance(0.4)) return randomScalar(r);
  if (r.chance(0.5)) return Array.from({ length: r.int(4) }, () => randomValue(r, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = r.int(4); i > 0; i--) o[r.pick(['id', 'name', 'author', 'content', 'created_at', 'data', 'post', 'agents', 'posts', 'x'])] = randomValue(r, depth + 1);
  return o;
}

/** A valid object with one thing broken: a field removed, retyped, or the object wrapped oddly. */
function mutate(r: Prng, base: unknown): unknown {
  if (typeof base !== 'object' || base === null) return randomValue(r);
  const copy = structuredClone(base) as Record<string, unknown>;
  const keys = Object.keys(copy);
  switch (r.int(7)) {
    case 0:
      delete copy[r.pick(keys)];
      return copy;
    case 1:
      copy[r.pick(keys)] = randomValue(r);
      return copy;
    case 2:
      return { [r.pick(['data', 'success', 'post', 'agent', 'results'])]: r.chance(0.5) ? copy : [copy, randomValue(r)] };
    case 3:
      return JSON.parse(`{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "id": "p"}`) as unknown;
    case 4:
      return [copy, randomValue(r), copy];
    case 5:
      copy.author = r.chance(0.5) ? 'alice' : { id: 5, name: null };
      return copy;
    default:
      return randomValue(r);
  }
}

type ClientCall = (c: HubClient) => Promise<unknown>;
const CALLS: ReadonlyArray<[string, ClientCall]> = [
  ['getAgent', (c) => c.getAgent('alice')],
  ['me', (c) => c.me()],
  ['listAgents', (c) => c.listAgents()],
  ['staleAgents', (c) => c.staleAgents(900)],
  ['agentsWithNotifications', (c) => c.agentsWithNotifications()],
  ['pollAgentsWithWork', (c) => c.pollAgentsWithWork(1)],
  ['getPost', (c) => c.getPost('p1', { includeComments: true })],
  ['listPosts', (c) => c.listPosts()],
  ['search', (c) => c.search('q')],
  ['discover', (c) => c.discover('alice', { keywords: ['x'] })],
  ['listCommunities', (c) => c.listCommunities()],
  ['createPost', (c) => c.createPost({ agent: 'alice', content: 'x' })],
  ['createComment', (c) => c.createComment({ agent: 'alice', postId: 'p1', content: 'x' })],
  ['listNotifications', (c) => c.listNotifications('alice')],
  ['notificationCount', (c) => c.notificationCount('alice')],
  ['markRead', (c) => c.markRead('alice', ['n1'])],
  ['budgetHealth', (c) => c.budgetHealth('alice')],
  ['registerAgent', (c) => c.registerAgent({ name: 'alice' })],
  ['regenerateKey', (c) => c.regenerateKey()],
];

describe('hub-client against malformed answers', () => {
  let server: Server;
  let next: { status: number; body: string } = { status: 200, body: '{}' };
  let client: HubClient;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(next.status, { 'content-type': 'application/json' });
        res.end(next.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    client = new HubClient({ baseUrl: base, apiKey: 'k', retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 }, timeoutMs: 5000 });
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it(`returns typed data or a typed error for ${RUNS} generated answers, never anything else`, async () => {
    const r = new Prng(20261123);
    const outcomes = { ok: 0, protocol: 0, http: 0 };
    const escaped: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const base = r.pick(Object.values(VALID));
      const listKey = r.pick(['agents', 'posts', 'results', 'notifications', 'submolts', 'data']);
      const shape = r.int(6);
      const payload =
        shape === 0 ? mutate(r, base) : shape === 1 ? { [listKey]: Array.from({ length: r.int(5) }, () => (r.chance(0.5) ? base : mutate(r, base))) } : shape === 2 ? randomValue(r) : mutate(r, base);
      const status = r.chance(0.85) ? r.pick([200, 201]) : r.pick([400, 401, 403, 404, 409, 418, 422, 500, 503]);
      const text = r.chance(0.1) ? r.pick(['', 'not json', '{"unterminated', '<html>oops</html>', 'null', '[]']) : JSON.stringify(payload);
      next = { status, body: text };
      const [name, call] = r.pick(CALLS);
      try {
        await call(client);
        outcomes.ok++;
      } catch (err) {
        if (err instanceof HubProtocolError) outcomes.protocol++;
        else if (err instanceof HubError) outcomes.http++;
        else escaped.push(`#${i} ${name} ${status} ${text.slice(0, 120)} → ${String(err)}`);
      }
    }
    expect(escaped).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The generator reaches all three outcomes, so the test exercises parsing, not only transport errors.
    expect(outcomes.ok).toBeGreaterThan(50);
    expect(outcomes.protocol).toBeGreaterThan(50);
    expect(outcomes.http).toBeGreaterThan(50);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Hub side

describe('local hub against malformed requests', () => {
  let hub: RunningHub;
  let dbPath: string;
  const ADMIN = 'fuzz-admin-key';
  let aliceKey = '';
  let postId = '';
  let commentId = '';
  let watchCookie = '';
  /** What the hub logged at error level: a request that crashed its handler shows here. */
  const errorLogs: string[] = [];

  beforeAll(async () => {
    dbPath = join(mkdtempSync(join(tmpdir(), 'warren-fuzz-')), 'hub.sqlite');
    const logger = pino({ level: 'error' }, { write: (line: string) => void errorLogs.push(line) });
    hub = await startHub({ dbPath, port: 0, adminKey: ADMIN, maxBodyBytes: 64 * 1024, logger });
    const call = async (path: string, key: string, body: unknown): Promise<Record<string, string>> => {
      const res = await fetch(`${hub.url}/api/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await res.json()) as Record<string, string>;
    };
    aliceKey = (await call('/agents/register', ADMIN, { name: 'alice' })).api_key!;
    await call('/agents/register', ADMIN, { name: 'bob' });
    postId = (await call('/posts', aliceKey, { content: 'hello @bob' })).id!;
    commentId = (await call(`/posts/${postId}/comments`, aliceKey, { content: 'first' })).id!;
    watchCookie = await watchSessionCookie(hub.watchUrl);
  });
  afterAll(() => hub.close());

  /** A digest of every row of every table: equal digests mean no state changed. */
  function snapshot(): string {
    const db = new DatabaseSync(dbPath, { readOnly: true });
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>;
      const rows = JSON.stringify(tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all()]));
      return createHash('sha256').update(rows).digest('hex');
    } finally {
      db.close();
    }
  }

  interface BadRequest {
    method: string;
    path: string;
    headers: Record<string, string>;
    body?: string;
    why: string;
  }

  function generate(r: Prng): BadRequest {
    const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
    const alice = { authorization: `Bearer ${aliceKey}`, 'content-type': 'application/json' };
    const wrongKeys: Array<Record<string, string>> = [{}, { authorization: 'Bearer nope' }, { authorization: `Bearer botburrow_agent_${'0'.repeat(64)}` }, { 'x-admin-key': 'wrong' }, { authorization: 'Basic abc' }, { authorization: `Bearer ${aliceKey.slice(0, -1)}x` }];
    const writeRoutes = ['/posts', `/posts/${postId}/comments`, '/agents/register', '/notifications/read', '/notifications/read-all', '/submolts', '/system/consumption', '/agents/me/regenerate-key', '/agents/alice/activated'];
    const badBodies: Array<[string, unknown]> = [
      ['/posts', { content: '' }],
      ['/posts', { content: 42 }],
      ['/posts', { content: ['a'] }],
      ['/posts', { content: 'x', title: 'x'.repeat(301) }],
      ['/posts', { content: 'x', community: 'Not Valid!' }],
      ['/posts', { content: 'x', agent_id: 'nobody-here' }],
      ['/posts', { content: 'x', tags: 'not-a-list' }],
      [`/posts/${postId}/comments`, { content: '   ' }],
      [`/posts/${postId}/comments`, { content: 'x', parent_id: 'no-such-comment' }],
      ['/posts/no-such-post/comments', { content: 'x', agent_id: 'alice' }],
      ['/agents/register', { name: 'x' }],
      ['/agents/register', { name: 'UPPER' }],
      ['/agents/register', { name: 'alice' }],
      ['/agents/register', { name: 'new-one', type: 'robot' }],
      ['/agents/register', { name: 'new-two', api_key_expires_at: '2000-01-01T00:00:00Z' }],
      ['/notifications/read', { notification_ids: 'n1', agent_id: 'bob' }],
      ['/notifications/read', { agent_id: 'nobody-here', notification_ids: [] }],
      ['/notifications/read-all', { agent_id: 'nobody-here' }],
      ['/submolts', { name: 'general' }],
      ['/submolts', { name: '' }],
      ['/system/consumption', { agent_id: 'alice', tokens_input: -1, tokens_output: 0, cost_usd: 0 }],
      ['/system/consumption', { agent_id: 'alice', tokens_input: 1, tokens_output: 1 }],
      ['/system/consumption', { agent_id: 'alice', tokens_input: 1, tokens_output: 1, cost_usd: 'free' }],
      ['/system/consumption', { agent_id: 'alice', tokens_input: 1, tokens_output: 1, cost_usd: 1, task_type: 'party' }],
      ['/agents/nobody-here/activated', {}],
    ];
    const badQueries = [
      '/posts?limit=0',
      '/posts?limit=abc',
      '/posts?offset=-1',
      '/posts?sort=best',
      '/agents?has_notifications=maybe',
      '/agents?stale=true&min_staleness=-5',
      '/notifications?limit=1000&agent_id=alice',
      '/notifications?agent_id=nobody-here',
      '/notifications/poll?timeout=-1',
      '/notifications/poll?batch_size=0',
      '/search',
      '/search?q=',
      '/search?q=x&limit=-3',
      '/feed/discover?agent_id=alice&limit=0',
      '/feed/discover?agent_id=alice&exclude_responded=perhaps',
      '/system/budget-health?agent_id=nobody-here',
      '/posts/no-such-post',
      '/agents/nobody-here',
    ];

    const deep = (depth: number, leaf: string): string => '['.repeat(depth) + leaf + ']'.repeat(depth);
    const watchWrite = { 'content-type': 'application/json', 'x-warren-watch': '1', cookie: watchCookie };

    switch (r.int(13)) {
      case 0: {
        const path = r.pick([...writeRoutes, '/posts', '/agents', '/notifications']);
        const method = writeRoutes.includes(path) && r.chance(0.5) ? 'POST' : 'GET';
        return { method, path: `/api/v1${path}`, headers: { 'content-type': 'application/json', ...r.pick(wrongKeys) }, body: method === 'POST' ? '{"content":"x"}' : undefined, why: 'bad key' };
      }
      case 1: {
        const valid = JSON.stringify({ content: 'truncated', agent_id: 'alice', title: 'x' });
        return { method: 'POST', path: `/api/v1${r.pick(writeRoutes)}`, headers: admin, body: valid.slice(0, 1 + r.int(valid.length - 2)), why: 'truncated JSON' };
      }
      case 2: {
        const [path, body] = r.pick(badBodies);
        return { method: 'POST', path: `/api/v1${path}`, headers: r.chance(0.5) ? admin : alice, body: JSON.stringify(body), why: 'invalid body' };
      }
      case 3:
        return { method: 'GET', path: `/api/v1${r.pick(badQueries)}`, headers: admin, why: 'invalid query' };
      case 4:
        return { method: r.pick(['PUT', 'DELETE', 'PATCH']), path: `/api/v1${r.pick(writeRoutes)}`, headers: admin, body: '{}', why: 'wrong method' };
      case 5:
        return { method: r.pick(['GET', 'POST']), path: r.pick(['/api/v1/nope', '/api/v2/posts', `/api/v1/posts/%E0%A4%A`, '/api/v1/agents/a/b/c', '/api/v1/../etc/passwd']), headers: admin, body: undefined, why: 'unknown path' };
      case 6:
        return { method: 'POST', path: '/api/v1/posts', headers: { ...alice, 'idempotency-key': r.chance(0.5) ? 'k'.repeat(256) : 'bad\u0001key'.replace('\u0001', '\t') }, body: JSON.stringify({ content: 'keyed' }), why: 'bad idempotency key' };
      case 7:
        return { method: 'POST', path: '/api/v1/posts', headers: alice, body: JSON.stringify({ content: 'x'.repeat(70 * 1024) }), why: 'body too large' };
      case 9: {
        // Nested deeper than the hub takes: the whole body, a field, or consumption metadata.
        const depth = r.pick([33, 64, 1000, 5000, 30_000]);
        const body = r.pick([
          () => deep(depth, '1'),
          () => `{"content":${deep(depth, '"x"')},"agent_id":"alice"}`,
          () => `{"agent_id":"alice","tokens_input":1,"tokens_output":1,"cost_usd":1,"metadata":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`,
        ])();
        return { method: 'POST', path: `/api/v1${r.pick(writeRoutes)}`, headers: admin, body, why: 'nested too deep' };
      }
      case 10: {
        // Numbers no report can hold; as JSON text, so 1e999 (Infinity) and -0e0 arrive as sent.
        const field = r.pick(['tokens_input', 'tokens_output', 'cost_usd', 'duration_seconds']);
        const value = r.pick(['1e308', '1.7976931348623157e308', '-1e308', '1e999', '1e13', '-0.5', '"1e3"', 'null', '[1]']);
        const base: Record<string, string> = { agent_id: '"alice"', tokens_input: '1', tokens_output: '1', cost_usd: '0.01', [field]: value };
        if (field === 'duration_seconds' && value === 'null') base.cost_usd = '2e6';
        const text = `{${Object.entries(base)
          .map(([k, v]) => `"${k}":${v}`)
          .join(',')}}`;
        if (r.chance(0.15)) return { method: 'POST', path: '/api/v1/agents/me/regenerate-key', headers: alice, body: `{"grace_period_hours":${r.pick(['1e308', '-1', '169', '1e999'])}}`, why: 'huge number' };
        return { method: 'POST', path: '/api/v1/system/consumption', headers: admin, body: text, why: 'huge number' };
      }
      case 11: {
        const huge = r.pick(['1e308', 'Infinity', '-Infinity', 'NaN', '1e999', '9'.repeat(400)]);
        const path = r.pick([
          `/feed/discover?agent_id=alice&max_age=${huge}`,
          `/feed/discover?agent_id=alice&min_age=${huge}`,
          `/discover?agent_id=alice&max_age=${huge}`,
          `/notifications/poll?timeout=${huge}`,
          `/posts?offset=${huge}`,
          `/posts?limit=${huge}`,
          `/agents?stale=true&min_staleness=${huge}`,
          `/notifications?agent_id=alice&limit=${huge}`,
          `/notifications?agent_id=alice&cursor=${Buffer.from(`n${'9'.repeat(r.pick([16, 300]))}`).toString('base64url')}`,
        ]);
        return { method: 'GET', path: `/api/v1${path}`, headers: admin, why: 'huge number in query' };
      }
      case 12: {
        // The watch page, asked by another site, without its session or header, or with bad input.
        const evilHost = { host: r.pick(['rebound.example', `rebound.example:${hub.port}`, 'localhost.evil.test', '127.0.0.1.nip.io', 'xn--80ak6aa92e.com', 'localhost:1@evil.test']) };
        const evilOrigin = { origin: r.pick(['http://rebound.example', 'null', 'https://evil.test', `http://127.0.0.1.evil.test:${hub.port}`]) };
        const content = JSON.stringify({ content: 'from the watch page' });
        return r.pick<() => BadRequest>([
          () => ({ method: 'POST', path: '/watch/api/posts', headers: { ...watchWrite, ...evilHost }, body: content, why: `watch write, Host ${evilHost.host}` }),
          () => ({ method: 'POST', path: '/watch/api/posts', headers: { ...watchWrite, ...evilOrigin }, body: content, why: 'watch write, other Origin' }),
          () => ({ method: 'POST', path: `/watch/api/posts/${postId}/comments`, headers: { ...watchWrite, cookie: '' }, body: content, why: 'watch write, no session' }),
          () => ({ method: 'POST', path: '/watch/api/posts', headers: { ...watchWrite, cookie: `warren_watch_${hub.port}=${'x'.repeat(43)}` }, body: content, why: 'watch write, forged session' }),
          () => ({ method: 'POST', path: '/watch/api/posts', headers: { 'content-type': 'application/json', cookie: watchCookie }, body: content, why: 'watch write, no page header' }),
          () => ({ method: 'POST', path: '/watch/api/posts', headers: watchWrite, body: JSON.stringify({ as: 'bob', content: 'as an agent' }), why: 'watch write as an agent' }),
          () => ({ method: 'POST', path: '/watch/api/posts', headers: watchWrite, body: JSON.stringify({ as: r.pick(['Bad Name', 'x', '']), content: 'x' }), why: 'watch write, bad name' }),
          () => ({ method: 'POST', path: '/watch/api/posts', headers: watchWrite, body: `{"content":${deep(r.pick([40, 5000]), '"x"')}}`, why: 'watch write, deep' }),
          () => {
            const headers = r.chance(0.5) ? evilHost : evilOrigin;
            return { method: 'GET', path: r.pick(['/', '/watch/app.js', '/watch/api/state', '/watch/api/feed', '/watch/events']), headers, why: `watch read from ${JSON.stringify(headers)}` };
          },
        ])();
      }
      default: {
        // An agent key acting as another agent.
        const [path, body] = r.pick<[string, Record<string, unknown>]>([
          ['/posts', { content: 'as bob', agent_id: 'bob' }],
          [`/posts/${postId}/comments`, { content: 'as bob', agent_id: 'bob', parent_id: commentId }],
          ['/notifications/read-all', { agent_id: 'bob' }],
          ['/system/consumption', { agent_id: 'bob', tokens_input: 1, tokens_output: 1, cost_usd: 1 }],
          ['/agents/bob/activated', {}],
        ]);
        return { method: 'POST', path: `/api/v1${path}`, headers: alice, body: JSON.stringify(body), why: 'acting as another agent' };
      }
    }
  }

  /** node:http rather than fetch: it sends any Host and Origin as given, as a rebinding browser would. */
  function send(req: BadRequest): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const length = req.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(req.body)) };
      const out = request(new URL(req.path, hub.url), { method: req.method, headers: { ...req.headers, ...length } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      out.on('error', reject);
      // A refusal is immediate; a request held open (a long-poll, an event stream) was let through.
      out.setTimeout(5000, () => {
        out.destroy();
        resolve({ status: 0, text: 'no answer within 5 s' });
      });
      out.end(req.body);
    });
  }

  it(`answers ${HUB_RUNS} malformed requests with 4xx and {detail}, never crashes, and changes nothing`, { timeout: 120_000 }, async () => {
    const before = snapshot();
    const r = new Prng(7070);
    const wrong: string[] = [];
    const changed: string[] = [];
    const statuses = new Map<number, number>();
    const reasons = new Set<string>();
    for (let i = 0; i < HUB_RUNS; i++) {
      const req = generate(r);
      reasons.add(req.why);
      const res = await send(req);
      const text = res.text;
      let detail: unknown;
      try {
        detail = (JSON.parse(text) as { detail?: unknown }).detail;
      } catch {
        detail = undefined;
      }
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status < 400 || res.status >= 500 || typeof detail !== 'string') wrong.push(`#${i} ${req.why}: ${req.method} ${req.path.slice(0, 120)} → ${res.status} ${text.slice(0, 160)}`);
      if (snapshot() !== before) changed.push(`#${i} ${req.why}: ${req.method} ${req.path.slice(0, 120)} → ${res.status}`);
    }
    expect(wrong).toEqual([]);
    expect(changed).toEqual([]);
    expect(errorLogs).toEqual([]);
    expect((await fetch(`${hub.url}/health`)).status).toBe(200);
    // Every class of refusal and every kind of malformed request was reached.
    for (const status of [400, 401, 403, 404, 405, 409, 413, 422]) expect([status, statuses.get(status) ?? 0]).not.toEqual([status, 0]);
    expect(reasons.size).toBeGreaterThanOrEqual(20);
  });
});
