// Operating a running deployment: the ops commands (real subprocesses against the same Redis and hub),
// pause/resume, and the health and metrics endpoint of the daemon.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { fleetSource } from '../daemon/ops/fleet-source.ts';
import { definitionView, loadedVersions } from '../daemon/ops/loaded-definitions.ts';
import { agentStatus, type AgentStatus, type StatusReport } from '../daemon/ops/status.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { SqliteMemoryStore } from '../memory/sqlite-memory-store.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { ActivationQueue } from '../scheduler/activation-queue.ts';
import type { AgentState } from '../scheduler/agent-state.ts';
import { startFakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { warrenCli, type CliResult } from './support/warren-cli.ts';

const redisUrl = inject('redisUrl');
const WARREN = resolve('bin/warren.js');
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** Runs `warren <args>` against the harness's hub, Redis prefix and agents (async: the daemon shares this thread). */
function warren(harness: Harness, args: string[], env: Record<string, string> = {}, moreYaml = ''): Promise<CliResult> {
  return warrenCli({ hubUrl: harness.hub.url, redisUrl, prefix: harness.prefix, agentsDir: harness.agentsDir }, args, env, moreYaml);
}

async function greeterReplyCount(harness: Harness, postId: string): Promise<number> {
  const post = await harness.api.get<WirePost>(`/posts/${postId}?include_comments=true`, harness.adminKey);
  return (post.comments ?? []).filter((c) => c.author.name === 'greeter').length;
}

/** Prometheus text → `name{labels}` → value (labels as printed, in the order prom-client prints them). */
function parseProm(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    // NaN in any case, as Prometheus parses it: prom-client writes `Nan` (the event-loop lag's mean before its first sample).
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (-?[0-9.e+-]+|[Nn][Aa][Nn]|\+Inf|-Inf)$/.exec(line);
    if (!m) throw new Error(`not Prometheus text format: ${line}`);
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}

describe('operations', { timeout: PROCESS_TEST_MS }, () => {
  it('status, logs, pause and resume work from another process while the daemon runs', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({}) });
    const harness = h;
    const alice = await h.registerUser('alice');
    const first = await h.api.post<{ id: string }>('/posts', alice, { content: '@greeter hi' });
    await waitFor('first reply', async () => ((await greeterReplyCount(harness, first.id)) === 1 ? true : undefined));

    const status = await warren(h, ['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const report = JSON.parse(status.stdout) as StatusReport;
    expect(report.redis.ok).toBe(true);
    expect(report.hub.ok).toBe(true);
    expect(report.leader).toMatch(new RegExp(`:${process.pid}:`)); // the in-process daemon leads
    expect(report.queue).toMatchObject({ active: 0, failed: 0 });
    const greeter = report.agents.find((a) => a.name === 'greeter');
    expect(greeter).toMatchObject({ paused: false, waiting_for: null, last: { outcome: 'answered', trigger: 'notification', reason: 'final' }, today: { activations: 1, comments: 1 } });
    const human = await warren(h, ['status']);
    expect(human.stdout).toMatch(/greeter\s+ready\s+answered \(final\)/);

    const logs = await warren(h, ['logs', '--json', '--agent', 'greeter']);
    const lines = logs.stdout.trim().split('\n').map((l) => JSON.parse(l) as { agent: string; outcome: string; replies: number });
    expect(lines).toMatchObject([{ agent: 'greeter', outcome: 'answered', replies: 1 }]);
    expect((await warren(h, ['logs'])).stdout).toMatch(/greeter notification answered \(final\)/);

    expect((await warren(h, ['pause', 'greeter'])).stdout).toContain('greeter paused');
    expect((await warren(h, ['pause', 'nobody'])).stderr).toMatch(/no agent named "nobody"/);
    const second = await h.api.post<{ id: string }>('/posts', alice, { content: '@greeter are you there?' });
    await new Promise((r) => setTimeout(r, 800));
    expect(await greeterReplyCount(harness, second.id)).toBe(0);
    const paused = JSON.parse((await warren(h, ['status', '--json'])).stdout) as StatusReport;
    expect(paused.agents.find((a) => a.name === 'greeter')).toMatchObject({ paused: true, waiting_for: 'paused' });

    await warren(h, ['resume', 'greeter']);
    await waitFor('reply after resume', async () => ((await greeterReplyCount(harness, second.id)) === 1 ? true : undefined));
  });

  it('run --notification and --explore build the real context from the hub, and post nothing without --post', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({}) });
    await warren(h, ['pause', 'greeter']); // the daemon leaves the mention alone; we answer it by hand
    const alice = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', alice, { title: 'Hi', content: '@greeter are you there?' });
    const inbox = await h.api.get<{ notifications: Array<{ id: string }> }>('/notifications?agent_id=greeter', h.adminKey);
    const id = inbox.notifications[0]!.id;
    const env = { WARREN_HUB_ADMIN_KEY: h.adminKey };
    const r = await warren(h, ['run', 'greeter', '--notification', id, '--json', '--agents', h.agentsDir], env);
    expect(r.code, r.stderr).toBe(0);
    const record = JSON.parse(r.stdout) as { termination: string; text: string };
    expect(record).toMatchObject({ termination: 'final' });
    expect(record.text).toContain('greeter');
    expect(await greeterReplyCount(h, post.id)).toBe(0);
    const explore = await warren(h, ['run', 'greeter', '--explore', '--json', '--agents', h.agentsDir], env);
    expect(explore.code, explore.stderr).toBe(0);
    const missing = await warren(h, ['run', 'greeter', '--notification', 'no-such-id', '--agents', h.agentsDir], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no notification no-such-id among greeter's latest 1/);
    const both = await warren(h, ['run', 'greeter', '--explore', '--prompt', 'x', '--agents', h.agentsDir], env);
    expect(both.code).toBe(1);
    expect(both.stderr).toMatch(/exactly one of --prompt/);
  });

  it('logs --follow prints each activation as it finishes', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({}) });
    const harness = h;
    const file = join(h.agentsDir, '..', 'warren.yaml');
    writeFileSync(file, `hub: {url: "${h.hub.url}"}\nredis: {url: "${redisUrl}", prefix: ${h.prefix}}\nstore: {path: agents}\n`);
    // Records published before the follower subscribed are not followed: wait for its subscription, not for a
    // fixed 800 ms (on a busy machine the subprocess had not started by then, and a record went missing).
    const conn = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    const channel = `${h.prefix}:live:activation-records`;
    const subscribers = async (): Promise<number> => Number(((await conn.pubsub('NUMSUB', channel)) as [string, number])[1]);
    const before = await subscribers();
    const child = spawn(process.execPath, [WARREN, 'logs', '--follow', '--json', '--agent', 'greeter', '--config', file], { env: { ...process.env, REDIS_URL: '' } });
    const lines: string[] = [];
    child.stdout.on('data', (b: Buffer) => lines.push(...b.toString().split('\n').filter(Boolean)));
    try {
      await waitFor('the follower subscribed', async () => ((await subscribers()) > before ? true : undefined), 30_000);
      const alice = await h.registerUser('alice');
      for (const text of ['@greeter one', '@greeter two']) {
        const post = await h.api.post<{ id: string }>('/posts', alice, { content: text });
        await waitFor('reply', async () => ((await greeterReplyCount(harness, post.id)) === 1 ? true : undefined));
      }
      const records = await waitFor('two followed records', () => (lines.length >= 2 ? lines.map((l) => JSON.parse(l) as { agent: string; outcome: string }) : undefined));
      expect(records).toMatchObject([
        { agent: 'greeter', outcome: 'answered' },
        { agent: 'greeter', outcome: 'answered' },
      ]);
    } finally {
      child.kill('SIGINT');
      conn.disconnect();
    }
  });

  it('status shows what a running activation is doing, from its live progress', async () => {
    // The second model call is held open until the checks below are done: a fixed model delay assumed that a
    // `warren status` subprocess starts within it, which a busy machine did not (the run had ended: running []).
    const fake = await startFakeOpenAI();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let calls = 0;
    fake.setResponder(async () => {
      calls += 1;
      if (calls === 1) return { tool_calls: [{ name: 'hub_search', arguments: { query: 'bees' } }], usage: { prompt_tokens: 120, completion_tokens: 8 } };
      await released;
      return 'done at last';
    });
    const slowpoke = [
      'name: slowpoke',
      'type: llm',
      'brain:',
      '  provider: openai',
      '  model: scripted-slow',
      `  api_base: ${fake.url}`,
      '  api_key_env: SLOWPOKE_KEY',
      'capabilities: {grants: [hub:read, hub:write]}',
    ].join('\n');
    try {
      h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ slowpoke: { config: slowpoke, prompt: 'You are {{name}}.' } }, { withGreeter: false }), env: { SLOWPOKE_KEY: 'sk-slowpoke' } });
      const harness = h;
      const alice = await h.registerUser('alice');
      await h.api.post('/posts', alice, { content: '@slowpoke take your time' });
      // The second model call waits for `release`: the worker has published step 2 by then.
      const conn = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
      const queue = new ActivationQueue(conn, { prefix: h.prefix, logger: pino({ level: 'silent' }) });
      try {
        await waitFor('step 2 published', async () => {
          const [r] = await queue.running();
          return (r?.progress as { step?: number } | undefined)?.step === 2 ? true : undefined;
        }, 30_000);
      } finally {
        await queue.close();
        conn.disconnect();
      }
      const status = await warren(h, ['status', '--json'], { SLOWPOKE_KEY: 'sk-slowpoke' });
      const report = JSON.parse(status.stdout) as StatusReport;
      expect(report.running).toHaveLength(1);
      expect(report.running[0]).toMatchObject({ agent: 'slowpoke', trigger: 'notification', progress: { step: 2, max_steps: 10, action: 'thinking', target: 'scripted-slow' } });
      expect(report.running[0]!.progress!.tokens).toBeGreaterThan(0);
      expect(report.agents.find((a) => a.name === 'slowpoke')).toMatchObject({ state: 'running' });
      expect((await warren(h, ['status'], { SLOWPOKE_KEY: 'sk-slowpoke' })).stdout).toMatch(/slowpoke\s+notification\s+\d+s\s+step 2\/10 thinking/);
      release();
      await waitFor('the reply', () => (harness.outcomes.length === 1 ? true : undefined), 30_000);
      expect((JSON.parse((await warren(h, ['status', '--json'])).stdout) as StatusReport).running).toEqual([]);
    } finally {
      release();
      await h?.stop();
      h = undefined;
      await fake.close();
    }
  });

  it('serves /healthz, /readyz and /metrics whose counters match the activations run', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({}) });
    const base = h.daemon.metricsUrl!;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, checks: { redis: 'ok', hub: 'ok' } });

    const alice = await h.registerUser('alice');
    const harness = h;
    for (let i = 0; i < 3; i++) {
      const post = await h.api.post<{ id: string }>('/posts', alice, { content: `@greeter number ${i}` });
      await waitFor(`reply ${i}`, async () => ((await greeterReplyCount(harness, post.id)) === 1 ? true : undefined));
    }
    await waitFor('three outcomes', () => (harness.outcomes.length >= 3 ? true : undefined));
    const res = await fetch(`${base}/metrics`);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const m = parseProm(await res.text());
    const replied = harness.outcomes.filter((o) => o.outcome.kind === 'answered').length;
    expect(replied).toBeGreaterThanOrEqual(3);
    expect(m.get('warren_activations_total{agent="greeter",trigger="notification",outcome="answered"}')).toBe(replied);
    expect(m.get('warren_activation_duration_seconds_count{trigger="notification"}')).toBe(harness.outcomes.length);
    // One histogram per trigger, none per agent (per-agent series are counters only).
    expect([...m.keys()].filter((k) => k.startsWith('warren_activation_duration_seconds') && k.includes('agent='))).toEqual([]);
    expect(m.get('warren_scheduler_lag_seconds_count{trigger="notification"}')).toBe(harness.outcomes.length);
    expect(m.get('warren_scheduler_leader')).toBe(1);
    expect(m.get('warren_queue_jobs{state="active"}')).toBe(0);
    expect(m.get('warren_executor_subprocesses')).toBe(0);

    await h.hub.close();
    const notReady = await fetch(`${base}/readyz`);
    expect(notReady.status).toBe(503);
    expect(((await notReady.json()) as { checks: { hub: string } }).checks.hub).not.toBe('ok');
  });
});

describe('what the daemon runs', { timeout: PROCESS_TEST_MS }, () => {
  it('status, agents and the watch page flag a definition that differs on disk from the one the daemon runs, until a reload', async () => {
    const echo = (reply: string): string => `name: echo\ntype: llm\nbrain: {provider: scripted, model: m, responses: [${JSON.stringify(reply)}]}\ncapabilities: {grants: [hub:read, hub:write]}\n`;
    // Not watching: the daemon runs what it loaded at start until told to reload.
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ echo: { config: echo('first'), prompt: 'x' } }), config: (c) => (c.store.watch = false) });
    const harness = h;
    const report = async (): Promise<StatusReport> => JSON.parse((await warren(harness, ['status', '--json'])).stdout) as StatusReport;
    const ran = (await report()).agents.find((a) => a.name === 'echo')!;
    expect(ran.definition).toMatchObject({ hash: h.daemon.registry.get('echo')?.hash, differs_on_disk: false });
    expect(Date.parse(ran.definition!.loaded_at)).not.toBeNaN();

    writeFileSync(join(h.agentsDir, 'echo', 'config.yaml'), echo('second'));
    mkdirSync(join(h.agentsDir, 'newer'));
    writeFileSync(join(h.agentsDir, 'newer', 'config.yaml'), echo('new').replace('name: echo', 'name: newer'));
    writeFileSync(join(h.agentsDir, 'newer', 'system-prompt.md'), 'x');
    const stale = await report();
    expect(stale.agents.find((a) => a.name === 'echo')?.definition).toMatchObject({ hash: ran.definition!.hash, loaded_at: ran.definition!.loaded_at, differs_on_disk: true });
    expect(stale.agents.find((a) => a.name === 'newer')?.definition).toBeNull();
    const human = (await warren(h, ['status'])).stdout;
    expect(human).toMatch(/echo\s+ready DIFFERS ON DISK/);
    expect(human).toContain('echo: its definition on disk differs from what the daemon runs');
    expect(human).toContain('run `warren reload` or check the daemon log');
    expect(human).toMatch(/newer: not loaded by the daemon/);
    expect((await warren(h, ['agents'])).stdout).toMatch(/echo\s+ready DIFFERS ON DISK/);
    // The watch page's agent rows, as the daemon fills them (its registry against the folder read anew).
    const conn = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    try {
      const store = new LocalFolderStore(h.agentsDir);
      const fleet = fleetSource({
        sources: { redis: conn, prefix: h.prefix, minStalenessMs: 60_000 },
        definitions: () => harness.daemon.registry.all(),
        state: new AgentStateStore(conn, h.prefix),
        onDisk: async () => new Map((await store.load()).agents.map((d) => [d.name, d.hash ?? ''])),
      });
      expect((await fleet.agents()).find((a) => a.name === 'echo')?.definition).toMatchObject({ hash: ran.definition!.hash, differs_on_disk: true });
    } finally {
      conn.disconnect();
    }

    await warren(h, ['reload']);
    await waitFor('reloaded', () => (harness.daemon.registry.get('newer') ? true : undefined), PROCESS_START_MS);
    const fresh = await waitFor('published', async () => {
      const r = await report();
      return r.agents.every((a) => a.definition && !a.definition.differs_on_disk) ? r : undefined;
    }, PROCESS_START_MS);
    expect(fresh.agents.find((a) => a.name === 'echo')?.definition?.hash).not.toBe(ran.definition!.hash);
    expect((await warren(h, ['status'])).stdout).not.toContain('DIFFERS ON DISK');
  });

  it('once no daemon runs, status no longer says what one runs: no drift flagged against the last daemon’s load', async () => {
    const echo = (reply: string): string => `name: echo\ntype: llm\nbrain: {provider: scripted, model: m, responses: [${JSON.stringify(reply)}]}\ncapabilities: {grants: [hub:read, hub:write]}\n`;
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ echo: { config: echo('first'), prompt: 'x' } }), config: (c) => (c.store.watch = false) });
    const harness = h;
    const report = async (): Promise<StatusReport> => JSON.parse((await warren(harness, ['status', '--json'])).stdout) as StatusReport;
    expect((await report()).agents.find((a) => a.name === 'echo')?.definition).toMatchObject({ differs_on_disk: false });
    await h.daemon.stop(); // a clean stop hands its lease over at once: no scheduler leads
    writeFileSync(join(h.agentsDir, 'echo', 'config.yaml'), echo('second'));
    const after = await report();
    expect(after.leader).toBeNull();
    expect(after.definitions_published).toBe(false);
    expect(after.agents.find((a) => a.name === 'echo')?.definition).toBeNull();
    expect(after.runs_without_definition).toEqual([]);
    const human = (await warren(h, ['status'])).stdout;
    expect(human).toContain('none (no scheduler running)');
    expect(human).not.toContain('DIFFERS ON DISK');
    expect(human).not.toContain('differs from what the daemon runs');
    expect((await warren(h, ['agents'])).stdout).not.toContain('DIFFERS ON DISK');
  });

  it('a definition keeps its load time across reloads of unchanged files; a gone one is "runs without definition"', () => {
    const def = (name: string, hash: string): AgentDefinition => ({ name, hash, config: {} as AgentDefinition['config'], systemPrompt: '', files: { config: '', prompt: '' } });
    const t0 = new Date('2026-01-01T00:00:00Z');
    const t1 = new Date('2026-01-01T00:05:00Z');
    const first = loadedVersions(new Map(), [def('a', 'h1'), def('b', 'h2')], t0);
    const second = loadedVersions(first, [def('a', 'h1'), def('b', 'h3')], t1);
    expect(Object.fromEntries(second)).toEqual({ a: { hash: 'h1', loaded_at: t0.toISOString() }, b: { hash: 'h3', loaded_at: t1.toISOString() } });
    const cases: Array<[string, Parameters<typeof definitionView>[0], string | undefined, ReturnType<typeof definitionView>]> = [
      ['same files', { hash: 'h1', loaded_at: 'x' }, 'h1', { hash: 'h1', loaded_at: 'x', differs_on_disk: false }],
      ['edited since', { hash: 'h1', loaded_at: 'x' }, 'h2', { hash: 'h1', loaded_at: 'x', differs_on_disk: true }],
      ['broken or gone since', { hash: 'h1', loaded_at: 'x' }, undefined, { hash: 'h1', loaded_at: 'x', differs_on_disk: true }],
      ['never loaded', undefined, 'h1', null],
    ];
    for (const [what, loaded, disk, view] of cases) expect(definitionView(loaded, disk), what).toEqual(view);
  });
});

describe('truthful status', () => {
  const keyless = 'name: keyless\ntype: llm\nbrain:\n  provider: openai\n  model: gpt-4o-mini\n  api_key_env: KEYLESS_API_KEY\ncapabilities: {grants: [hub:read]}\n';
  const longName = 'a-rather-long-agent-name';
  const scripted = (name: string): string => `name: ${name}\ntype: llm\nbrain:\n  provider: scripted\n  model: scripted-${name}\n  responses: ["hi"]\ncapabilities: {grants: [hub:read, hub:write]}\n`;

  it('status and agents show a skipped agent as skipped with the reason, in columns sized to content, "1 run"', async () => {
    h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ keyless: { config: keyless, prompt: 'x' }, [longName]: { config: scripted(longName), prompt: 'x' } }) });
    const harness = h;
    const alice = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', alice, { content: '@greeter hi' });
    await waitFor('reply', async () => ((await greeterReplyCount(harness, post.id)) === 1 ? true : undefined));

    const report = JSON.parse((await warren(h, ['status', '--json'])).stdout) as StatusReport;
    const reason = 'its key variable KEYLESS_API_KEY (brain.api_key_env) is not set';
    expect(report.agents.find((a) => a.name === 'keyless')).toMatchObject({ state: 'skipped', state_detail: reason, waiting_for: 'not_runnable', not_runnable: reason });
    expect(report.agents.find((a) => a.name === 'greeter')).toMatchObject({ state: 'ready', state_detail: null, waiting_for: null });
    expect(report.defined).toBe(3);

    const human = (await warren(h, ['status'])).stdout.split('\n');
    const header = human.find((l) => l.startsWith('AGENT'))!;
    const row = (name: string): string => human.find((l) => l.startsWith(`${name} `))!;
    // Every column starts where its header does, and no cell runs into the next one.
    for (const name of ['greeter', 'keyless', longName]) {
      for (const col of ['STATE', 'LAST', 'TODAY']) {
        const at = header.indexOf(col);
        expect(row(name)[at - 1], `${name} before ${col}`).toBe(' ');
        expect(row(name)[at], `${name} at ${col}`).not.toBe(' ');
      }
    }
    expect(row(longName)).toMatch(new RegExp(`^${longName}\\s{2,}ready\\s{2,}never ran`));
    expect(row('keyless')).toMatch(/^keyless\s+skipped\s/);
    expect(row('greeter')).toMatch(/\s1 run, 0 tok, \$0\.0000/);
    expect(human).toContain(`keyless is not run: ${reason}`);

    const agents = await warren(h, ['agents', '--json']);
    const rows = JSON.parse(agents.stdout) as Array<{ name: string; state: string; state_detail: string | null; paused: boolean | null }>;
    expect(rows.find((r) => r.name === 'keyless')).toMatchObject({ state: 'skipped', state_detail: reason, paused: false });
    expect(rows.find((r) => r.name === 'greeter')).toMatchObject({ state: 'ready', paused: false });
    const table = (await warren(h, ['agents'])).stdout.split('\n');
    expect(table.find((l) => l.startsWith('keyless '))).toMatch(/^keyless\s{2,}skipped\s{2,}llm\s/);
    expect(table.find((l) => l.startsWith(`${longName} `))).toMatch(new RegExp(`^${longName}\\s{2,}ready\\s{2,}`));
  });

  it('status shows each agent\'s spend against the hub\'s limits and its memory; /metrics the same state and memory', async () => {
    const rememberer = `${scripted('rememberer')}memory: {enabled: true}\n`;
    const memoryFile = join(mkdtempSync(join(tmpdir(), 'warren-status-memory-')), 'memory.sqlite');
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ rememberer: { config: rememberer, prompt: 'x' } }),
      hub: { budget: { defaultDailyLimitUsd: 1, defaultMonthlyLimitUsd: 20, perAgent: { rememberer: { daily: 0 } } } },
      config: (c) => (c.memory.store = memoryFile),
    });
    const store = new SqliteMemoryStore(memoryFile);
    await store.write('rememberer', [
      { key: 'a', kind: 'note', text: 'the deploy codeword is PELICAN-42', createdAt: Date.now() - 60_000 },
      { key: 'b', kind: 'conversation', text: 'alice asked about the weather', createdAt: Date.now() },
    ]);
    const bytes = await store.size('rememberer');
    await store.close();
    await h.api.post('/system/consumption', h.adminKey, { agent_id: 'greeter', tokens_input: 10, tokens_output: 5, cost_usd: 0.25 });

    const yaml = `memory: {store: "${memoryFile}"}\n`;
    const env = { WARREN_HUB_ADMIN_KEY: h.adminKey };
    const report = JSON.parse((await warren(h, ['status', '--json'], env, yaml)).stdout) as StatusReport;
    const of = (name: string): AgentStatus => report.agents.find((a) => a.name === name)!;
    expect(of('greeter').budget).toEqual({ status: 'healthy', daily_used_usd: 0.25, daily_limit_usd: 1, monthly_used_usd: 0.25, monthly_limit_usd: 20 });
    expect(of('rememberer').budget).toMatchObject({ daily_limit_usd: null, monthly_limit_usd: 20 });
    expect(report.fleet_budget).toEqual({ status: 'healthy', monthly_used_usd: 0.25, monthly_limit_usd: 40 });
    expect(of('greeter').memory).toBeNull();
    expect(of('rememberer').memory).toMatchObject({ entries: 2, bytes });
    // Shape kept: the fields that were there are still there.
    expect(Object.keys(of('greeter'))).toEqual(expect.arrayContaining(['name', 'state', 'state_detail', 'paused', 'waiting_for', 'not_runnable', 'today']));

    const human = (await warren(h, ['status'], env, yaml)).stdout.split('\n');
    expect(human).toContain('budget  fleet $0.25 of $40.00 this month (healthy)');
    const header = human.find((l) => l.startsWith('AGENT'))!;
    const row = (name: string): string => human.find((l) => l.startsWith(`${name} `))!;
    expect(row('greeter').slice(header.indexOf('BUDGET'))).toMatch(/^\$0\.25\/\$1\.00 · \$0\.25\/\$20\.00\s{2,}-\s{2,}/);
    expect(row('rememberer').slice(header.indexOf('BUDGET'))).toMatch(/^\$0\.00 \(no limit\) · \$0\.00\/\$20\.00\s{2,}2 entries, \d+ B\s{2,}/);
    // Without the admin key the budget is unknown, not zero.
    expect((JSON.parse((await warren(h, ['status', '--json'], {}, yaml)).stdout) as StatusReport).agents[0]!.budget).toBeNull();

    const metrics = async (): Promise<Map<string, number>> => parseProm(await (await fetch(`${h!.daemon.metricsUrl!}/metrics`)).text());
    let m = await metrics();
    expect(m.get('warren_agent_state{agent="greeter",state="ready"}')).toBe(1);
    expect(m.get('warren_agent_state{agent="greeter",state="paused"}')).toBe(0);
    expect(m.get('warren_memory_entries{agent="rememberer"}')).toBe(2);
    expect(m.get('warren_memory_bytes{agent="rememberer"}')).toBe(bytes);
    expect(m.has('warren_memory_entries{agent="greeter"}')).toBe(false);
    expect((await warren(h, ['pause', 'greeter'], {}, yaml)).code).toBe(0);
    await waitFor('paused in /metrics', async () => ((m = await metrics()).get('warren_agent_state{agent="greeter",state="paused"}') === 1 ? true : undefined));
    expect(m.get('warren_agent_state{agent="greeter",state="ready"}')).toBe(0);
  });

  it('one state per agent, by precedence: skipped, name taken, running, paused, backoff, quiet hours, failing, ready', async () => {
    const def = (await new LocalFolderStore(join(makeAgentsDir({}), '..')).load()).agents[0]!;
    const now = new Date('2026-03-01T12:00:00Z');
    const base: AgentState = { failures: 0, lastFailureAt: undefined, backoffUntil: undefined, lastActivatedAt: undefined, paused: false, abandoned: 0 };
    const today = { activations: 0, posts: 0, comments: 0, tokensInput: 0, tokensOutput: 0, costUsd: 0 };
    const of = (state: Partial<AgentState>, extra: { notRunnable?: string; skipped?: string; running?: boolean } = {}, d = def): { state: string; detail: string | null } => {
      const s = agentStatus(d, { ...base, ...state }, undefined, today, 60_000, now, extra.notRunnable, { skipped: extra.skipped, running: extra.running });
      return { state: s.state, detail: s.state_detail };
    };
    const later = now.getTime() + 600_000;
    expect(of({})).toEqual({ state: 'ready', detail: null });
    expect(of({ failures: 2 })).toEqual({ state: 'failing', detail: '2 failed in a row' });
    expect(of({ failures: 2, backoffUntil: later })).toEqual({ state: 'backoff', detail: 'until 2026-03-01 12:10:00Z, 2 failed in a row' });
    expect(of({ paused: true, failures: 2, backoffUntil: later })).toEqual({ state: 'paused', detail: null });
    expect(of({ paused: true }, { running: true })).toEqual({ state: 'running', detail: null });
    expect(of({}, { notRunnable: 'the hub name "greeter" belongs to a human', running: true })).toEqual({ state: 'name_taken', detail: 'the hub name "greeter" belongs to a human' });
    expect(of({}, { skipped: 'the goose CLI is not installed here', notRunnable: 'x' })).toEqual({ state: 'skipped', detail: 'the goose CLI is not installed here' });
    expect(of({ abandoned: 3 })).toEqual({ state: 'ready', detail: '3 notifications abandoned' });
    expect(of({ failures: 1, abandoned: 1 })).toEqual({ state: 'failing', detail: '1 failed in a row, 1 notification abandoned' });
    const quiet = { ...def, config: { ...def.config, behavior: { ...def.config.behavior, quiet_hours: { start: '11:00', end: '13:00', timezone: 'UTC' } } } };
    expect(of({}, {}, quiet)).toEqual({ state: 'quiet_hours', detail: 'until 13:00 UTC' });
  });
});
