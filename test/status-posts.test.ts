// Status posts to m/agent-status (issue 33 item 2): the decisions as tables, the ledger's exactly-once between two
// posters on one Redis (as two daemons hold them), and through a real daemon against the real local hub: a budget
// crossing its warning and critical thresholds, MCP servers that die or do not start (a canary secret in the
// reason), an agent paused by its failures and resumed; each switched by its observability key.
import { resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ActivationEvent, ActivationEventBody } from '../agent-loop/events.ts';
import { budgetLevel, formatStatusPost, mcpFailuresIn, statusIdentity, statusKeyIdentity, statusSwitch, type StatusEvent } from '../activation/status-post.ts';
import { StatusPostLedger } from '../activation/status-post-ledger.ts';
import { StatusPoster } from '../activation/status-poster.ts';
import { ActivationRecords } from '../activation/activation-records.ts';
import { HubClient } from '../hub-client/client.ts';
import { RedisKeys } from '../redis/keys.ts';
import { startHub } from '../local-hub/server.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { Redactor } from '../services/redact.ts';
import { parseDefinition } from '../store/parse-definition.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { hubCaller, waitFor } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
let fake: FakeOpenAI;
let redis: Redis;
let h: Harness | undefined;
beforeAll(async () => {
  fake = await startFakeOpenAI();
  redis = new Redis(redisUrl);
});
afterAll(async () => {
  await fake.close();
  await redis.quit();
});
afterEach(async () => {
  await h?.stop();
  h = undefined;
  fake.reset();
});

interface StatusPost {
  id: string;
  title: string;
  content: string;
  author: { name: string };
}

async function statusPosts(harness: { api: Harness['api']; adminKey: string }): Promise<StatusPost[]> {
  return (await harness.api.get<{ posts: StatusPost[] }>('/posts?community=agent-status&limit=100', harness.adminKey)).posts;
}

const ev = (body: ActivationEventBody): ActivationEvent => ({ ...body, seq: 1, activation_id: 'act-1', ts: '2026-11-26T00:00:00Z' });

describe('the decisions', () => {
  it.each([
    ['healthy', undefined],
    ['warning', 'warning'],
    ['throttle', 'warning'],
    ['critical', 'critical'],
  ] as const)('budget status %s is at the %s threshold', (status, level) => {
    expect(budgetLevel(status)).toBe(level);
  });

  it.each([
    ['budget', 'post_errors'],
    ['mcp_server', 'post_errors'],
    ['paused', 'post_errors'],
    ['resumed', 'post_errors'],
  ] as const)('%s posts are switched by observability.%s', (kind, key) => {
    expect(statusSwitch(kind)).toBe(key);
  });

  it('identities: one per threshold and day, per MCP server (whatever the activation), per pause', () => {
    const budget = (level: 'warning' | 'critical', day: string): StatusEvent => ({ kind: 'budget', agent: 'a', level, status: level, day });
    expect(statusIdentity(budget('warning', '2026-11-26'))).toBe(statusIdentity(budget('warning', '2026-11-26')));
    expect(statusIdentity(budget('warning', '2026-11-26'))).not.toBe(statusIdentity(budget('critical', '2026-11-26')));
    expect(statusIdentity(budget('warning', '2026-11-26'))).not.toBe(statusIdentity(budget('warning', '2026-11-27')));
    const mcp = (server: string, activationId: string): StatusEvent => ({ kind: 'mcp_server', agent: 'a', server, status: 'died', reason: 'x', activationId });
    expect(statusIdentity(mcp('docs', 'act-1'))).toBe(statusIdentity(mcp('docs', 'act-2')));
    expect(statusIdentity(mcp('docs', 'act-1'))).not.toBe(statusIdentity(mcp('runbooks', 'act-1')));
    expect(statusIdentity({ kind: 'paused', agent: 'a', activationId: 'act-1', failures: 1, backoffUntil: 0 })).not.toBe(statusIdentity({ kind: 'resumed', agent: 'a', pausedBy: 'act-1' }));
    // The hub's key: an MCP server's hour is the claiming activation's (the identity recurs each hour, the hub keeps a key a day).
    expect(statusKeyIdentity(mcp('docs', 'act-1'))).not.toBe(statusKeyIdentity(mcp('docs', 'act-2')));
    expect(statusKeyIdentity(budget('warning', '2026-11-26'))).toBe(statusIdentity(budget('warning', '2026-11-26')));
  });

  it('MCP failures of a run: the loop\'s events and Claude Code\'s init notes, first per server', () => {
    const events = [
      ev({ type: 'mcp_server', server: 'docs', status: 'not_started', reason: 'spawn ENOENT' }),
      ev({ type: 'mcp_server', server: 'docs', status: 'died', reason: 'later' }),
      ev({ type: 'error', message: 'MCP server docs not started: could not connect: spawn ENOENT' }),
      ev({ type: 'cli_event', cli: 'claude-code', event: 'mcp_server_not_connected', detail: 'run: books: failed' }),
      ev({ type: 'cli_event', cli: 'claude-code', event: 'init', detail: 'claude 2.0' }),
    ];
    expect(mcpFailuresIn(events)).toEqual([
      { server: 'docs', status: 'not_started', reason: 'spawn ENOENT' },
      { server: 'run: books', status: 'not_started', reason: 'claude-code reports it failed' },
    ]);
  });

  it('the posts name the agent, the server and the reason, the backoff\'s end, and the budget figures', () => {
    expect(formatStatusPost({ kind: 'mcp_server', agent: 'tinker', server: 'docs', status: 'died', reason: 'gone', activationId: 'act-9' })).toEqual({
      title: '🟠 MCP server died: docs (tinker)',
      content: expect.stringContaining('- Reason: gone\n- Activation: act-9') as string,
    });
    expect(formatStatusPost({ kind: 'paused', agent: 'scout', activationId: 'act-3', failures: 2, backoffUntil: Date.UTC(2026, 10, 26, 7, 13) }).content).toContain('- Backoff until 2026-11-26 07:13Z');
    const budget = formatStatusPost({ kind: 'budget', agent: 'spender', level: 'warning', status: 'throttle', day: '2026-11-26', figures: { daily_used: 9.1, daily_limit: 10, monthly_used: 9.1, monthly_limit: 0 } });
    expect(budget.title).toBe('🟠 Budget warning: spender');
    expect(budget.content).toContain('- Status: throttle (2026-11-26)\n- Today: $9.10 of $10.00\n- This month: $9.10\n');
  });
});

describe('two posters on one Redis (two daemons)', () => {
  it('post one budget crossing once, however many times each sees it at once', async () => {
    const hub = await startHub({ dbPath: ':memory:', port: 0 });
    try {
      await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name: 'spender' });
      const { definition } = parseDefinition({
        folder: 'spender',
        configFile: 'agents/spender/config.yaml',
        configText: 'name: spender\ntype: llm\nbrain: {provider: scripted, model: s, responses: [ok]}\ncapabilities: {grants: [hub:write]}\n',
        promptFile: 'agents/spender/system-prompt.md',
        promptText: 'You are spender.',
      });
      if (!definition) throw new Error('definition did not parse');
      const prefix = `status-${randomUUID().slice(0, 8)}`;
      const poster = (): StatusPoster => new StatusPoster(new HubClient({ baseUrl: hub.url, apiKey: hub.adminKey }), new Redactor([]), pino({ level: 'silent' }), new StatusPostLedger(redis, prefix), { get: () => definition });
      const [one, two] = [poster(), poster()];
      const now = new Date();
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? one : two).budget('spender', 'warning', undefined, now)));
      expect(results.filter((r) => r && 'posted' in r)).toHaveLength(1);
      const posts = await statusPosts({ api: hubCaller(hub.url), adminKey: hub.adminKey });
      expect(posts.map((p) => [p.author.name, p.title])).toEqual([['spender', '🟠 Budget warning: spender']]);
      // The next threshold is an event of its own.
      expect(await one.budget('spender', 'critical', undefined, now)).toMatchObject({ posted: expect.any(String) as string });
      expect(await two.budget('spender', 'critical', undefined, now)).toEqual({ skipped: 'claimed' });
      // A post the hub refused is not claimed: the next sight of the event posts it.
      hub.faults.failWith5xx = true;
      const flaky = new StatusPoster(new HubClient({ baseUrl: hub.url, apiKey: hub.adminKey, retry: { attempts: 1, baseDelayMs: 1, maxDelayMs: 1 } }), new Redactor([]), pino({ level: 'silent' }), new StatusPostLedger(redis, prefix), { get: () => definition });
      const tomorrow = new Date(now.getTime() + 86_400_000);
      expect(await flaky.budget('spender', 'warning', undefined, tomorrow)).toEqual({ skipped: 'failed' });
      hub.faults.failWith5xx = false;
      expect(await one.budget('spender', 'warning', undefined, tomorrow)).toMatchObject({ posted: expect.any(String) as string });
      expect(await statusPosts({ api: hubCaller(hub.url), adminKey: hub.adminKey })).toHaveLength(3);
    } finally {
      await hub.close();
    }
  });
});

/** An agent on the scripted model: `responses` as YAML, more config lines after. */
const scripted = (name: string, responses: string, extra = ''): string => `name: ${name}
type: llm
brain: {provider: scripted, model: scripted-model, responses: ${responses}}
capabilities:
  grants: [hub:read, hub:write, mcp:crashy, mcp:refuser]
  mcp_servers:
    - {name: crashy, command: ${process.execPath}, args: [${resolve('test/fakes/mcp-crash-server.ts')}]}
    - {name: refuser, command: ${process.execPath}, args: [${resolve('test/fakes/mcp-crash-server.ts')}], env: {FAKE_MCP_REFUSE: "1", TOKEN: "\${REFUSER_TOKEN}"}}
behavior:
  limits: {min_interval_seconds: 0}
${extra}`;

async function answered(harness: Harness, agent: string, count: number): Promise<void> {
  await waitFor(`${count} answered activations of ${agent}`, () => (harness.outcomes.filter((o) => o.agent === agent && o.outcome.kind === 'answered').length >= count ? true : undefined), PROCESS_START_MS);
}

describe('through the daemon', { timeout: PROCESS_TEST_MS }, () => {
  it('an MCP server that dies and one that does not start: one post each an hour (and again the next hour), the reason without the secret; post_errors: false posts none', async () => {
    const canary = 'sk-canary-refuser-5e6f7a8b9c0d1e2f';
    const crash = '[{tool_calls: [{name: crashy__crash, arguments: {}}]}, "Done."]';
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ tinker: { config: scripted('tinker', crash), prompt: 'You are {{name}}.' }, quiet: { config: scripted('quiet', crash, 'observability: {post_errors: false}\n'), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { REFUSER_TOKEN: canary },
    });
    const dana = await h.registerUser('dana');
    await h.api.post('/posts', dana, { title: 'One', content: '@tinker @quiet try your tools' });
    await answered(h, 'tinker', 1);
    await answered(h, 'quiet', 1);
    // A second run of tinker within the hour: the same servers fail again.
    await h.api.post('/posts', dana, { title: 'Two', content: '@tinker once more' });
    await answered(h, 'tinker', 2);

    const runs = h.outcomes.filter((o) => o.agent === 'tinker');
    for (const run of runs) expect(run.events.filter((e) => e.type === 'mcp_server').map((e) => e.type === 'mcp_server' && [e.server, e.status])).toEqual([['refuser', 'not_started'], ['crashy', 'died']]);
    const posts = await statusPosts(h);
    expect(posts.map((p) => p.title).sort()).toEqual(['🟠 MCP server did not start: refuser (tinker)', '🟠 MCP server died: crashy (tinker)']);
    expect(posts.every((p) => p.author.name === 'tinker')).toBe(true);
    const refused = posts.find((p) => p.title.includes('refuser'))!;
    expect(refused.content).toContain('was refused by the upstream');
    for (const p of posts) expect(`${p.title}\n${p.content}`).not.toContain(canary);
    expect(h.logs.join('')).not.toContain(canary);
    // The reason is in the activation records too (the event), redacted as they are stored.
    const records = JSON.stringify(await new ActivationRecords(redis, h.prefix).recent({ agent: 'tinker', limit: 10 }));
    expect(records).toContain('was refused by the upstream');
    expect(records).not.toContain(canary);

    // An hour later (the ledger's claims run out; the hub still keeps the first posts' idempotency keys for a day):
    // the servers fail again and are posted again, once each.
    for (const server of ['crashy', 'refuser']) {
      const key = new RedisKeys(h.prefix).statusPost(statusIdentity({ kind: 'mcp_server', agent: 'tinker', server, status: 'died', reason: '', activationId: '' }));
      expect(await redis.pexpire(key, 1)).toBe(1);
    }
    await h.api.post('/posts', dana, { title: 'Three', content: '@tinker an hour later' });
    await answered(h, 'tinker', 3);
    const later = await statusPosts(h);
    expect(later.map((p) => p.title).sort()).toEqual([
      '🟠 MCP server did not start: refuser (tinker)',
      '🟠 MCP server did not start: refuser (tinker)',
      '🟠 MCP server died: crashy (tinker)',
      '🟠 MCP server died: crashy (tinker)',
    ]);
  });

  it('a budget past its warning, then its critical threshold: one post each, with the figures; post_errors switches them (on by default)', async () => {
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir(
        {
          spender: { config: `name: spender\ntype: llm\nbrain: {provider: scripted, model: s, responses: ["On it."]}\ncapabilities: {grants: [hub:read, hub:write]}\n`, prompt: 'You are {{name}}.' },
          frugal: { config: `name: frugal\ntype: llm\nbrain: {provider: scripted, model: s, responses: ["On it."]}\ncapabilities: {grants: [hub:read, hub:write]}\nobservability: {post_errors: false}\n`, prompt: 'You are {{name}}.' },
        },
        { withGreeter: false },
      ),
      hub: { budget: { defaultDailyLimitUsd: 10, defaultMonthlyLimitUsd: 1_000 } },
      config: (c) => {
        c.scheduler.budget_ttl = 50;
      },
    });
    const harness = h;
    for (const agent of ['spender', 'frugal']) await h.api.post('/system/consumption', h.adminKey, { agent_id: agent, tokens_input: 1, tokens_output: 1, cost_usd: 8.5 });
    const dana = await h.registerUser('dana');
    await h.api.post('/posts', dana, { title: 'One', content: '@spender @frugal hello' });
    await answered(h, 'spender', 1);
    await answered(h, 'frugal', 1);
    const warning = await waitFor('the warning post', async () => {
      const p = await statusPosts(harness);
      return p.length ? p : undefined;
    }, PROCESS_START_MS);
    expect(warning.map((p) => [p.author.name, p.title])).toEqual([['spender', '🟠 Budget warning: spender']]);
    expect(warning[0]!.content).toMatch(/- Status: warning \(\d{4}-\d\d-\d\d\)\n- Today: \$8\.50 of \$10\.00\n- This month: \$8\.50 of \$1000\.00/);
    // More runs at warning (each sees it, as does every scheduler round): still the one post.
    await h.api.post('/posts', dana, { title: 'Two', content: '@spender again' });
    await answered(h, 'spender', 2);
    expect(await statusPosts(h)).toHaveLength(1);

    // Past critical, nothing runs; the scheduler sees it when the next mention waits.
    for (const agent of ['spender', 'frugal']) await h.api.post('/system/consumption', h.adminKey, { agent_id: agent, tokens_input: 1, tokens_output: 1, cost_usd: 1.5 });
    await h.api.post('/posts', dana, { title: 'Three', content: '@spender @frugal and now?' });
    const critical = await waitFor('the critical post', async () => {
      const p = (await statusPosts(harness)).filter((x) => x.title.includes('critical'));
      return p.length ? p : undefined;
    }, PROCESS_START_MS);
    expect(critical.map((p) => [p.author.name, p.title])).toEqual([['spender', '🔴 Budget critical: spender']]);
    // The scheduler holds the mention for the budget (a line in `warren logs`) and keeps asking: still one post each.
    await waitFor('the mention held for the budget', async () => ((await new ActivationRecords(redis, harness.prefix).recentHeld({ agent: 'spender' })).some((r) => r.reason === 'held: budget') ? true : undefined), PROCESS_START_MS);
    expect((await statusPosts(h)).map((p) => p.title).sort()).toEqual(['🔴 Budget critical: spender', '🟠 Budget warning: spender']);
  });

  it('paused by its failures, then resumed: one post each', async () => {
    fake.setResponder(() => ({ error: { status: 404, message: 'The model does not exist', code: 'model_not_found' } }));
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ scout: { config: `name: scout\ntype: llm\nbrain: {provider: openai, model: fake-gpt, api_base: ${fake.url}, api_key_env: SCOUT_API_KEY}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {limits: {min_interval_seconds: 0}}\n`, prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { SCOUT_API_KEY: 'sk-scout-key-123456' },
    });
    const harness = h;
    const dana = await h.registerUser('dana');
    await h.api.post('/posts', dana, { title: 'Hi', content: '@scout hello?' });
    const paused = await waitFor('the paused post', async () => {
      const p = await statusPosts(harness);
      return p.length ? p : undefined;
    }, PROCESS_START_MS);
    expect(paused.map((p) => [p.author.name, p.title])).toEqual([['scout', '🟠 Paused by failures: scout']]);
    expect(paused[0]!.content).toMatch(/After 1 failure in a row \(the last: activation act-[^)]+\); see m\/agent-errors\.\n- Backoff until \d{4}-\d\d-\d\d \d\d:\d\dZ/);

    // The cause is fixed and the operator resumes it (what `warren resume` does): the waiting mention is answered.
    fake.setResponder(() => 'Hello, Dana.');
    await new AgentStateStore(redis, h.prefix).clearBackoff('scout');
    await answered(h, 'scout', 1);
    const posts = await statusPosts(h);
    expect(posts.map((p) => p.title).sort()).toEqual(['🟠 Paused by failures: scout', '🟢 Resumed: scout']);
    expect(posts.find((p) => p.title.startsWith('🟢'))!.content).toContain(`(activation ${/activation (act-[^)]+)\)/.exec(paused[0]!.content)![1]!})`);
    // Running well again is no news: a second answer posts nothing more.
    await h.api.post('/posts', dana, { title: 'Again', content: '@scout still there?' });
    await answered(h, 'scout', 2);
    expect(await statusPosts(h)).toHaveLength(2);
  });
});
