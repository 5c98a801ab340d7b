// Issue 27 item 3: the watch page hid outages. With Redis down it still said "● live", the agents' state badges
// vanished and skipped agents disappeared, while /readyz and `warren status` reported it. Now, in real headless
// Chromium against a real daemon with its embedded hub and its own private Redis (stopped mid-test), the page
// shows Redis down and definitions with errors as banners, says "Redis down" instead of "live", and keeps the last
// known states (skipped agents included) marked stale; when Redis is back the banner goes and the states are live.
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../daemon/daemon.ts';
import { WarrenConfigSchema } from '../../services/config.ts';
import { makeAgentsDir } from '../support/daemon-harness.ts';
import { freePort } from '../support/free-port.ts';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = new URL('../artifacts/', import.meta.url);
const keyless = 'name: keyless\ntype: llm\nbrain:\n  provider: openai\n  model: gpt-4o-mini\n  api_key_env: KEYLESS_API_KEY\ncapabilities: {grants: [hub:read]}\n';

let redis: PrivateRedis;
let daemon: RunningDaemon;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`the browser test needs Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  redis = await startPrivateRedis();
  const dir = mkdtempSync(join(tmpdir(), 'warren-watch-outage-'));
  const config = WarrenConfigSchema.parse({
    hub: { embedded: true, port: await freePort(), db: join(dir, 'hub.sqlite') },
    redis: { url: redis.url, prefix: `watch-outage-${Date.now()}` },
    store: {
      path: makeAgentsDir({
        keyless: { config: keyless, prompt: 'x' },
        // A definition with errors: not run, counted by the daemon.
        broken: { config: 'name: broken\ntype: llm\nbrain: {provider: nowhere}\n', prompt: 'x' },
      }),
    },
    scheduler: { poll_interval: '200ms' },
    workers: { concurrency: 1, shutdown_grace: '1s' },
    metrics: { enabled: false },
  });
  daemon = await startDaemon({ config, logger: pino({ level: 'silent' }), env: {} });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-background-networking'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (err) => consoleErrors.push(err.message));
  mkdirSync(ARTIFACTS, { recursive: true });
});

afterAll(async () => {
  await browser?.close();
  await redis?.start().catch(() => undefined); // the daemon stops faster with its Redis there
  await daemon?.stop();
  await redis?.stop();
});

const card = (name: string): ReturnType<Page['locator']> => page.locator(`li.agent[data-agent="${name}"]`);

describe('watch page when Redis goes down, in Chromium', () => {
  it('shows Redis down and the definitions with errors as banners, and keeps the last known states marked stale', async () => {
    await page.goto(daemon.watchUrl!);
    await page.locator('#live[data-state="open"]').waitFor({ timeout: 10_000 });
    await card('keyless').waitFor({ timeout: 10_000 });
    expect(await card('keyless').getAttribute('data-state')).toBe('skipped');
    expect(await card('greeter').getAttribute('data-state')).toBe('ready');
    // The broken definition is a banner from the start; nothing says Redis is down yet.
    const definitions = page.locator('.outage[data-kind="definitions"]');
    await definitions.waitFor({ timeout: 10_000 });
    expect(await definitions.textContent()).toContain('1 agent definition has errors');
    expect(await page.locator('.outage[data-kind="redis"]').count()).toBe(0);
    expect(await page.locator('#fleet-stale').isHidden()).toBe(true);

    await redis.kill();
    const down = page.locator('.outage[data-kind="redis"]');
    await down.waitFor({ timeout: 15_000 });
    expect(await down.textContent()).toMatch(/^Redis is down: no agent is scheduled or run until it is back\. The agents' states below are as last seen\. \(.+\)$/);
    // Not "live" while nothing runs.
    await page.locator('#live[data-state="degraded"]').waitFor({ timeout: 5_000 });
    expect(await page.locator('#live').textContent()).toBe('Redis down');
    // The agents stay, the skipped one included, with their last known states, marked stale.
    await page.locator('#agents[data-stale="true"]').waitFor({ timeout: 5_000 });
    expect(await card('keyless').getAttribute('data-state')).toBe('skipped');
    expect(await card('keyless').getAttribute('data-stale')).toBe('true');
    expect(await card('keyless').locator('.state').textContent()).toBe('skipped');
    expect(await card('greeter').getAttribute('data-state')).toBe('ready');
    expect(await page.locator('#fleet-stale').textContent()).toMatch(/^States as last seen at .+, not now\.$/);
    expect(await definitions.count()).toBe(1);
    await page.screenshot({ path: new URL('watch-redis-down.png', ARTIFACTS).pathname, fullPage: true });

    // Redis back: the banner goes, the states are live again.
    await redis.start();
    await down.waitFor({ state: 'detached', timeout: 30_000 });
    await page.locator('#agents[data-stale="false"]').waitFor({ timeout: 10_000 });
    await page.locator('#live[data-state="open"]').waitFor({ timeout: 10_000 });
    expect(consoleErrors).toEqual([]);
  });
});
