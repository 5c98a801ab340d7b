// Approvals on the watch page, in real headless Chromium against a real daemon with its embedded hub (private
// Redis, a fake model on loopback): an agent whose posts need a person's yes pauses; its request shows on the page
// with the call and its arguments; Approve (with a note) lets the run go on and its post appears in the live feed;
// Deny with a note gives the model the note, and its reply in the thread says so; a second decision on a request is
// told the first. Screenshots go to test/artifacts/.
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../daemon/daemon.ts';
import { hubCall, type HubCall } from '../../local-hub/testing.ts';
import { ApprovalStore } from '../../scheduler/approval-store.ts';
import { WarrenConfigSchema } from '../../services/config.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.ts';
import { makeAgentsDir } from '../support/daemon-harness.ts';
import { freePort } from '../support/free-port.ts';
import { waitFor } from '../support/hub-api.ts';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = new URL('../artifacts/', import.meta.url);

let redis: PrivateRedis;
let conn: Redis;
let fake: FakeOpenAI;
let daemon: RunningDaemon;
let call: HubCall;
let store: ApprovalStore;
let browser: Browser;
let page: Page;
let dana: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`the browser test needs Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  redis = await startPrivateRedis();
  conn = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  fake = await startFakeOpenAI();
  // Asked to announce X it calls hub_post; given the call's result (or the denial), it says what it got.
  fake.setResponder((req) => {
    const messages = (req.body as { messages: Array<{ role: string; content: string | null }> }).messages;
    const result = messages.findLast((m) => m.role === 'tool');
    if (result) return { content: `The post call said: ${result.content}` };
    const what = /announce (\w+)/.exec(messages.filter((m) => m.role === 'user').map((m) => m.content ?? '').join('\n'))?.[1] ?? 'nothing';
    return { tool_calls: [{ name: 'hub_post', arguments: { title: `News ${what}`, content: `We announce ${what}.` } }] };
  });
  const dir = mkdtempSync(join(tmpdir(), 'warren-watch-approvals-'));
  const prefix = `watch-approvals-${Date.now()}`;
  const config = WarrenConfigSchema.parse({
    hub: { embedded: true, port: await freePort(), db: join(dir, 'hub.sqlite') },
    redis: { url: redis.url, prefix },
    store: {
      path: makeAgentsDir(
        {
          poster: {
            config: `name: poster\ntype: llm\nbrain: {provider: openai, model: fake-gpt, api_base: ${fake.url}, api_key_env: POSTER_MODEL_KEY}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {limits: {min_interval_seconds: 0}, discovery: {enabled: false}}\napprovals: {tools: [hub_post], approvers: [operator]}\n`,
            prompt: 'You are {{name}}.',
          },
        },
        { withGreeter: false },
      ),
    },
    scheduler: { poll_interval: '50ms' },
    workers: { concurrency: 2, shutdown_grace: '1s' },
    metrics: { enabled: false },
    pauses: { file: join(dir, 'pauses.json') },
  });
  daemon = await startDaemon({ config, logger: pino({ level: 'silent' }), env: { POSTER_MODEL_KEY: 'sk-poster' } });
  call = hubCall(daemon.hubUrl);
  store = new ApprovalStore(conn, prefix);
  dana = (await call<{ api_key: string }>('POST', '/agents/register', { key: daemon.generatedAdminKey!, body: { name: 'dana', type: 'human' } })).body.api_key;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-background-networking'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.on('pageerror', (err) => pageErrors.push(err.message));
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  await fake?.close();
  conn?.disconnect();
  await redis?.stop();
});

async function shot(name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: new URL(name, ARTIFACTS).pathname, fullPage: true });
}

/** Mentions the poster and waits for its request on the page. */
async function paused(what: string): Promise<{ post: string; approval: string; card: ReturnType<Page['locator']> }> {
  const post = (await call<{ id: string }>('POST', '/posts', { key: dana, body: { title: `about ${what}`, content: `@poster please announce ${what}` } })).body.id;
  const approval = await waitFor(`the request for ${what}`, async () => (await store.open()).find((e) => e.request.calls.some((c) => c.arguments.includes(what)))?.request.id, 60_000, 50);
  const card = page.locator(`li.approval[data-approval="${approval}"]`);
  await card.waitFor({ timeout: 30_000 });
  return { post, approval, card };
}

describe('approvals on the watch page, in Chromium', { timeout: 180_000 }, () => {
  it('shows the waiting call; Approve lets the run go on and its post appears in the feed; a second decision is told the first', async () => {
    await page.goto(daemon.watchUrl!);
    await page.locator('#live[data-state="open"]').waitFor({ timeout: 30_000 });
    const { approval, card } = await paused('Otter');
    expect(await card.locator('code.call').textContent()).toBe('hub_post {"title":"News Otter","content":"We announce Otter."}');
    expect(await card.getAttribute('data-status')).toBe('waiting');
    // Nothing was posted: the call waits.
    expect((await call<{ posts: Array<{ title: string | null }> }>('GET', '/posts?limit=50', { key: dana })).body.posts.map((p) => p.title)).not.toContain('News Otter');
    await shot('watch-approval-waiting.png');

    await card.locator('input.note').fill('fine, ship it');
    await card.locator('button.approve').click();
    // The run goes on in the daemon: the post it was waiting to make appears in the live feed.
    await page.locator('li.post', { hasText: 'We announce Otter.' }).waitFor({ timeout: 60_000 });
    expect((await store.get(approval))?.decision).toMatchObject({ kind: 'approved', by: 'operator', note: 'fine, ship it' });
    await waitFor('the request done', async () => ((await store.isOpen(approval)) ? undefined : true), 60_000, 50);
    // Done, the request leaves the page.
    await card.waitFor({ state: 'detached', timeout: 30_000 });
    await shot('watch-approval-approved.png');

    // A second decision (another tab, a late click) is told the first, which stands.
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const late = await fetch(`${daemon.hubUrl}/watch/api/approvals/${approval}/deny`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-warren-watch': '1', cookie }, body: JSON.stringify({ note: 'no' }) });
    expect(late.status).toBe(200);
    expect(await late.json()).toMatchObject({ id: approval, status: 'approved', decided_by: 'operator', already: true });
    expect((await call<{ posts: Array<{ title: string | null }> }>('GET', '/posts?limit=50', { key: dana })).body.posts.filter((p) => p.title === 'News Otter')).toHaveLength(1);
  });

  it("Deny with a note: the model reads the note as the call's result, and its reply in the thread says so", async () => {
    const { post, approval, card } = await paused('Badger');
    await card.locator('input.note').fill('not before Monday');
    await card.locator('button.deny').click();
    const thread = page.locator(`li[data-post-id="${post}"]`);
    await thread.locator('li.comment', { hasText: 'Their note: not before Monday' }).waitFor({ timeout: 60_000 });
    expect((await store.get(approval))?.decision).toMatchObject({ kind: 'denied', by: 'operator', note: 'not before Monday' });
    expect((await call<{ posts: Array<{ title: string | null }> }>('GET', '/posts?limit=50', { key: dana })).body.posts.map((p) => p.title)).not.toContain('News Badger');
    await shot('watch-approval-denied.png');
    expect(pageErrors).toEqual([]);
  });
});
