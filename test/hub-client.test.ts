// The hub client against a hub that drifts from the contract: real HTTP, crafted answers.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HubClient, HubError } from '../hub-client/index.ts';
import { backoffDelayMs, isRepeatable, parseRetryAfter } from '../hub-client/retry-policy.ts';

type Handler = (req: IncomingMessage, body: string) => { status: number; body: unknown; headers?: Record<string, string> };
let handler: Handler = () => ({ status: 404, body: { detail: 'no handler' } });
const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
let server: ReturnType<typeof createServer>;
let base = '';
const warnings: string[] = [];
const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const r = handler(req, body);
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function client(): HubClient {
  return new HubClient({ baseUrl: base, apiKey: 'admin-secret', logger, retry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 50 } });
}
const from = { id: 'a1', name: 'alice', type: 'human' };
const at = '2026-02-07T10:15:00Z';

describe('hub client tolerance', () => {
  it('skips unknown notification types and malformed items with a warning, keeps the rest', async () => {
    warnings.length = 0;
    handler = () => ({
      status: 200,
      body: {
        notifications: [
          { id: 'n1', type: 'mention', post_id: 'p1', from_agent: from, created_at: at, read: false },
          { id: 'n2', type: 'thread_update', post_id: 'p1', from: from, created_at: at },
          { id: 'n3', type: 'reply', post_id: 'p1', from, created_at: '2026-02-07T11:15:00+01:00' },
          { id: 'n4', type: 'mention' },
          'garbage',
        ],
        unread_count: 5,
      },
    });
    const page = await client().listNotifications('greeter');
    expect(page.notifications.map((n) => [n.id, n.type, n.from.name])).toEqual([
      ['n1', 'mention', 'alice'],
      ['n3', 'reply', 'alice'],
    ]);
    expect(page.skipped).toEqual(['n2', 'n4', '?']);
    expect(warnings.join('\n')).toMatch(/thread_update/);
    expect(seen.at(-1)?.url).toBe('/api/v1/notifications?agent_id=greeter&unread=true&limit=50');
    expect(seen.at(-1)?.headers.authorization).toBe('Bearer admin-secret');
  });

  it('accepts bare, wrapped and data-enveloped objects and lists', async () => {
    const post = { id: 'p1', author: from, content: 'hi', created_at: at };
    for (const body of [post, { success: true, post }, { data: post }]) {
      handler = () => ({ status: 200, body });
      expect((await client().getPost('p1')).id).toBe('p1');
    }
    for (const body of [{ agents: [{ id: 'x', name: 'greeter', notification_count: 2 }] }, { data: [{ id: 'x', name: 'greeter' }] }, [{ id: 'x', name: 'greeter', notification_count: 1 }]]) {
      handler = () => ({ status: 200, body });
      expect((await client().agentsWithNotifications()).map((a) => a.name)).toEqual(['greeter']);
    }
  });

  it('throws a typed error on a malformed object, naming the field', async () => {
    handler = () => ({ status: 200, body: { id: 'p1', content: 'no author', created_at: at } });
    await expect(client().getPost('p1')).rejects.toThrow(/author/);
  });

  it('retries GETs on 503 and honours Retry-After, turns detail into a string', async () => {
    let calls = 0;
    handler = () => (++calls < 3 ? { status: 503, body: { detail: { reason: 'busy' } }, headers: { 'retry-after': '0' } } : { status: 200, body: { agents: [] } });
    expect(await client().agentsWithNotifications()).toEqual([]);
    expect(calls).toBe(3);
    calls = 0;
    handler = () => (++calls, { status: 503, body: { detail: { reason: 'busy' } } });
    const err = await client().agentsWithNotifications().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HubError);
    expect((err as HubError).detail).toBe('{"reason":"busy"}');
    expect(calls).toBe(3);
  });

  it('never retries a POST without an idempotency key, and never retries 4xx', async () => {
    let calls = 0;
    handler = () => (++calls, { status: 502, body: { detail: 'bad gateway' } });
    await expect(client().createComment({ agent: 'greeter', postId: 'p1', content: 'x' })).rejects.toThrow(/502/);
    expect(calls).toBe(1);
    calls = 0;
    handler = () => (++calls, { status: 422, body: { detail: 'content required' } });
    await expect(client().createComment({ agent: 'greeter', postId: 'p1', content: '' }, { idempotencyKey: 'k' })).rejects.toThrow(/content required/);
    expect(calls).toBe(1);
  });

  it('retries an idempotent POST and sends the same key each time', async () => {
    let calls = 0;
    const comment = { id: 'c1', post_id: 'p1', author: { id: 'g', name: 'greeter' }, content: 'hello', created_at: at };
    handler = () => (++calls < 2 ? { status: 500, body: { detail: 'boom' } } : { status: 201, body: comment });
    const c = await client().createComment({ agent: 'greeter', postId: 'p1', content: 'hello', parentId: 'c0' }, { idempotencyKey: 'key-1' });
    expect(c.id).toBe('c1');
    const posts = seen.slice(-2);
    expect(posts.map((s) => s.headers['idempotency-key'])).toEqual(['key-1', 'key-1']);
    expect(JSON.parse(posts[1]!.body)).toEqual({ agent_id: 'greeter', content: 'hello', parent_id: 'c0' });
  });

  it('times out a hanging call', async () => {
    handler = () => ({ status: 200, body: {} });
    const slow = createServer(() => undefined); // never answers
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const c = new HubClient({ baseUrl: `http://127.0.0.1:${(slow.address() as AddressInfo).port}`, apiKey: 'k', timeoutMs: 100, retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } });
    await expect(c.getAgent('x')).rejects.toThrow(/timed out/);
    slow.closeAllConnections();
    slow.close();
  });
});

describe('retry policy', () => {
  // Which statuses are retried: test/retryable-status.test.ts (the hub's rows, conflict 'state').
  it('classifies methods', () => {
    expect(isRepeatable('GET', false)).toBe(true);
    expect(isRepeatable('POST', false)).toBe(false);
    expect(isRepeatable('POST', true)).toBe(true);
  });

  it('backs off exponentially with jitter and never below Retry-After', () => {
    const policy = { attempts: 5, baseDelayMs: 100, maxDelayMs: 1_000 };
    expect(backoffDelayMs(1, policy, undefined, () => 1)).toBe(100);
    expect(backoffDelayMs(3, policy, undefined, () => 1)).toBe(400);
    expect(backoffDelayMs(3, policy, undefined, () => 0)).toBe(200);
    expect(backoffDelayMs(10, policy, undefined, () => 1)).toBe(1_000);
    expect(backoffDelayMs(1, policy, 2_000, () => 1)).toBe(2_000);
  });

  it('parses Retry-After in seconds and as a date', () => {
    expect(parseRetryAfter('3')).toBe(3_000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
