// The hub gateway CLI agents' hub MCP servers act through: a token scoped to one agent, its hub grants and
// its activation, against the real local hub. The admin key never leaves the daemon.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayRoute, HubGateway } from '../services/hub-gateway.ts';
import { HubClient } from '../hub-client/client.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { hubCaller } from './support/hub-api.ts';

let hub: RunningHub;
let gateway: HubGateway;
let userKey: string;
beforeAll(async () => {
  hub = await startHub({ dbPath: ':memory:', port: 0 });
  const api = hubCaller(hub.url);
  for (const name of ['bee', 'wasp']) await api.post('/agents/register', hub.adminKey, { name });
  userKey = (await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'dana', type: 'human' })).api_key;
  gateway = await HubGateway.start({ hubUrl: hub.url, adminKey: hub.adminKey, logger: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await gateway.close();
  await hub.close();
});

const raw = (token: string, method: string, path: string, body?: unknown) =>
  fetch(`${gateway.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

describe('hub gateway', () => {
  it('routes: the hub tools’ reads and writes only', () => {
    expect(gatewayRoute('GET', '/search')).toBe('hub:read');
    expect(gatewayRoute('GET', '/posts/p1')).toBe('hub:read');
    expect(gatewayRoute('POST', '/posts/p1/comments')).toBe('hub:write');
    expect(gatewayRoute('POST', '/agents/register')).toBeUndefined();
    expect(gatewayRoute('POST', '/notifications/read')).toBeUndefined();
    expect(gatewayRoute('GET', '/agents')).toBeUndefined();
  });

  it('a token acts as its agent through the real hub client: post, comment, read its notifications', async () => {
    const t = gateway.issue('bee', ['hub:read', 'hub:write'], 60_000);
    const client = new HubClient({ baseUrl: gateway.url, apiKey: t.token });
    const post = await client.createPost({ agent: 'bee', content: 'hello from the gateway', community: 'general' }, { idempotencyKey: 'gw-post-1' });
    expect(post.author.name).toBe('bee');
    const again = await client.createPost({ agent: 'bee', content: 'hello from the gateway', community: 'general' }, { idempotencyKey: 'gw-post-1' });
    expect(again.id).toBe(post.id); // idempotency keys pass through
    const comment = await client.createComment({ agent: 'bee', postId: post.id, content: 'and a comment' });
    expect(comment.author.name).toBe('bee');
    await hubCaller(hub.url).post('/posts', userKey, { content: '@bee are you there?' });
    const page = await client.listNotifications('bee', { unreadOnly: true });
    expect(page.notifications.some((n) => n.content?.includes('are you there'))).toBe(true);
    t.revoke();
  });

  it('refuses acting as another agent, admin routes, missing grants, and ended tokens', async () => {
    const t = gateway.issue('bee', ['hub:read'], 60_000);
    expect((await raw(t.token, 'GET', '/notifications?agent_id=wasp')).status).toBe(403);
    expect((await raw(t.token, 'POST', '/agents/register', { name: 'mallory' })).status).toBe(403);
    expect((await raw(t.token, 'POST', '/api/v1/agents/register', { name: 'mallory' })).status).toBe(403);
    expect((await raw(t.token, 'POST', '/posts', { content: 'no write grant' })).status).toBe(403);
    const writer = gateway.issue('bee', ['hub:write'], 60_000);
    const spoof = await raw(writer.token, 'POST', '/posts', { agent_id: 'wasp', content: 'as wasp' });
    expect(spoof.status).toBe(403);
    expect(((await spoof.json()) as { detail: string }).detail).toBe('this token acts as bee only');
    expect((await raw(writer.token, 'POST', '/posts', ['not', 'an', 'object'])).status).toBe(400);
    expect((await raw('warren_gw_made_up', 'GET', '/search?q=x')).status).toBe(401);
    expect((await raw(hub.adminKey, 'GET', '/search?q=x')).status).toBe(401); // the admin key means nothing here
    writer.revoke();
    expect((await raw(writer.token, 'POST', '/posts', { content: 'after the activation' })).status).toBe(401);
    // A body past the cap is answered 413, readable by the client (not a reset connection), and nothing is written.
    const big = gateway.issue('bee', ['hub:write'], 60_000);
    const before = (await hubCaller(hub.url).get<{ posts: unknown[] }>('/posts?sort=new&limit=50', userKey)).posts.length;
    const tooBig = await raw(big.token, 'POST', '/posts', { content: 'x'.repeat(2 * 1024 * 1024) });
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as { detail: string }).detail).toMatch(/request body over \d+ bytes/);
    expect((await hubCaller(hub.url).get<{ posts: unknown[] }>('/posts?sort=new&limit=50', userKey)).posts.length).toBe(before);
    const short = gateway.issue('bee', ['hub:read'], 1);
    await new Promise((r) => setTimeout(r, 10));
    expect((await raw(short.token, 'GET', '/search?q=x')).status).toBe(401);
  });
});
