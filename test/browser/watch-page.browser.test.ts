// The watch page in real headless Chromium (Debian's, driven by playwright-core): it loads without console
// errors, a post made through the API appears without reload, and a person can post and reply from the page.
// Run by `npm run test:browser` (and by .ci/run, which installs chromium when missing).
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHub, type TestHub } from '../../local-hub/testing.ts';
import type { FleetSource } from '../../local-hub/watch/fleet.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = new URL('../artifacts/', import.meta.url);

let t: TestHub;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`the browser test needs Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  t = await startTestHub();
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-background-networking'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => consoleErrors.push(err.message));
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('watch page in Chromium', () => {
  it('loads, goes live, shows agents, posts from elsewhere appear within a second, and a person can post and reply', async () => {
    const alice = await t.register('alice');
    await t.register('bob');
    const old = await t.call<{ id: string }>('POST', '/posts', { key: alice.key, body: { title: 'Hello', content: 'first post by @bob?', community: 'general' } });
    await t.call('POST', '/posts', { key: alice.key, body: { content: 'something broke', community: 'agent-errors' } });
    await t.call('POST', '/system/consumption', { key: t.adminKey, body: { agent_id: 'bob', tokens_input: 1500, tokens_output: 250, cost_usd: 0.0123 } });
    await t.call('POST', '/agents/bob/activated', { key: t.adminKey });

    // Without the operator's session the page asks for the token and shows nothing else.
    await page.goto(t.hub.url);
    await page.locator('#signin').waitFor({ state: 'visible', timeout: 5000 });
    expect(await page.locator('#layout').isHidden()).toBe(true);
    expect(await page.context().cookies()).toEqual([]);
    await page.screenshot({ path: new URL('watch-signin.png', ARTIFACTS).pathname });
    // The token pasted into the form gives the session (as the printed link does) and the page opens.
    await page.fill('#signin-token', t.hub.watchToken);
    await page.click('#signin button[type="submit"]');
    await page.locator('#live[data-state="open"]').waitFor({ timeout: 5000 });
    expect(new URL(page.url()).search).toBe(''); // the token left the address bar
    // The page's session is a cookie its script cannot read (HttpOnly); writing below works only with it.
    expect((await page.context().cookies()).map((c) => [c.httpOnly, c.sameSite])).toEqual([[true, 'Strict']]);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    await page.locator(`li[data-post-id="${old.body.id}"]`).waitFor();
    expect(await page.locator('li.post.errors').count()).toBe(1);
    const bobCard = page.locator('li.agent[data-agent="bob"]');
    await bobCard.waitFor();
    expect(await bobCard.locator('dd[data-fact="activations today"]').textContent()).toBe('1');
    expect(await bobCard.locator('dd[data-fact="cost today"]').textContent()).toBe('$0.0123');
    expect(await bobCard.locator('dd[data-fact="unread"]').textContent()).toBe('1');

    // A post made through the API appears without a reload.
    const started = Date.now();
    const live = await t.call<{ id: string }>('POST', '/posts', { key: alice.key, body: { content: 'arrives live' } });
    await page.locator(`li[data-post-id="${live.body.id}"]`).waitFor({ timeout: 1000 });
    const appearedMs = Date.now() - started;
    expect(appearedMs).toBeLessThan(1000);
    expect(await page.locator('#feed > li').first().getAttribute('data-post-id')).toBe(live.body.id);

    // A person posts from the page, mentioning bob: bob gets a notification.
    await page.fill('#composer-as', 'dana');
    await page.fill('#composer-content', 'hey @bob, are you there?');
    await page.click('#composer button[type="submit"]');
    const mine = page.locator('#feed > li', { hasText: 'hey @bob, are you there?' });
    await mine.waitFor({ timeout: 2000 });
    const inbox = await t.call<{ notifications: Array<{ from: { name: string } }> }>('GET', '/notifications', { key: t.adminKey, query: { agent_id: 'bob' } });
    expect(inbox.body.notifications.map((n) => n.from.name)).toContain('dana');

    // bob answers through the API; the reply shows in the thread; the person replies to the reply from the page.
    const myId = (await mine.getAttribute('data-post-id'))!;
    const bobKey = (await t.call<{ api_key: string }>('POST', '/agents/register', { key: t.adminKey, body: { name: 'bob-two' } })).body.api_key;
    const answer = await t.call<{ id: string }>('POST', `/posts/${myId}/comments`, { key: bobKey, body: { content: 'yes, here' } });
    const answerNode = mine.locator(`li[data-comment-id="${answer.body.id}"]`);
    await answerNode.waitFor({ state: 'attached', timeout: 1000 });
    await answerNode.locator('button', { hasText: 'reply' }).first().click();
    await mine.locator('form.reply textarea').fill('great, thanks');
    await mine.locator('form.reply button[type="submit"]').click();
    await mine.locator('li.comment > .content', { hasText: 'great, thanks' }).waitFor({ timeout: 2000 });
    const thread = await t.call<{ comments: Array<{ content: string; parent_id: string | null; author: { name: string } }> }>('GET', `/posts/${myId}`, {
      key: t.adminKey,
      query: { include_comments: true },
    });
    expect(thread.body.comments.map((c) => [c.author.name, c.content, c.parent_id])).toEqual([
      ['bob-two', 'yes, here', null],
      ['dana', 'great, thanks', answer.body.id],
    ]);
    // Nested under the comment it answers.
    expect(await answerNode.locator('li.comment > .content', { hasText: 'great, thanks' }).count()).toBe(1);

    // Filters: only agent-errors.
    await page.selectOption('#filter-community', 'm/agent-errors');
    await page.waitForFunction(() => document.querySelectorAll('#feed > li').length === 1);
    expect(await page.locator('#feed > li').first().textContent()).toContain('something broke');
    await page.selectOption('#filter-community', '');
    await page.waitForFunction(() => document.querySelectorAll('#feed > li').length === 4);

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL('watch-page.png', ARTIFACTS).pathname, fullPage: true });
    expect(consoleErrors).toEqual([]);
    console.log(`watch page: API post appeared after ${appearedMs} ms`);
  });
});

describe('watch page agent rows from the daemon, in Chromium', () => {
  it('flags a definition that differs on disk and says which mentions are held, why and until when', async () => {
    const runsAt = new Date(Date.now() + 3_600_000).toISOString();
    // The fields the daemon fills (daemon/ops/fleet-source.ts); the page only shows them.
    const fleet: FleetSource = {
      agents: () => Promise.resolve([
        { name: 'drifter', state: 'ready', state_detail: null, running: null, memory: null, definition: { hash: 'abc', loaded_at: new Date().toISOString(), differs_on_disk: true } },
        { name: 'waiter', state: 'quiet_hours', state_detail: 'until 08:00 UTC', running: null, memory: null, definition: { hash: 'def', loaded_at: new Date().toISOString(), differs_on_disk: false }, held: [{ notification_id: 'n1', reason: 'quiet hours', runs_at: runsAt }, { reason: 'quiet hours', runs_at: runsAt }] },
      ]),
      setPaused: () => Promise.resolve(),
    };
    const hub = await startTestHub({ fleet });
    const p = await browser.newPage({ viewport: { width: 1280, height: 700 } });
    try {
      await p.goto(hub.hub.watchUrl);
      const drifter = p.locator('li.agent[data-agent="drifter"]');
      await drifter.locator('[data-fact="definition"]').waitFor({ timeout: 5000 });
      expect(await drifter.locator('[data-fact="definition"]').textContent()).toContain('differs from the definition running');
      const waiter = p.locator('li.agent[data-agent="waiter"]');
      expect(await waiter.locator('[data-fact="definition"]').count()).toBe(0);
      expect(await waiter.locator('[data-fact="held"]').textContent()).toMatch(/^2 mentions held: quiet hours, runs at .+$/);
    } finally {
      await p.close();
      await hub.close();
    }
  });
});
