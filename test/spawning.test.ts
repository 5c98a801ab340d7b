// Agents that propose agents (issue 33 item 4), through a real daemon and local hub: an agent with
// capabilities.spawning proposes a new agent from a template in the store's templates/ folder with propose_agent;
// the proposal waits as an approval request of kind spawn; approved, the new agent is written to the store's
// agents folder, loaded on the reload, registered on the hub, and answers a mention. A proposal that widens its
// template is refused as the tool's result and files nothing; a denial reaches the proposer's next run.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import type { WarrenEvent } from '../activation/outbound-events.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalView } from '../daemon/ops/approval-views.ts';
import { ApprovalDesk } from '../scheduler/approval-desk.ts';
import { ApprovalStore, type ApprovalEntry } from '../scheduler/approval-store.ts';
import { TaskInbox } from '../scheduler/task-inbox.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import type { RecordedRequest } from './fakes/openai-server.ts';
import { makeAgentsDir, startHarness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { llmDaemonSuite } from './support/llm-daemon-suite.ts';
import { warrenCli } from './support/warren-cli.ts';

const suite = llmDaemonSuite();
let events: Server;
let eventsUrl: string;
const received: WarrenEvent[] = [];
beforeAll(async () => {
  // The outbound events' receiver: records each event's body.
  events = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString()) as WarrenEvent);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => events.listen(0, '127.0.0.1', () => r()));
  eventsUrl = `http://127.0.0.1:${(events.address() as AddressInfo).port}/events`;
});
afterAll(async () => {
  await new Promise((r) => events.close(r));
});

const MENTOR_KEY = 'sk-mentor-canary-5e6f7a8b9c0d1e2f';

const mentor = (url: string): string => `name: mentor
type: llm
brain: {provider: openai, model: fake-gpt, api_base: ${url}, api_key_env: MENTOR_API_KEY}
capabilities:
  grants: [hub:read, hub:write]
  spawning: {can_propose: true, allowed_templates: [tide-helper], max_pending: 2}
behavior: {limits: {min_interval_seconds: 0}}
events: {urls: ["${eventsUrl}"], secret_env: MENTOR_EVENTS_SECRET}
`;

// The template: a scripted agent (no key needed), which a proposal may narrow.
const TEMPLATE = `name: tide-helper
type: llm
description: Answers questions about tides.
brain: {provider: scripted, model: scripted-tides, responses: ["High tide is at noon."]}
capabilities: {grants: [hub:read, hub:write]}
behavior: {max_iterations: 4, limits: {min_interval_seconds: 0, max_daily_comments: 20}}
`;

const body = (req: RecordedRequest): { messages: Array<{ role: string; content: string | null }> } => req.body as never;
const isMentor = (req: RecordedRequest): boolean => (body(req).messages[0]?.content ?? '').startsWith('You are mentor.');
const taskText = (req: RecordedRequest): string => body(req).messages.filter((m) => m.role === 'user').map((m) => m.content ?? '').join('\n');

/** What mentor's model does: proposes the agent its mention names, or a widened one, then answers. */
function mentorModel(req: RecordedRequest) {
  const answered = body(req).messages.some((m) => m.role === 'tool');
  const text = taskText(req);
  if (answered) return 'Done.';
  const propose = /propose (\S+)/.exec(text)?.[1];
  if (propose) return { tool_calls: [{ id: 'call-1', name: 'propose_agent', arguments: { template: 'tide-helper', name: propose, purpose: `Watches the tides for ${propose}.`, overrides: { behavior: { limits: { max_daily_comments: 5 } }, brain: { responses: [`${propose} here: high tide is at noon.`] } } } }] };
  if (text.includes('widen')) return { tool_calls: [{ id: 'call-1', name: 'propose_agent', arguments: { template: 'tide-helper', name: 'wide-helper', purpose: 'More.', overrides: { capabilities: { grants: ['hub:read', 'hub:write', 'github:write'] } } } }] };
  return 'Hello.';
}

async function spawnRequests(): Promise<ApprovalEntry[]> {
  return (await new ApprovalStore(suite.redis, suite.h!.prefix).open()).filter((e) => e.request.work.kind === 'spawn');
}

async function commentsOn(postId: string, key: string): Promise<Array<{ author: string; content: string }>> {
  const post = await suite.h!.api.get<WirePost>(`/posts/${postId}?include_comments=true`, key);
  return (post.comments ?? []).map((c) => ({ author: c.author.name, content: c.content }));
}

describe('propose_agent through the daemon', { timeout: PROCESS_TEST_MS }, () => {
  it('proposal → spawn request → approve → the new agent answers a mention; widening refused as the tool result; a denial reaches the proposer', async () => {
    const { fake, redis, redisUrl } = suite;
    fake.setResponder((req) => (isMentor(req) ? mentorModel(req) : 'Hello.'));
    const agentsDir = makeAgentsDir({ mentor: { config: mentor(fake.url), prompt: 'You are {{name}}.' } }, { withGreeter: false });
    const templateDir = join(dirname(agentsDir), 'templates', 'tide-helper');
    mkdirSync(templateDir, { recursive: true });
    writeFileSync(join(templateDir, 'config.yaml'), TEMPLATE);
    writeFileSync(join(templateDir, 'system-prompt.md'), 'You are {{name}}: {{description}}');
    const h = (suite.h = await startHarness({ redisUrl, agentsDir, env: { MENTOR_API_KEY: MENTOR_KEY, MENTOR_EVENTS_SECRET: 'events-secret-for-mentor' } }));
    const harness = h;
    const dana = await h.registerUser('dana');
    const answers = (): number => harness.outcomes.filter((o) => o.agent === 'mentor' && o.outcome.kind === 'answered').length;
    const answeredAgain = (seen: number) => () => (answers() > seen ? true : undefined);
    const desk = new ApprovalDesk(new ApprovalStore(redis, h.prefix), { add: (agent, task) => new TaskInbox(redis, harness.prefix).add(agent, task) });

    // 1. A proposal from the template: one spawn request, listed as such, nothing written yet.
    let seen = answers();
    await h.api.post('/posts', dana, { title: 'Tides', content: '@mentor propose tide-watcher' });
    const [proposal] = await waitFor('the spawn request', async () => ((await spawnRequests()).length ? spawnRequests() : undefined), PROCESS_START_MS);
    const view = approvalView(proposal!);
    expect(view).toMatchObject({ kind: 'spawn', agent: 'mentor', status: 'waiting', spawn: { name: 'tide-watcher', template: 'tide-helper', purpose: 'Watches the tides for tide-watcher.' }, calls: [{ name: 'propose_agent' }] });
    expect(proposal!.request.work.kind === 'spawn' && proposal!.request.work.config).toContain('max_daily_comments: 5');
    expect(existsSync(join(agentsDir, 'tide-watcher'))).toBe(false);
    const event = await waitFor('the approval.requested event', () => received.find((e) => e.type === 'approval.requested'), PROCESS_START_MS);
    expect(event).toMatchObject({ agent: 'mentor', data: { approval_id: proposal!.request.id, kind: 'spawn', spawn: { name: 'tide-watcher', template: 'tide-helper' } } });
    await waitFor('mentor answered', answeredAgain(seen), PROCESS_START_MS);
    const filed = harness.outcomes.find((o) => o.agent === 'mentor')!.events.find((e) => e.type === 'tool_result');
    expect(filed?.type === 'tool_result' && [filed.name, filed.status]).toEqual(['propose_agent', 'ok']);

    // `warren approvals list` shows it as a proposed agent; approved from the command line with the admin key.
    const cli = (args: string[]): ReturnType<typeof warrenCli> => warrenCli({ hubUrl: harness.hub.url, redisUrl, prefix: harness.prefix, agentsDir }, ['approvals', ...args], { WARREN_HUB_ADMIN_KEY: harness.adminKey });
    const listed = await cli(['list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${proposal!.request.id}  mentor  proposes agent tide-watcher (template tide-helper)  waiting`);

    // 2. Approved: written to the store's agents folder, loaded, registered, and it answers a mention.
    const approved = await cli(['approve', proposal!.request.id, '--note', 'welcome aboard']);
    expect([approved.code, approved.stderr]).toEqual([0, '']);
    await waitFor('tide-watcher loaded', () => harness.daemon.registry.get('tide-watcher'), PROCESS_START_MS);
    // Registered on the hub (a mention of a name the hub does not know notifies no one).
    await waitFor('tide-watcher registered', () => harness.api.get('/agents/tide-watcher', dana).catch(() => undefined), PROCESS_START_MS);
    expect(existsSync(join(agentsDir, 'tide-watcher', 'config.yaml'))).toBe(true);
    expect(harness.daemon.registry.get('tide-watcher')!.config.behavior.limits.max_daily_comments).toBe(5);
    const asked = await h.api.post<{ id: string }>('/posts', dana, { title: 'When?', content: '@tide-watcher when is high tide?' });
    const reply = await waitFor('tide-watcher answers', async () => (await commentsOn(asked.id, dana)).find((c) => c.author === 'tide-watcher'), PROCESS_START_MS);
    expect(reply.content).toBe('tide-watcher here: high tide is at noon.');
    expect(await new ApprovalStore(redis, h.prefix).isOpen(proposal!.request.id)).toBe(false);

    // 3. A proposal that widens its template: refused as the tool's result, nothing filed.
    seen = answers();
    await h.api.post('/posts', dana, { title: 'More', content: '@mentor widen please' });
    await waitFor('mentor answered the widening', answeredAgain(seen), PROCESS_START_MS);
    const widened = harness.outcomes.filter((o) => o.agent === 'mentor').flatMap((o) => o.events).filter((e) => e.type === 'tool_result' && e.status === 'error');
    expect(widened).toHaveLength(1);
    expect(widened[0]!.type === 'tool_result' && widened[0]!.excerpt).toContain('capabilities.grants may only keep entries');
    expect(await spawnRequests()).toEqual([]);

    // 4. Denied: nothing written; mentor's next run reads the note in its context.
    seen = answers();
    await h.api.post('/posts', dana, { title: 'Reef', content: '@mentor propose reef-keeper' });
    const [second] = await waitFor('the second spawn request', async () => ((await spawnRequests()).length ? spawnRequests() : undefined), PROCESS_START_MS);
    await waitFor('mentor answered the second proposal', answeredAgain(seen), PROCESS_START_MS);
    await desk.decide(second!.request.id, 'denied', { by: 'admin', note: 'one tide agent is enough' });
    await waitFor('the denial carried out', async () => ((await new ApprovalStore(redis, harness.prefix).isOpen(second!.request.id)) ? undefined : true), PROCESS_START_MS);
    expect(existsSync(join(agentsDir, 'reef-keeper'))).toBe(false);
    const before = fake.requests.length;
    seen = answers();
    await h.api.post('/posts', dana, { title: 'Hi', content: '@mentor hello again' });
    const told = await waitFor('mentor runs again', () => fake.requests.slice(before).find(isMentor), PROCESS_START_MS);
    const system = body(told).messages[0]!.content ?? '';
    expect(system).toContain('"reef-keeper"');
    expect(system).toContain('was denied by the admin');
    expect(system).toContain('one tide agent is enough');
    // The note is read once: the run after does not see it again.
    await waitFor('mentor answered hello', answeredAgain(seen), PROCESS_START_MS);
    const after = fake.requests.length;
    await h.api.post('/posts', dana, { title: 'Hi again', content: '@mentor hello once more' });
    const later = await waitFor('mentor runs once more', () => fake.requests.slice(after).find(isMentor), PROCESS_START_MS);
    expect(body(later).messages[0]!.content).not.toContain('reef-keeper');
    // The proposer's key never reached the request or its note.
    expect(JSON.stringify(await redis.keys(`${h.prefix}:*`))).not.toContain(MENTOR_KEY);
  });
});
