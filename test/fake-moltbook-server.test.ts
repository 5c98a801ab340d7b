// The fake Moltbook behaves as the published API describes, so what the adapter is tested against is real.
import { afterEach, describe, expect, it } from 'vitest';
import { ADVICE_MARKER, startFakeMoltbook, type FakeMoltbook } from './fakes/moltbook-server.ts';

let fake: FakeMoltbook | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function call(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}

describe('fake moltbook', () => {
  it('answers 401 to an unknown or revoked key', async () => {
    fake = await startFakeMoltbook();
    const a = fake.addAgent('greeter');
    expect((await call(fake.url, 'moltbook_nope', 'GET', '/agents/me')).status).toBe(401);
    expect((await call(fake.url, a.key, 'GET', '/agents/me')).json).toMatchObject({ success: true, agent: { name: 'greeter' } });
    fake.revoke('greeter');
    expect((await call(fake.url, a.key, 'GET', '/agents/me')).json).toMatchObject({ success: false, error: 'Invalid API key' });
  });

  it('publishes a comment only once its challenge is answered, and notifies the post author per post', async () => {
    fake = await startFakeMoltbook({ problems: [{ plain: 'two plus three', answer: '5.00' }] });
    const alice = fake.addAgent('alice');
    const bob = fake.addAgent('bob');
    const post = fake.post('alice', { title: 'hi', content: 'hello' });
    const created = await call(fake.url, bob.key, 'POST', `/posts/${post.id}/comments`, { content: 'hey alice' });
    expect(created.json).toMatchObject({ verification_required: true, comment: { verification_status: 'pending' } });
    const code = (created.json.verification as { verification_code: string }).verification_code;
    expect(((await call(fake.url, bob.key, 'GET', `/posts/${post.id}/comments`)).json.comments as unknown[]).length).toBe(0);
    expect(fake.unread('alice')).toEqual([]);
    expect((await call(fake.url, bob.key, 'POST', '/verify', { verification_code: code, answer: '6.00' })).status).toBe(400);
    expect((await call(fake.url, bob.key, 'POST', '/verify', { verification_code: code, answer: '5.00' })).status).toBe(200);
    expect((await call(fake.url, bob.key, 'POST', '/verify', { verification_code: code, answer: '5.00' })).status).toBe(409);
    expect(fake.unread('alice')).toHaveLength(1);
    const home = (await call(fake.url, alice.key, 'GET', '/home')).json;
    expect(home).toMatchObject({ your_account: { unread_notification_count: 1 }, activity_on_your_posts: [{ post_id: post.id, new_notification_count: 1 }] });
    expect(JSON.stringify(home)).toContain(ADVICE_MARKER);
    await call(fake.url, alice.key, 'POST', `/notifications/read-by-post/${post.id}`);
    expect(fake.unread('alice')).toEqual([]);
  });

  it('expires challenges (410) and nests replies in the comment tree', async () => {
    fake = await startFakeMoltbook({ challengeTtlMs: 1 });
    const bob = fake.addAgent('bob');
    fake.addAgent('alice');
    const post = fake.post('alice', { title: 't', content: 'c' });
    const top = fake.comment('alice', post.id, 'top');
    fake.comment('alice', post.id, 'nested', top.id);
    const created = await call(fake.url, bob.key, 'POST', `/posts/${post.id}/comments`, { content: 'late' });
    await new Promise((r) => setTimeout(r, 10));
    const code = (created.json.verification as { verification_code: string }).verification_code;
    expect((await call(fake.url, bob.key, 'POST', '/verify', { verification_code: code, answer: '28.00' })).status).toBe(410);
    fake.setEnvelope('data');
    const list = (await call(fake.url, bob.key, 'GET', `/posts/${post.id}/comments`)).json;
    expect(list.data).toMatchObject([{ content: 'top', replies: [{ content: 'nested', replies: [] }] }]);
  });

  it('answers 429 with each retry field, and 500 after creating a comment', async () => {
    fake = await startFakeMoltbook({ challenges: false });
    const bob = fake.addAgent('bob');
    const post = fake.post('bob', { title: 't', content: 'c' });
    fake.rateLimitNext({ on: 'comment', retry_after_seconds: 20, daily_remaining: 3 });
    fake.rateLimitNext({ on: 'post', retry_after_minutes: 30 });
    fake.rateLimitNext({ on: 'any', header_seconds: 7 });
    const r1 = await call(fake.url, bob.key, 'POST', `/posts/${post.id}/comments`, { content: 'x' });
    expect(r1).toMatchObject({ status: 429, json: { retry_after_seconds: 20, daily_remaining: 3 } });
    const r2 = await call(fake.url, bob.key, 'POST', '/posts', { title: 'a', content: 'b', submolt_name: 'general' });
    expect(r2).toMatchObject({ status: 429, json: { retry_after_minutes: 30 } });
    const r3 = await call(fake.url, bob.key, 'GET', '/home');
    expect(r3.status).toBe(429);
    expect(r3.headers.get('retry-after')).toBe('7');
    fake.failNextCommentAfterCreate();
    expect((await call(fake.url, bob.key, 'POST', `/posts/${post.id}/comments`, { content: 'kept' })).status).toBe(500);
    expect(fake.commentsBy('bob', post.id).map((c) => c.content)).toEqual(['kept']);
  });
});
