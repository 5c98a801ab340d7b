// Finding 9 of the attack run: a human named like an agent that is defined later made that agent silently
// dead (the hub never wakes a human, and the daemon took the name for the agent's own). Now the agent is not
// run, and the log, `warren status` and `warren doctor` say why. Real local hub, real Redis, real subprocess.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AgentRegistry } from '../../daemon/agent-registry.ts';
import { formatCheck, runDoctor } from '../../daemon/commands/doctor.ts';
import { WarrenConfigSchema } from '../../services/config.ts';
import { ExecutorRegistry } from '../../services/executor-registry.ts';
import type { StatusReport } from '../../daemon/ops/status.ts';
import { LlmExecutor } from '../../executors/llm/llm-executor.ts';
import { HubClient } from '../../hub-client/client.ts';
import type { Agent } from '../../hub-client/types.ts';
import { startHub } from '../../local-hub/server.ts';
import { LocalFolderStore } from '../../store/local-store.ts';
import { makeAgentsDir, startHarness, type Harness } from '../support/daemon-harness.ts';
import { hubCaller, waitFor, type WirePost } from '../support/hub-api.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from '../support/ceilings.ts';

const redisUrl = inject('redisUrl');
const run = promisify(execFile);
const AGENT = (name: string): string => `name: ${name}\ntype: llm\nbrain: {provider: scripted, model: scripted-x, responses: ["at your service"]}\ncapabilities: {grants: [hub:read, hub:write]}\n`;

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

function define(agentsDir: string, name: string): void {
  mkdirSync(join(agentsDir, name), { recursive: true });
  writeFileSync(join(agentsDir, name, 'config.yaml'), AGENT(name));
  writeFileSync(join(agentsDir, name, 'system-prompt.md'), 'You help.');
}

describe('a human holding an agent’s name', { timeout: PROCESS_TEST_MS }, () => {
  it('keeps the agent from running, and the log, warren status and warren doctor say why', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({}) });
    const harness = h;
    // Someone takes the name as a human first (the watch page makes exactly this kind of hub entry)…
    await h.registerUser('helper-bot');
    // …and the agent is defined afterwards.
    define(h.agentsDir, 'helper-bot');
    await h.daemon.reload();

    expect(h.daemon.registry.runnable().has('helper-bot')).toBe(false);
    expect(h.daemon.registry.runnable().has('greeter')).toBe(true);
    const errors = h.logs.map((l) => JSON.parse(l) as { level: number; msg: string; agent?: string }).filter((l) => l.level >= 50 && l.agent === 'helper-bot');
    expect(errors.map((e) => e.msg)).toContainEqual(expect.stringMatching(/agent helper-bot is NOT RUN: the hub name "helper-bot" belongs to a human/));

    // The human's mentions never come to the agent, and the agent never writes as the human.
    const alice = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', alice, { content: '@helper-bot @greeter anyone there?' });
    await waitFor('greeter’s reply', async () => {
      const thread = await harness.api.get<WirePost>(`/posts/${post.id}?include_comments=true`, harness.adminKey);
      return (thread.comments ?? []).some((c) => c.author.name === 'greeter') ? thread : undefined;
    });
    const thread = await h.api.get<WirePost>(`/posts/${post.id}?include_comments=true`, h.adminKey);
    expect((thread.comments ?? []).filter((c) => c.author.name === 'helper-bot')).toEqual([]);
    expect(h.outcomes.filter((o) => o.agent === 'helper-bot')).toEqual([]);

    // `warren status`, from another process.
    const file = join(h.agentsDir, '..', 'warren.yaml');
    writeFileSync(file, `hub: {url: "${h.hub.url}"}\nredis: {url: "${redisUrl}", prefix: ${h.prefix}}\nstore: {path: agents}\n`);
    const status = await run(process.execPath, [resolve('bin/warren.js'), 'status', '--json', '--config', file], { timeout: PROCESS_START_MS, env: { ...process.env, REDIS_URL: '' } });
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.agents.find((a) => a.name === 'helper-bot')).toMatchObject({ waiting_for: 'not_runnable', not_runnable: expect.stringContaining('belongs to a human') as unknown });
    expect(report.agents.find((a) => a.name === 'greeter')).toMatchObject({ waiting_for: null, not_runnable: null });
    const text = await run(process.execPath, [resolve('bin/warren.js'), 'status', '--config', file], { timeout: PROCESS_START_MS, env: { ...process.env, REDIS_URL: '' } });
    expect(text.stdout).toMatch(/helper-bot\s+NOT RUNNABLE/);
    expect(text.stdout).toContain('helper-bot is not run: the hub name "helper-bot" belongs to a human');

    // `warren doctor`: from the hub itself (admin key at hand), and from the daemon's mark without it.
    const config = WarrenConfigSchema.parse({ hub: { url: h.hub.url, embedded: false }, redis: { url: redisUrl, prefix: h.prefix }, store: { path: h.agentsDir } });
    for (const env of [{ PATH: process.env.PATH, WARREN_HUB_ADMIN_KEY: h.adminKey }, { PATH: process.env.PATH }]) {
      const checks = await runDoctor(config, env);
      const check = checks.find((c) => c.area === 'agent helper-bot');
      expect(check).toMatchObject({ status: 'fail', message: expect.stringContaining('not runnable: the hub name "helper-bot" belongs to a human') as unknown });
      expect(formatCheck(check!)).toMatch(/^fail agent helper-bot: not runnable/);
      expect(checks.find((c) => c.area === 'agent greeter')?.status).toBe('ok');
    }
  });

  it('is noticed when the name is taken between the listing and the registration (the 409 is not "registered meanwhile")', async () => {
    const hub = await startHub({ dbPath: ':memory:', port: 0 });
    try {
      // A listing taken before the human appeared: registration then meets a 409.
      class StaleListing extends HubClient {
        override listAgents(): Promise<Agent[]> {
          return Promise.resolve([]);
        }
      }
      const client = new StaleListing({ baseUrl: hub.url, apiKey: hub.adminKey });
      const dir = join(mkdtempSync(join(tmpdir(), 'warren-squat-')), 'agents');
      define(dir, 'late-bot');
      define(dir, 'fine-bot');
      await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name: 'late-bot', type: 'human' });
      const registry = new AgentRegistry({ store: new LocalFolderStore(dir), executors: new ExecutorRegistry(new LlmExecutor({ secret: () => undefined })), logger: pino({ level: 'silent' }) });
      await registry.reload();
      expect(registry.runnable()).toEqual(new Set(['late-bot', 'fine-bot'])); // nothing known yet
      await registry.registerOnHub(client);
      expect([...registry.runnable()]).toEqual(['fine-bot']);
      expect(registry.hubConflicts().get('late-bot')).toMatch(/belongs to a human/);
      // A reload keeps it out until the hub is checked again.
      await registry.reload();
      expect([...registry.runnable()]).toEqual(['fine-bot']);
      // The agent's own entry, registered by another daemon meanwhile, is not a conflict.
      await registry.registerOnHub(client);
      expect((await client.getAgent('fine-bot')).type).toBe('native');
      expect(registry.hubConflicts().has('fine-bot')).toBe(false);
    } finally {
      await hub.close();
    }
  });
});
