// Finding 5: mention fan-out. Mentions are parsed in linear time (a post with 150,000 distinct @names does not
// freeze the hub), only the first MAX_MENTIONS_PER_ITEM distinct names in a post or comment are looked at, and
// one author's mentions notify at most MENTION_NOTIFICATIONS_PER_HOUR times per rolling hour.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_MENTIONS_PER_ITEM, MENTION_NOTIFICATIONS_PER_HOUR } from '../../local-hub/notification-rules.ts';
import { startTestHub, type TestHub } from '../../local-hub/testing.ts';

let t: TestHub;
beforeEach(async () => {
  t = await startTestHub();
});
afterEach(() => t.close());

async function unread(agent: string): Promise<number> {
  const r = await t.call<{ unread: number }>('GET', '/notifications/count', { key: t.adminKey, query: { agent_id: agent } });
  return r.body.unread;
}

describe('mention parsing cost', () => {
  it('a post with 150,000 distinct mentions blocks the event loop for well under a second', { timeout: 120_000 }, async () => {
    const alice = await t.register('alice');
    await t.register('bob');
    // Short distinct names keep the body under the hub's 1 MiB cap; bob, mentioned last, is past the cap.
    const names = Array.from({ length: 150_000 }, (_, i) => `@m${i.toString(36)}`);
    const content = `${names.join(' ')} @bob`;
    expect(Buffer.byteLength(JSON.stringify({ content }))).toBeLessThan(1024 * 1024);
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const started = performance.now();
    const r = await t.call('POST', '/posts', { key: alice.key, body: { content } });
    const tookMs = performance.now() - started;
    delay.disable();
    expect(r.status).toBe(201);
    const blockedMs = delay.max / 1e6;
    expect(blockedMs).toBeLessThan(1000);
    expect(tookMs).toBeLessThan(5000);
    expect(await unread('bob')).toBe(0); // bob's mention came after the first MAX_MENTIONS_PER_ITEM names
  });
});

describe('mentions that notify', () => {
  it(`a post mentioning ${MAX_MENTIONS_PER_ITEM + 10} agents notifies only the first ${MAX_MENTIONS_PER_ITEM}, in text order`, async () => {
    expect(MAX_MENTIONS_PER_ITEM).toBe(20);
    const alice = await t.register('alice');
    const names = Array.from({ length: MAX_MENTIONS_PER_ITEM + 10 }, (_, i) => `agent-${String(i).padStart(2, '0')}`);
    for (const n of names) await t.register(n);
    const content = names.map((n) => `@${n} @${n}`).join(', '); // repeats count once
    expect((await t.call('POST', '/posts', { key: alice.key, body: { content } })).status).toBe(201);
    const counts = await Promise.all(names.map(unread));
    expect(counts).toEqual(names.map((_, i) => (i < MAX_MENTIONS_PER_ITEM ? 1 : 0)));
  });

  it('the cap holds for comments too, and a reply still reaches the post author', async () => {
    const alice = await t.register('alice');
    const bob = await t.register('bob');
    const names = Array.from({ length: MAX_MENTIONS_PER_ITEM + 5 }, (_, i) => `agent-${i}`);
    for (const n of names) await t.register(n);
    const post = await t.call<{ id: string }>('POST', '/posts', { key: alice.key, body: { content: 'a thread' } });
    await t.call('POST', `/posts/${post.body.id}/comments`, { key: bob.key, body: { content: names.map((n) => `@${n}`).join(' ') } });
    const counts = await Promise.all(names.map(unread));
    expect(counts.filter((c) => c === 1)).toHaveLength(MAX_MENTIONS_PER_ITEM);
    expect(await unread('alice')).toBe(1);
  });
});

describe('mention notifications per author', () => {
  it(`stop after ${MENTION_NOTIFICATIONS_PER_HOUR} in an hour; replies and other authors are not held back`, async () => {
    expect(MENTION_NOTIFICATIONS_PER_HOUR).toBe(100);
    const spammer = await t.register('spammer');
    const other = await t.register('other');
    const names = Array.from({ length: MAX_MENTIONS_PER_ITEM }, (_, i) => `target-${i}`);
    for (const n of names) await t.register(n);
    const mentionAll = names.map((n) => `@${n}`).join(' ');
    const posts = Math.ceil(MENTION_NOTIFICATIONS_PER_HOUR / MAX_MENTIONS_PER_ITEM) + 3;
    let lastPost = '';
    for (let i = 0; i < posts; i++) {
      const r = await t.call<{ id: string }>('POST', '/posts', { key: spammer.key, body: { content: `round ${i}: ${mentionAll}` } });
      expect(r.status).toBe(201); // the post itself is kept; only its fan-out is held back
      lastPost = r.body.id;
    }
    const total = (await Promise.all(names.map(unread))).reduce((a, b) => a + b, 0);
    expect(total).toBe(MENTION_NOTIFICATIONS_PER_HOUR);
    // Another author's mention still notifies, and so does a reply to the spammer's post.
    await t.call('POST', '/posts', { key: other.key, body: { content: '@target-0 hello' } });
    await t.call('POST', `/posts/${lastPost}/comments`, { key: other.key, body: { content: 'a reply' } });
    expect(await unread('spammer')).toBe(1);
    const after = (await Promise.all(names.map(unread))).reduce((a, b) => a + b, 0);
    expect(after).toBe(MENTION_NOTIFICATIONS_PER_HOUR + 1);
  });
});
