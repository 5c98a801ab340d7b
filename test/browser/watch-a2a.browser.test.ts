// The watch page's "Served tasks" section, in real headless Chromium against a real daemon with its embedded hub:
// the A2A tasks its agents served, asked through the A2A SDK's own client, each with its agent, caller, state and
// how long it took, and the reason of a refusal. Hidden while there are none.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import { pino } from 'pino';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDaemon, type RunningDaemon } from '../../daemon/daemon.ts';
import { WarrenConfigSchema } from '../../services/config.ts';
import { a2aClient, textMessage } from '../support/a2a-caller.ts';
import { makeAgentsDir } from '../support/daemon-harness.ts';
import { freePort } from '../support/free-port.ts';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const clerk = `name: clerk
type: llm
brain: {provider: scripted, model: m, responses: ['Build 4711 is green.']}
capabilities: {grants: [hub:read]}
a2a: {serve: true, max_daily_tasks: 1}
`;

let redis: PrivateRedis;
let daemon: RunningDaemon;
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`the browser test needs Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  redis = await startPrivateRedis();
  const dir = mkdtempSync(join(tmpdir(), 'warren-watch-a2a-'));
  const config = WarrenConfigSchema.parse({
    hub: { embedded: true, port: await freePort(), db: join(dir, 'hub.sqlite') },
    redis: { url: redis.url, prefix: `watch-a2a-${Date.now()}` },
    store: { path: makeAgentsDir({ clerk: { config: clerk, prompt: 'You are a clerk.' } }, { withGreeter: false }) },
    scheduler: { poll_interval: '50ms' },
    workers: { concurrency: 2, shutdown_grace: '1s' },
    metrics: { enabled: false },
    ingress: { port: 0 },
  });
  daemon = await startDaemon({ config, logger: pino({ level: 'silent' }), env: {} });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-background-networking'] });
});

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  await redis?.stop();
});

describe('watch page: served A2A tasks, in Chromium', () => {
  it('hidden while none came; then each task with its agent, caller, state and duration, and a refusal with its reason', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(daemon.watchUrl!);
    await page.locator('#live[data-state="open"]').waitFor({ timeout: 20_000 });
    expect(await page.locator('#a2a-section').isHidden()).toBe(true);

    const client = await a2aClient(`${daemon.ingressUrl!}/a2a/clerk/`);
    const done = (await client.sendMessage(textMessage('Summarise build 4711.'))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const refused = (await client.sendMessage(textMessage('Summarise build 4712.'))) as Task;
    expect(refused.status?.state).toBe(TaskState.TASK_STATE_REJECTED);

    const row = (id: string): ReturnType<typeof page.locator> => page.locator(`#a2a-tasks li.a2a-task[data-task="${id}"]`);
    await row(refused.id).waitFor({ timeout: 20_000 });
    expect(await page.locator('#a2a-section').isVisible()).toBe(true);
    expect(await page.locator('#a2a-tasks li.a2a-task').evaluateAll((items) => items.map((i) => (i as HTMLElement).dataset.task))).toEqual([refused.id, done.id]);
    expect(await row(done.id).locator('[data-fact="task"]').textContent()).toMatch(/^clerk ← loopback: completed in \d+\.\ds$/);
    expect(await row(done.id).locator('[data-fact="said"]').count()).toBe(0);
    expect(await row(refused.id).locator('[data-fact="task"]').textContent()).toBe('clerk ← loopback: rejected in 0.0s');
    expect(await row(refused.id).locator('[data-fact="said"]').textContent()).toMatch(/has taken its 1 A2A tasks for today \(a2a\.max_daily_tasks\)/);
    expect(errors).toEqual([]);
    await page.close();
  });
});
