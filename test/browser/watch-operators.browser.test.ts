// The watch page as an operator's console, in real headless Chromium against a real daemon with its embedded hub
// (private Redis, agents from a folder, memory in SQLite): each agent's live state as `warren status` reads it,
// pause/resume from the page, replies shown newest first, Markdown rendered safely with mentions marked, error
// posts compact, and, against a hub that goes away and comes back, the banner and the reload after reconnecting.
// Screenshots go to test/artifacts/.
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WarrenConfigSchema } from '../../services/config.ts';
import { startDaemon, type RunningDaemon } from '../../daemon/daemon.ts';
import { formatErrorPost } from '../../activation/error-post.ts';
import { Redactor } from '../../services/redact.ts';
import { startHub, type RunningHub } from '../../local-hub/server.ts';
import { hubCall, type HubCall } from '../../local-hub/testing.ts';
import { SqliteMemoryStore } from '../../memory/sqlite-memory-store.ts';
import { AgentStateStore } from '../../scheduler/agent-state.ts';
import { makeAgentsDir } from '../support/daemon-harness.ts';
import { freePort } from '../support/free-port.ts';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = new URL('../artifacts/', import.meta.url);

const scripted = (name: string, extra = ''): string => `name: ${name}\ntype: llm\nbrain:\n  provider: scripted\n  model: scripted-${name}\n  responses: ["hi"]\ncapabilities: {grants: [hub:read, hub:write]}\n${extra}`;
const slowpoke = [
  'name: slowpoke',
  'type: llm',
  'brain:',
  '  provider: scripted',
  '  model: scripted-slow',
  '  responses:',
  '    - {tool_calls: [{name: hub_search, arguments: {query: bees}}]}',
  '    - {content: "done at last", delay_ms: 60000}',
  'capabilities: {grants: [hub:read, hub:write]}',
].join('\n');
const hh = (offsetHours: number): string => `${String((new Date().getUTCHours() + offsetHours + 24) % 24).padStart(2, '0')}:00`;
const keyless = 'name: keyless\ntype: llm\nbrain:\n  provider: openai\n  model: gpt-4o-mini\n  api_key_env: KEYLESS_API_KEY\ncapabilities: {grants: [hub:read]}\n';

let redis: PrivateRedis;
let conn: Redis;
let daemon: RunningDaemon;
let call: HubCall;
let adminKey: string;
let prefix: string;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

async function shot(p: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await p.screenshot({ path: new URL(name, ARTIFACTS).pathname, fullPage: true });
}

function card(name: string): ReturnType<Page['locator']> {
  return page.locator(`li.agent[data-agent="${name}"]`);
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`the browser test needs Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  redis = await startPrivateRedis();
  conn = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  const dir = mkdtempSync(join(tmpdir(), 'warren-watch-ops-'));
  const memoryFile = join(dir, 'memory.sqlite');
  const memory = new SqliteMemoryStore(memoryFile);
  await memory.write('rememberer', [
    { key: 'old', kind: 'note', text: 'the deploy codeword is PELICAN-42', createdAt: Date.now() - 3_600_000 },
    { key: 'new', kind: 'conversation', text: 'alice prefers short answers', createdAt: Date.now() - 60_000 },
  ]);
  await memory.close();
  prefix = `watch-ops-${Date.now()}`;
  const config = WarrenConfigSchema.parse({
    hub: { embedded: true, port: await freePort(), db: join(dir, 'hub.sqlite') },
    redis: { url: redis.url, prefix },
    store: {
      path: makeAgentsDir({
        slowpoke: { config: slowpoke, prompt: 'x' },
        keyless: { config: keyless, prompt: 'x' },
        rememberer: { config: scripted('rememberer', 'memory: {enabled: true}\n'), prompt: 'x' },
        flaky: { config: scripted('flaky'), prompt: 'x' },
        // Failed once, its backoff over, exploration off so no run can clear the count: `failing`.
        wobbly: { config: scripted('wobbly', 'behavior: {discovery: {enabled: false}}\n'), prompt: 'x' },
        // Quiet hours around now (UTC): `quiet_hours`.
        sleeper: { config: scripted('sleeper', `behavior: {quiet_hours: {start: "${hh(-1)}", end: "${hh(2)}", timezone: UTC}}\n`), prompt: 'x' },
      }),
    },
    scheduler: { poll_interval: '50ms' },
    workers: { concurrency: 4, shutdown_grace: '1s' },
    metrics: { enabled: false },
    memory: { store: memoryFile },
  });
  daemon = await startDaemon({ config, logger: pino({ level: 'silent' }), env: {} });
  adminKey = daemon.generatedAdminKey!;
  call = hubCall(daemon.hubUrl);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-background-networking'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => consoleErrors.push(err.message));
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  conn?.disconnect();
  await redis?.stop();
});

async function human(name: string): Promise<string> {
  const r = await call<{ api_key: string }>('POST', '/agents/register', { key: adminKey, body: { name, type: 'human' } });
  return r.body.api_key;
}

describe('watch page for operators, in Chromium', () => {
  it("shows each agent's live state: running now with its step and tool, skipped and why, backoff, failing, quiet hours, memory with the newest entries, budget", async () => {
    const alice = await human('alice');
    await call('POST', '/posts', { key: alice, body: { content: '@slowpoke take your time' } });
    await new AgentStateStore(conn, prefix).recordFailure('flaky', [600_000]);
    await new AgentStateStore(conn, prefix).recordFailure('wobbly', [1_000], { at: Date.now() - 3_600_000 });

    await page.goto(daemon.watchUrl!);
    await page.locator('#live[data-state="open"]').waitFor({ timeout: 10_000 });
    // Running now: the step and what it waits on, as `warren status` describes the worker's live progress.
    await card('slowpoke').locator('[data-fact="running"]', { hasText: 'step 2/10' }).waitFor({ timeout: 20_000 });
    expect(await card('slowpoke').getAttribute('data-state')).toBe('running');
    expect(await card('slowpoke').locator('[data-fact="running"]').textContent()).toMatch(/^running now: step 2\/10 \w+.*\(notification\)$/);
    // Skipped, with why: an agent the hub may never have seen is still listed.
    expect(await card('keyless').getAttribute('data-state')).toBe('skipped');
    expect(await card('keyless').locator('[data-fact="state detail"]').textContent()).toContain('KEYLESS_API_KEY');
    // Backoff, with until when and how many failed.
    expect(await card('flaky').getAttribute('data-state')).toBe('backoff');
    expect(await card('flaky').locator('[data-fact="state detail"]').textContent()).toMatch(/^until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ, 1 failed in a row$/);
    // Failing: its backoff is over but the failures still count; quiet hours: until when, in which zone.
    expect(await card('wobbly').getAttribute('data-state')).toBe('failing');
    expect(await card('wobbly').locator('[data-fact="state detail"]').textContent()).toBe('1 failed in a row');
    expect(await card('sleeper').getAttribute('data-state')).toBe('quiet_hours');
    expect(await card('sleeper').locator('[data-fact="state detail"]').textContent()).toBe(`until ${hh(2)} UTC`);
    expect(await card('greeter').getAttribute('data-state')).toBe('ready');
    // Memory: the count and size, then the newest entries first.
    expect(await card('rememberer').locator('dd[data-fact="memory"]').textContent()).toMatch(/^2 entries, \d+ B$/);
    expect(await card('rememberer').locator('li.memory').allTextContents()).toEqual(['alice prefers short answers', 'the deploy codeword is PELICAN-42']);
    expect(await card('greeter').locator('dd[data-fact="memory"]').count()).toBe(0);
    // Budget: spend against the hub's limits (none configured here).
    expect(await card('greeter').locator('dd[data-fact="budget today"]').textContent()).toBe('$0.00 (no limit)');
    expect(await page.locator('#fleet-budget').textContent()).toBe('all agents this month: $0.00 (no limit)');
    await shot(page, 'watch-agent-states.png');
  });

  it('pauses and resumes an agent from the page, as warren pause and resume do (resume also ends a backoff)', async () => {
    const state = new AgentStateStore(conn, prefix);
    await card('greeter').locator('button.pause').click();
    await page.locator('li.agent[data-agent="greeter"][data-state="paused"]').waitFor({ timeout: 10_000 });
    expect((await state.getMany(['greeter'])).get('greeter')!.paused).toBe(true);
    await shot(page, 'watch-paused.png');
    await card('greeter').locator('button.resume').click();
    await page.locator('li.agent[data-agent="greeter"][data-state="ready"]').waitFor({ timeout: 10_000 });
    expect((await state.getMany(['greeter'])).get('greeter')!.paused).toBe(false);

    // flaky is in backoff: pausing then resuming ends the wait, as `warren resume` does.
    await card('flaky').locator('button.pause').click();
    await page.locator('li.agent[data-agent="flaky"][data-state="paused"]').waitFor({ timeout: 10_000 });
    await card('flaky').locator('button.resume').click();
    await page.locator('li.agent[data-agent="flaky"][data-state="ready"]').waitFor({ timeout: 10_000 });
    expect((await state.getMany(['flaky'])).get('flaky')).toMatchObject({ paused: false, failures: 0, backoffUntil: undefined });

    // Without the page's header and session (another site, a script), the same request is refused.
    const forged = await fetch(`${daemon.hubUrl}/watch/api/agents/greeter/pause`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(forged.status).toBe(403);
    // With them (the page's cookie and header), an agent the daemon does not define is 404.
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const unknown = await fetch(`${daemon.hubUrl}/watch/api/agents/nobody/pause`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-warren-watch': '1', cookie }, body: '{}' });
    expect(unknown.status).toBe(404);
    expect((await state.getMany(['greeter'])).get('greeter')!.paused).toBe(false);
  });

  it('shows replies expanded, newest first, Markdown rendered without raw HTML, and mentions marked', async () => {
    const alice = await human('carol');
    const bob = await human('bobby');
    const content = [
      '**bold words** and `inline code` for @bobby',
      '',
      '- one',
      '- two',
      '',
      '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"><b onclick="x()">raw bold</b>',
      '',
      '[click me](javascript:window.pwned=3) and [a site](https://example.org)',
      '',
      '```',
      'code @notamention',
      '```',
    ].join('\n');
    const post = await call<{ id: string }>('POST', '/posts', { key: alice, body: { title: 'Markdown', content } });
    const first = await call<{ id: string }>('POST', `/posts/${post.body.id}/comments`, { key: bob, body: { content: 'first reply' } });
    const second = await call<{ id: string }>('POST', `/posts/${post.body.id}/comments`, { key: alice, body: { content: 'second reply, _newer_' } });
    const node = page.locator(`li[data-post-id="${post.body.id}"]`);
    await node.locator(`li[data-comment-id="${second.body.id}"]`).waitFor({ timeout: 5_000 });

    // Replies are visible without a click, newest first.
    expect(await node.locator(`li[data-comment-id="${first.body.id}"]`).isVisible()).toBe(true);
    expect(await node.locator('.thread > ol.comments > li.comment').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.commentId))).toEqual([second.body.id, first.body.id]);
    expect(await node.locator('.thread-count').textContent()).toBe('2 replies');
    expect(await node.locator(`li[data-comment-id="${second.body.id}"] .content em`).textContent()).toBe('newer');

    const body = node.locator(':scope > .content');
    expect(await body.locator('strong').textContent()).toBe('bold words');
    expect(await body.locator('code').first().textContent()).toBe('inline code');
    expect(await body.locator('ul > li').allTextContents()).toEqual(['one', 'two']);
    // Raw HTML is text, never elements; a javascript: link loses its target; a web link opens safely.
    expect(await body.locator('script, img, b, [onclick], [onerror]').count()).toBe(0);
    expect(await body.textContent()).toContain('<script>window.pwned = 1</script>');
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(await body.locator('a', { hasText: 'click me' }).count()).toBe(0);
    expect(await body.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await body.locator('a', { hasText: 'a site' }).getAttribute('href')).toBe('https://example.org');
    expect(await body.locator('a', { hasText: 'a site' }).getAttribute('rel')).toContain('noopener');
    // Mentions are marked in text, not inside code.
    expect(await body.locator('.mention').allTextContents()).toEqual(['@bobby']);
    await node.scrollIntoViewIfNeeded();
    await shot(page, 'watch-markdown-thread.png');
  });

  it('shows an error post compactly: title, class and message, the full report folded', async () => {
    const failing = new Error('model endpoint said 401 Unauthorized');
    failing.name = 'ModelAuthError';
    const report = formatErrorPost(
      { agent: 'flaky', activationId: 'act-1', trigger: 'notification', task: { postId: 'p1', from: 'alice' }, error: { name: failing.name, message: failing.message, stack: failing.stack }, executor: 'llm', model: 'scripted-flaky', attempts: 3, maxAttempts: 3, retryable: true },
      new Redactor([]),
      { redactUserContent: false },
    );
    const reporter = await human('reporter');
    const post = await call<{ id: string }>('POST', '/posts', { key: reporter, body: { title: report.title, content: report.content, community: 'agent-errors' } });
    const node = page.locator(`li[data-post-id="${post.body.id}"]`);
    await node.waitFor({ timeout: 5_000 });
    expect(await node.locator('.title').textContent()).toBe('🔴 Activation Failed: flaky');
    expect(await node.locator('.error-class').textContent()).toBe('ModelAuthError');
    expect(await node.locator('.error-message').textContent()).toBe('model endpoint said 401 Unauthorized');
    // The report (task, context, stack trace) is folded: present, not shown until opened.
    const details = node.locator('details.error-details');
    expect(await details.getAttribute('open')).toBeNull();
    expect(await details.locator('pre').isVisible()).toBe(false);
    await node.scrollIntoViewIfNeeded();
    await shot(page, 'watch-error-post.png');
    await details.locator('summary').click();
    expect(await details.locator('h2', { hasText: 'Stack trace' }).isVisible()).toBe(true);
    expect(consoleErrors).toEqual([]);
  });
});

describe('watch page when the hub goes away, in Chromium', () => {
  it('says so in a banner (no raw "Failed to fetch"), and after the event stream reconnects shows what was posted meanwhile', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-watch-down-'));
    const opts = { dbPath: join(dir, 'hub.sqlite'), port: await freePort(), host: '127.0.0.1', adminKey: 'watch-down-admin', watchToken: 'watch-down-token' };
    let hub: RunningHub = await startHub(opts);
    const p = await browser.newPage({ viewport: { width: 1100, height: 700 } });
    try {
      const hubApi = hubCall(hub.url);
      const key = (await hubApi<{ api_key: string }>('POST', '/agents/register', { key: opts.adminKey, body: { name: 'erin', type: 'human' } })).body.api_key;
      await p.goto(hub.watchUrl);
      await p.locator('#live[data-state="open"]').waitFor({ timeout: 10_000 });
      expect(await p.locator('#banner').isHidden()).toBe(true);

      await hub.close();
      await p.locator('#banner').waitFor({ state: 'visible', timeout: 10_000 });
      expect(await p.locator('#banner').textContent()).toContain('The hub is not reachable');
      // Posting while it is down says the same, in words.
      await p.fill('#composer-content', 'anyone?');
      await p.click('#composer button[type="submit"]');
      await p.locator('#composer-error', { hasText: 'not reachable' }).waitFor({ timeout: 5_000 });
      expect(await p.locator('body').textContent()).not.toContain('Failed to fetch');
      await shot(p, 'watch-hub-unreachable.png');

      // Keep the event stream from reconnecting until the post below is made, so only a reload can show it.
      await p.route('**/watch/events', (route) => route.abort());
      hub = await startHub(opts);
      const missed = await hubApi<{ id: string }>('POST', '/posts', { key, body: { content: 'posted while the page was away' } });
      await p.locator('#banner').waitFor({ state: 'hidden', timeout: 10_000 });
      expect(await p.locator(`li[data-post-id="${missed.body.id}"]`).count()).toBe(0);
      await p.unroute('**/watch/events');
      await p.locator(`li[data-post-id="${missed.body.id}"]`).waitFor({ timeout: 10_000 });
      await p.locator('#live[data-state="open"]').waitFor({ timeout: 10_000 });
      await shot(p, 'watch-after-reconnect.png');
    } finally {
      await p.close();
      await hub.close();
    }
  });
});
