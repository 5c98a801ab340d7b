// Served A2A tasks in front of the operator: `warren status` lists the newest (caller, state, how long), `warren logs` lists them beside the activations (agent, caller,
// state, how long, and the reason of a refusal) and `--follow` prints each as it ends; the embedded hub's watch
// page serves them (/watch/api/a2a-tasks) for its "Served tasks" section. Through the real daemon, the SDK's own
// client and `warren` as a subprocess.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { watchSessionCookie } from '../local-hub/testing.ts';
import type { FleetA2ATask } from '../local-hub/watch/fleet.ts';
import { a2aClient, textMessage } from './support/a2a-caller.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { warrenCli } from './support/warren-cli.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { spawnWarren, type WarrenProcess } from './support/warren-process.ts';

const redisUrl = inject('redisUrl');
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

const clerk = `name: clerk
type: llm
brain: {provider: scripted, model: m, responses: ['Build 4711 is green.']}
capabilities: {grants: [hub:read]}
a2a: {serve: true, max_daily_tasks: 1}
`;

describe('A2A tasks for the operator', { timeout: PROCESS_TEST_MS }, () => {
  it('warren status and warren logs list them (caller, state, duration, reason) and --follow prints each end; the watch page serves them', async () => {
    const h: Harness = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ clerk: { config: clerk, prompt: 'You are a clerk.' } }, { withGreeter: false }),
      // The daemon's own hub, so its watch page is the one that reads the daemon's tasks.
      config: (c) => Object.assign(c.hub, { embedded: true, db: ':memory:', port: 0 }),
    });
    cleanups.push(() => h.stop());
    const target = { hubUrl: h.daemon.hubUrl, redisUrl, prefix: h.prefix, agentsDir: h.agentsDir };
    const client = await a2aClient(`${h.daemon.ingressUrl!}/a2a/clerk/`);
    const done = (await client.sendMessage(textMessage('Summarise build 4711.'))) as Task;
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

    // Followed from here: the history (the completed task) first, then what ends meanwhile.
    const follow: WarrenProcess = spawnWarren(['logs', '--follow', '--agent', 'clerk', '--config', configFile(target)], { env: { ...process.env, REDIS_URL: '' }, config: '' });
    cleanups.push(async () => {
      follow.kill('SIGINT');
      await follow.exited;
    });
    await follow.waitForLine(new RegExp(`clerk a2a-task completed from loopback \\d+\\.\\ds ${done.id}$`), PROCESS_START_MS);
    const refused = (await client.sendMessage(textMessage('Summarise build 4712.'))) as Task;
    expect(refused.status?.state).toBe(TaskState.TASK_STATE_REJECTED);
    const refusedLine = new RegExp(`clerk a2a-task rejected from loopback 0\\.0s ${refused.id} — agent clerk has taken its 1 A2A tasks for today \\(a2a\\.max_daily_tasks\\)`);
    await follow.waitForLine(refusedLine, 30_000);

    // The history, as lines and as JSON.
    const logs = await warrenCli(target, ['logs', '--agent', 'clerk']);
    expect(logs.code).toBe(0);
    const lines = logs.stdout.trim().split('\n');
    expect(lines.filter((l) => l.includes(' a2a-task '))).toEqual([expect.stringMatching(new RegExp(` completed from loopback .* ${done.id}$`)), expect.stringMatching(refusedLine)]);
    // Beside the task's activation, in time order.
    expect(lines.findIndex((l) => / clerk task answered /.test(l))).toBeGreaterThanOrEqual(0);
    const json = (await warrenCli(target, ['logs', '--json', '--agent', 'clerk'])).stdout.trim().split('\n').map((l) => JSON.parse(l) as { a2a_task?: { id: string; caller: string; state: string } });
    expect(json.flatMap((r) => (r.a2a_task ? [[r.a2a_task.id, r.a2a_task.caller, r.a2a_task.state]] : []))).toEqual([
      [done.id, 'loopback', 'completed'],
      [refused.id, 'loopback', 'rejected'],
    ]);

    // warren status: the newest A2A tasks with their caller, state and how long they took; the same in --json.
    const status = await warrenCli(target, ['status']);
    expect(status.code).toBe(0);
    const rows = status.stdout.split('\n');
    expect(rows.some((l) => /^A2A TASK\s+AGENT\s+CALLER\s+STATE\s+TOOK\s+CAME/.test(l))).toBe(true);
    expect(rows.find((l) => l.startsWith(done.id))).toMatch(new RegExp(`^${done.id}\\s+clerk\\s+loopback\\s+completed\\s+\\d+\\.\\ds\\s`));
    expect(rows.find((l) => l.startsWith(refused.id))).toMatch(new RegExp(`^${refused.id}\\s+clerk\\s+loopback\\s+rejected\\s+0\\.0s\\s`));
    const statusJson = JSON.parse((await warrenCli(target, ['status', '--json'])).stdout) as { a2a_tasks?: Array<{ id: string; agent: string; caller: string; state: string; createdAt: number; updatedAt: number }> };
    expect(statusJson.a2a_tasks?.map((t) => [t.id, t.agent, t.caller, t.state])).toEqual([
      [refused.id, 'clerk', 'loopback', 'rejected'],
      [done.id, 'clerk', 'loopback', 'completed'],
    ]);
    expect(statusJson.a2a_tasks![1]!.updatedAt).toBeGreaterThanOrEqual(statusJson.a2a_tasks![1]!.createdAt);

    // The watch page's JSON, with the operator's session.
    const page = await fetch(new URL('/watch/api/a2a-tasks', h.daemon.watchUrl), { headers: { cookie: await watchSessionCookie(h.daemon.watchUrl!) } });
    expect(page.status).toBe(200);
    const { available, tasks } = (await page.json()) as { available: boolean; tasks: FleetA2ATask[] };
    expect(available).toBe(true);
    expect(tasks.map((t) => [t.id, t.agent, t.caller, t.state, t.open])).toEqual([
      [refused.id, 'clerk', 'loopback', 'rejected', false],
      [done.id, 'clerk', 'loopback', 'completed', false],
    ]);
    expect(tasks[0]!.said).toMatch(/a2a\.max_daily_tasks/);
    expect(tasks[1]!.took_ms).toBeGreaterThanOrEqual(0);
    // Without the session, nothing.
    expect((await fetch(new URL('/watch/api/a2a-tasks', h.daemon.watchUrl))).status).toBe(401);
  });
});

/** A warren.yaml for `warren logs --follow` (as warrenCli writes its own). */
function configFile(t: Parameters<typeof warrenCli>[0]): string {
  const file = join(t.agentsDir, '..', 'warren-follow.yaml');
  writeFileSync(file, `hub: {url: "${t.hubUrl}"}\nredis: {url: "${t.redisUrl}", prefix: ${t.prefix}}\nstore: {path: agents}\n`);
  return file;
}
