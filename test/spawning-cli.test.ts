// Agents that propose agents, for CLI agents (issue 33 item 4): a CLI agent with capabilities.spawning gets
// propose_agent from `warren mcp hub --spawning`, which the daemon's launcher passes, and the daemon's hub gateway
// checks and files each proposal as the LLM loop's are (an approval request of kind spawn). Through a real daemon
// and local hub: the real `claude` CLI (against the fake Anthropic server) proposes through the real `warren mcp
// hub`; `warren approvals list` shows the spawn, `warren approvals approve` lets the new agent answer a mention, and
// its spend counts against the fleet's budget; a widening is refused as the tool's result; a denial reaches the CLI
// agent's next run. Without the switch the tool
// is absent, and the gateway refuses a token whose agent may not propose.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ActivationRecords } from '../activation/activation-records.ts';
import { SpawnProposalDesk } from '../activation/spawn-proposals.ts';
import { warrenHubMcpLauncher } from '../executors/cli/hub-mcp-launcher.ts';
import { GENERAL_ONLY } from '../memory/audience.ts';
import { ApprovalStore, type ApprovalEntry } from '../scheduler/approval-store.ts';
import { HubGateway } from '../services/hub-gateway.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { parseDefinition } from '../store/parse-definition.ts';
import { startFakeAnthropic, type FakeAnthropic, type RecordedAnthropicRequest } from './fakes/anthropic-server.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { warrenCli } from './support/warren-cli.ts';

const redisUrl = inject('redisUrl');
const CLAUDE = join(import.meta.dirname, '..', 'node_modules', '.bin', 'claude');
const KEY = `sk-ant-spawn-${Math.random().toString(36).slice(2)}`;

const builder = (apiBase: string, spawning: string): string => `name: builder
description: Builds things.
type: claude-code
brain: {provider: anthropic, model: claude-sonnet-4-5, api_base: ${apiBase}, api_key_env: BUILDER_KEY}
capabilities:
  grants: [hub:read, hub:write]
${spawning}
behavior: {max_iterations: 6, max_duration: 60s, limits: {min_interval_seconds: 0}}
`;
const SPAWNING = '  spawning: {can_propose: true, allowed_templates: [tide-helper]}';

// The template: a scripted LLM agent (no key needed), which a proposal may narrow.
const TEMPLATE = `name: tide-helper
type: llm
description: Answers questions about tides.
brain: {provider: scripted, model: scripted-tides, responses: ["High tide is at noon."]}
capabilities: {grants: [hub:read, hub:write]}
behavior: {max_iterations: 4, limits: {min_interval_seconds: 0, max_daily_comments: 20}}
`;

function definition(config: string): AgentDefinition {
  const { definition: def, problems } = parseDefinition({ folder: 'builder', configFile: 'agents/builder/config.yaml', configText: config, promptFile: 'agents/builder/system-prompt.md', promptText: 'You are {{name}}.' });
  if (!def) throw new Error(problems.map((p) => p.message).join('; '));
  return def;
}

describe('the launcher and the gateway', () => {
  it('the daemon\'s launcher passes --spawning with the templates when the gateway files proposals, not without', () => {
    const def = definition(builder('http://127.0.0.1:1', SPAWNING));
    const args = (spawning?: readonly string[]): readonly string[] => warrenHubMcpLauncher({ credentials: () => ({ hubUrl: 'http://127.0.0.1:1', key: 'k', ...(spawning ? { spawning } : {}) }) })(def, 'act-1', GENERAL_ONLY).args;
    expect(args(['tide-helper', 'researcher']).join(' ')).toContain('--spawning tide-helper,researcher');
    expect(args()).not.toContain('--spawning');
  });

  describe('`warren mcp hub --spawning` through a real gateway', () => {
    let gateway: HubGateway;
    let redis: Redis;
    let store: ApprovalStore;
    let desk: SpawnProposalDesk;
    let proposer: AgentDefinition;
    beforeAll(async () => {
      redis = new Redis(redisUrl);
      store = new ApprovalStore(redis, `spawn-cli-${Math.random().toString(36).slice(2, 10)}`);
      // The templates as the store loads them: a folder with templates/tide-helper beside agents/.
      const root = mkdtempSync(join(tmpdir(), 'warren-tpl-'));
      mkdirSync(join(root, 'agents'));
      mkdirSync(join(root, 'templates', 'tide-helper'), { recursive: true });
      writeFileSync(join(root, 'templates', 'tide-helper', 'config.yaml'), TEMPLATE);
      writeFileSync(join(root, 'templates', 'tide-helper', 'system-prompt.md'), 'You are {{name}}.');
      const { shared } = await new LocalFolderStore(root).load();
      expect(Object.keys(shared.agentTemplates ?? {})).toEqual(['tide-helper']);
      proposer = { ...definition(builder('http://127.0.0.1:1', SPAWNING)), shared };
      desk = new SpawnProposalDesk({ approvals: store, nameTaken: (name) => name === 'builder', redact: (t) => t });
      gateway = await HubGateway.start({ hubUrl: 'http://127.0.0.1:1', adminKey: 'unused', logger: pino({ level: 'silent' }) });
    });
    afterAll(async () => {
      await gateway.close();
      redis.disconnect();
    });

    async function connect(token: string, extra: string[]): Promise<Client> {
      const client = new Client({ name: 'test', version: '1' });
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [resolve('bin/warren.js'), 'mcp', 'hub', '--agent', 'builder', '--grants', 'hub:read,hub:write', '--activation', 'act-cli-spawn', ...extra], env: { WARREN_HUB_URL: gateway.url, WARREN_HUB_KEY: token }, stderr: 'pipe' }));
      return client;
    }
    const text = (res: Awaited<ReturnType<Client['callTool']>>): string => (res.content as Array<{ text: string }>).map((c) => c.text).join('');

    it('offers propose_agent with the flag only; files once per call; refusals are tool results', async () => {
      const filing = gateway.issue('builder', ['hub:read', 'hub:write'], 60_000, undefined, undefined, undefined, (call, callId, key) => desk.propose({ proposer, call, callId, idempotencyKey: key }));
      const without = await connect(filing.token, []);
      try {
        expect((await without.listTools()).tools.map((t) => t.name)).not.toContain('propose_agent');
      } finally {
        await without.close();
      }
      const client = await connect(filing.token, ['--spawning', 'tide-helper']);
      try {
        const tool = (await client.listTools()).tools.find((t) => t.name === 'propose_agent');
        expect(tool?.inputSchema.properties?.template).toMatchObject({ enum: ['tide-helper'] });
        const call = { template: 'tide-helper', name: 'tide-watcher', purpose: 'Watches the tides.', overrides: { behavior: { limits: { max_daily_comments: 5 } } } };
        const first = await client.callTool({ name: 'propose_agent', arguments: call });
        expect(first.isError).toBe(false);
        const id = (JSON.parse(text(first)) as { approval_id: string }).approval_id;
        // The same call again (a retried activation's): the same request, not a second one.
        const again = await client.callTool({ name: 'propose_agent', arguments: call });
        expect((JSON.parse(text(again)) as { approval_id: string }).approval_id).toBe(id);
        const open = (await store.open()).filter((e: ApprovalEntry) => e.request.work.kind === 'spawn');
        expect(open.map((e) => [e.request.id, e.request.agent, e.request.work.kind === 'spawn' && e.request.work.name])).toEqual([[id, 'builder', 'tide-watcher']]);
        // Widening the template, a taken name, a missing field: each refused in words, nothing filed.
        const wide = await client.callTool({ name: 'propose_agent', arguments: { ...call, name: 'wide-helper', overrides: { capabilities: { grants: ['hub:read', 'hub:write', 'github:write'] } } } });
        expect([wide.isError, text(wide)]).toEqual([true, expect.stringContaining('capabilities.grants may only keep entries')]);
        const taken = await client.callTool({ name: 'propose_agent', arguments: { ...call, name: 'builder' } });
        expect([taken.isError, text(taken)]).toEqual([true, expect.stringContaining('name "builder" is taken')]);
        const missing = await client.callTool({ name: 'propose_agent', arguments: { template: 'tide-helper', name: 'x-helper' } });
        expect(missing.isError).toBe(true);
        expect((await store.open()).filter((e: ApprovalEntry) => e.request.work.kind === 'spawn')).toHaveLength(1);
      } finally {
        await client.close();
      }
      // A token whose agent may not propose: the gateway refuses, whatever flag its server was started with.
      const plain = gateway.issue('builder', ['hub:read', 'hub:write'], 60_000);
      const sneaky = await connect(plain.token, ['--spawning', 'tide-helper']);
      try {
        const res = await sneaky.callTool({ name: 'propose_agent', arguments: { template: 'tide-helper', name: 'sneaky-helper', purpose: 'More.' } });
        expect([res.isError, text(res)]).toEqual([true, expect.stringContaining('builder may not propose agents here')]);
      } finally {
        await sneaky.close();
      }
      expect((await store.open()).filter((e: ApprovalEntry) => e.request.work.kind === 'spawn')).toHaveLength(1);
    }, PROCESS_TEST_MS);
  });
});

describe('a CLI agent proposes through the daemon', () => {
  let fake: FakeAnthropic;
  let h: Harness;
  let redis: Redis;
  let userKey: string;
  beforeAll(async () => {
    fake = await startFakeAnthropic({ apiKey: KEY });
    const workspaces = mkdtempSync(join(tmpdir(), 'warren-ws-'));
    const agentsDir = makeAgentsDir({ builder: { config: builder(fake.url, SPAWNING), prompt: 'You are {{name}}.' } }, { withGreeter: false });
    const templateDir = join(dirname(agentsDir), 'templates', 'tide-helper');
    mkdirSync(templateDir, { recursive: true });
    writeFileSync(join(templateDir, 'config.yaml'), TEMPLATE);
    writeFileSync(join(templateDir, 'system-prompt.md'), 'You are {{name}}: {{description}}');
    h = await startHarness({
      redisUrl,
      agentsDir,
      env: { BUILDER_KEY: KEY, PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspaces },
      config: (c) => {
        c.executors.cli.binaries['claude-code'] = CLAUDE;
        c.executors.cli.workspaces = workspaces;
        c.executors.cli.claude_max_retries = 0;
        c.scheduler.exploration_interval = 3_600_000;
        // The template's scripted model at $100 per million tokens in; budget-health trusted for a moment only.
        c.executors.llm.prices['scripted-tides'] = { input: 100, output: 0 };
        c.scheduler.budget_ttl = 200;
      },
      // The fleet's day: $0.50 for every agent together (the proposer alone spends cents).
      hub: { budget: { fleetDailyLimitUsd: 0.5 } },
    });
    redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
    userKey = await h.registerUser('dana');
  }, PROCESS_TEST_MS);
  afterAll(async () => {
    await h?.stop();
    redis?.disconnect();
    await fake?.close();
  });

  const messagesOf = (req: RecordedAnthropicRequest): string => JSON.stringify(req.body?.messages ?? []);
  const systemOf = (req: RecordedAnthropicRequest): string => JSON.stringify(req.body?.system ?? '');
  /** The model proposes what the mention asks for (once), then answers in words. */
  function proposeOnMention(): void {
    fake.setResponder((req) => {
      const msgs = messagesOf(req);
      if (msgs.includes('"tool_result"')) return 'Proposed.';
      const name = /propose ([a-z-]+)/.exec(msgs)?.[1];
      // The new agent's one answer costs 10,000 tokens in (at the price set below, $1.00).
      if (name) return { tool_uses: [{ name: 'mcp__hub__propose_agent', input: { template: 'tide-helper', name, purpose: `Watches the tides for ${name}.`, overrides: { brain: { responses: [{ content: `${name} here: high tide is at noon.`, usage: { prompt_tokens: 10_000, completion_tokens: 10 } }] } } } }] };
      if (msgs.includes('widen')) return { tool_uses: [{ name: 'mcp__hub__propose_agent', input: { template: 'tide-helper', name: 'wide-helper', purpose: 'More.', overrides: { capabilities: { grants: ['hub:read', 'hub:write', 'github:write'] } } } }] };
      return 'Hello.';
    });
  }
  const spawnRequests = async (): Promise<ApprovalEntry[]> => (await new ApprovalStore(redis, h.prefix).open()).filter((e) => e.request.work.kind === 'spawn');
  /** The tool results the model was shown for the mention that asked `asked`, as text. */
  const toolResults = (asked: string): string[] => {
    const last: Array<{ content?: unknown }> = fake.messageRequests().filter((r) => messagesOf(r).includes(asked)).at(-1)?.body?.messages ?? [];
    return last.flatMap((m): Array<{ type?: string; content?: unknown }> => (Array.isArray(m.content) ? (m.content as Array<{ type?: string; content?: unknown }>) : [])).filter((b) => b.type === 'tool_result').map((b) => JSON.stringify(b.content));
  };
  /** Posts a mention and waits until the model has read the result of the tool it called for it. */
  async function mention(title: string, content: string): Promise<void> {
    await h.api.post('/posts', userKey, { title, content });
    const asked = content.replace('@builder ', '');
    await waitFor(`the tool result for "${title}"`, () => fake.messageRequests().find((r) => messagesOf(r).includes(asked) && messagesOf(r).includes('"tool_result"')), 90_000);
  }

  it('proposal → `warren approvals list` shows the spawn; widening refused; a denial reaches the proposer; approve → the new agent answers, its spend in the fleet\'s', async () => {
    proposeOnMention();
    const cli = (args: string[]): ReturnType<typeof warrenCli> => warrenCli({ hubUrl: h.hub.url, redisUrl, prefix: h.prefix, agentsDir: h.agentsDir }, ['approvals', ...args], { WARREN_HUB_ADMIN_KEY: h.adminKey });

    // The CLI is offered the tool (as mcp__hub__propose_agent) and files one spawn request.
    await mention('Tides', '@builder propose tide-watcher');
    expect(fake.messageRequests()[0]!.body?.tools?.map((t) => t.name)).toContain('mcp__hub__propose_agent');
    const [proposal] = await spawnRequests();
    expect(proposal?.request).toMatchObject({ agent: 'builder', calls: [{ name: 'propose_agent' }], work: { kind: 'spawn', name: 'tide-watcher', template: 'tide-helper' } });
    expect(toolResults('propose tide-watcher').join('')).toContain(proposal!.request.id);
    const listed = await cli(['list']);
    expect(listed.stdout).toContain(`${proposal!.request.id}  builder  proposes agent tide-watcher (template tide-helper)  waiting`);

    // Widening its template: refused as the tool's result, nothing filed.
    await mention('More', '@builder widen please');
    expect(toolResults('widen please').join('')).toContain('capabilities.grants may only keep entries');
    expect((await spawnRequests()).map((e) => e.request.id)).toEqual([proposal!.request.id]);
    // A name the hub knows already (dana, a person there): refused as the tool's result, nothing filed.
    await mention('Dana', '@builder propose dana');
    expect(toolResults('propose dana').join('')).toContain('name \\"dana\\" is taken');
    expect((await spawnRequests()).map((e) => e.request.id)).toEqual([proposal!.request.id]);

    // Denied: nothing written; the CLI agent's next run reads the note in its system prompt.
    await mention('Reef', '@builder propose reef-keeper');
    const second = (await spawnRequests()).find((e) => e.request.id !== proposal!.request.id);
    expect(second?.request.work).toMatchObject({ kind: 'spawn', name: 'reef-keeper' });
    const denied = await cli(['deny', second!.request.id, '--note', 'one tide agent is enough']);
    expect(denied.code).toBe(0);
    await waitFor('the denial carried out', async () => ((await new ApprovalStore(redis, h.prefix).isOpen(second!.request.id)) ? undefined : true), PROCESS_START_MS);
    expect(existsSync(join(h.agentsDir, 'reef-keeper'))).toBe(false);
    const before = fake.messageRequests().length;
    await h.api.post('/posts', userKey, { title: 'Hi', content: '@builder hello again' });
    const next = await waitFor('builder runs again', () => fake.messageRequests().slice(before).find((r) => messagesOf(r).includes('hello again')), 90_000);
    const system = systemOf(next);
    expect(system).toContain('## Notes for you');
    expect(system).toMatch(/new agent \\"reef-keeper\\" \(template tide-helper, approval [^)]+\) was denied by the admin\. Their note: one tide agent is enough/);

    // Approved from the command line: written, loaded, registered, and it answers a mention.
    const approved = await cli(['approve', proposal!.request.id]);
    expect([approved.code, approved.stderr]).toEqual([0, '']);
    await waitFor('tide-watcher loaded', () => h.daemon.registry.get('tide-watcher'), PROCESS_START_MS);
    expect(existsSync(join(h.agentsDir, 'tide-watcher', 'config.yaml'))).toBe(true);
    await waitFor('tide-watcher registered', () => h.api.get('/agents/tide-watcher', userKey).catch(() => undefined), PROCESS_START_MS);
    const asked = await h.api.post<{ id: string }>('/posts', userKey, { title: 'When?', content: '@tide-watcher when is high tide?' });
    const reply = await waitFor('tide-watcher answers', async () => ((await h.api.get<WirePost>(`/posts/${asked.id}?include_comments=true`, userKey)).comments ?? []).find((c) => c.author.name === 'tide-watcher'), PROCESS_START_MS);
    expect(reply.content).toBe('tide-watcher here: high tide is at noon.');
    await waitFor('the approval closed', async () => ((await new ApprovalStore(redis, h.prefix).isOpen(proposal!.request.id)) ? undefined : true), PROCESS_START_MS);

    // Its spend counts against the fleet's: its answer ($1.00 by the price set here) is in the fleet's day, which
    // passes the fleet's $0.50, and the agent that proposed it is held back for the fleet's budget.
    const health = (agent: string) => h.api.get<{ daily_used: number; status: string; fleet: { daily_used: number; status: string } }>(`/system/budget-health?agent_id=${agent}`, h.adminKey);
    const spawned = await waitFor('tide-watcher\'s spend reported', async () => ((await health('tide-watcher')).daily_used >= 1 ? health('tide-watcher') : undefined), PROCESS_START_MS);
    const proposer = await health('builder');
    expect(spawned.fleet.daily_used).toBeCloseTo(spawned.daily_used + proposer.daily_used, 6);
    expect([spawned.fleet.status, proposer.status]).toEqual(['critical', 'critical']);
    const records = new ActivationRecords(redis, h.prefix);
    await h.api.post('/posts', userKey, { title: 'Again', content: '@builder propose sea-watcher' });
    await waitFor('builder held for the fleet\'s budget', async () => ((await records.recentHeld({ agent: 'builder' })).some((r) => r.reason === 'held: budget') || (await records.recent({ agent: 'builder' })).some((r) => r.reason === 'budget_critical') ? true : undefined), PROCESS_START_MS);
    // The key the CLI ran with never reached Redis.
    expect(JSON.stringify(await redis.keys(`${h.prefix}:*`))).not.toContain(KEY);
  }, PROCESS_TEST_MS);
});
