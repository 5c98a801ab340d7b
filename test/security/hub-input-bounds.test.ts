// Finding 8: numbers and nesting from a request are bounded at the edge. Huge numbers, deep JSON and deep
// metadata get a 4xx whose detail names the field, never a 500, and a refused report leaves the totals alone.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestHub, watchSessionCookie, type TestHub } from '../../local-hub/testing.ts';

let t: TestHub;
beforeEach(async () => {
  t = await startTestHub();
});
afterEach(() => t.close());

const deep = (depth: number, leaf = '1'): string => '['.repeat(depth) + leaf + ']'.repeat(depth);
const deepObject = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('numbers in queries', () => {
  it.each(['max_age', 'min_age'])('%s=1e308 is a 422 naming the parameter', async (name) => {
    await t.register('alice');
    const r = await t.call<{ detail: string }>('GET', '/feed/discover', { key: t.adminKey, query: { agent_id: 'alice', [name]: '1e308' } });
    expect(r.status).toBe(422);
    expect(r.body.detail).toContain(name);
  });

  it('a reasonable max_age still works', async () => {
    const alice = await t.register('alice');
    await t.call('POST', '/posts', { key: alice.key, body: { content: 'recent' } });
    const r = await t.call<{ posts: unknown[] }>('GET', '/feed/discover', { key: t.adminKey, query: { agent_id: 'alice', max_age: 3600 } });
    expect(r.status).toBe(200);
    expect(r.body.posts).toHaveLength(1);
  });
});

describe('nesting depth of bodies', () => {
  it('a 200,000-deep JSON body is a 400, refused before parsing', async () => {
    const alice = await t.register('alice');
    const r = await t.call<{ detail: string }>('POST', '/posts', { key: alice.key, raw: deep(200_000) });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/body.*nest/i);
    expect((await fetch(`${t.hub.url}/health`)).status).toBe(200);
  });

  it('5,000-deep metadata in a consumption report is a 4xx naming metadata, and nothing is stored', async () => {
    await t.register('alice');
    const raw = `{"agent_id":"alice","tokens_input":1,"tokens_output":1,"cost_usd":0.5,"metadata":${deepObject(5000)}}`;
    const r = await t.call<{ detail: string }>('POST', '/system/consumption', { key: t.adminKey, raw });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.body.detail).toContain('metadata');
    const health = await t.call<{ daily_used: number }>('GET', '/system/budget-health', { key: t.adminKey, query: { agent_id: 'alice' } });
    expect(health.body.daily_used).toBe(0);
  });

  it('a watch page write with deep JSON is a 400 too', async () => {
    const cookie = await watchSessionCookie(t.hub.watchUrl);
    const res = await fetch(`${t.hub.url}/watch/api/posts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-warren-watch': '1', cookie }, body: `{"content":${deep(100_000, '"x"')}}` });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: string }).detail).toContain('content');
  });

  it('brackets inside strings are text, not nesting', async () => {
    const alice = await t.register('alice');
    const content = `${'['.repeat(1000)} "quoted \\" {{{ ${'{'.repeat(1000)}`;
    const r = await t.call<{ content: string }>('POST', '/posts', { key: alice.key, body: { content, title: '[[[[' } });
    expect(r.status).toBe(201);
    expect(r.body.content).toBe(content);
  });

  it('exactly 32 levels pass and 33 are refused', async () => {
    await t.register('alice');
    const at = (depth: number): string => `{"agent_id":"alice","tokens_input":1,"tokens_output":1,"cost_usd":0.5,"metadata":${'{"a":'.repeat(depth - 1)}1${'}'.repeat(depth - 1)}}`;
    expect((await t.call('POST', '/system/consumption', { key: t.adminKey, raw: at(32) })).status).toBe(200);
    const refused = await t.call<{ detail: string }>('POST', '/system/consumption', { key: t.adminKey, raw: at(33) });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe('metadata: nested deeper than 32 levels');
  });

  it('ordinary metadata still goes through', async () => {
    await t.register('alice');
    const r = await t.call('POST', '/system/consumption', { key: t.adminKey, body: { agent_id: 'alice', tokens_input: 1, tokens_output: 1, cost_usd: 0.5, metadata: { attempt: 1, nested: { a: [1, 2, { b: 'c' }] } } } });
    expect(r.status).toBe(200);
  });
});

describe('amounts in consumption reports', () => {
  it.each(['cost_usd', 'tokens_input', 'tokens_output', 'duration_seconds'])('%s: 1e308 is a 422 naming the field and the totals stay numbers', async (field) => {
    await t.register('alice');
    const ok = await t.call('POST', '/system/consumption', { key: t.adminKey, body: { agent_id: 'alice', tokens_input: 10, tokens_output: 5, cost_usd: 0.25 } });
    expect(ok.status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const r = await t.call<{ detail: string }>('POST', '/system/consumption', { key: t.adminKey, body: { agent_id: 'alice', tokens_input: 1, tokens_output: 1, cost_usd: 1, [field]: 1e308 } });
      expect(r.status).toBe(422);
      expect(r.body.detail).toContain(field);
    }
    const health = await t.call<{ daily_used: number; monthly_used: number; collective: { total_used_usd: number } }>('GET', '/system/budget-health', { key: t.adminKey, query: { agent_id: 'alice' } });
    expect(health.status).toBe(200);
    expect([health.body.daily_used, health.body.monthly_used, health.body.collective.total_used_usd]).toEqual([0.25, 0.25, 0.25]);
    const state = (await (await fetch(`${t.hub.url}/watch/api/state`, { headers: { cookie: await watchSessionCookie(t.hub.watchUrl) } })).json()) as { agents: Array<{ name: string; cost_today_usd: number; tokens_today: { input: number } }> };
    const alice = state.agents.find((a) => a.name === 'alice')!;
    expect(alice.cost_today_usd).toBe(0.25);
    expect(alice.tokens_today.input).toBe(10);
  });
});
