// memory.distill end to end: the daemon (in process), the local hub, a fake OpenAI-compatible server that plays
// both the agent's turns and the distiller's answers (told apart by the distiller's opening line). A fact told is
// distilled (add), a changed fact replaces the old one (update), a fact said to hold no longer is retired
// (delete); recall then carries the current fact and neither the retired one nor the raw exchange. The
// distillation is charged to the activation; one that fails or has no budget left keeps the raw entry. Two people:
// neither's facts are shown to the distiller for the other's exchange, nor recalled for the other. SQLite and PostgreSQL.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { DISTILL_OPENING } from '../memory/distill-prompt.ts';
import type { MemoryStore } from '../memory/memory-store.ts';
import { openMemoryStore } from '../memory/open-memory-store.ts';
import { MEMORY_HEADING } from '../prompts/memories.ts';
import { startFakeOpenAI, type FakeOpenAI, type FakeReply, type RecordedRequest } from './fakes/openai-server.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres-db.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const redisUrl = inject('redisUrl');
/** An activation on a busy machine: a turn, a reply, a distillation. */
const ANSWER_MS = 30_000;
let fake: FakeOpenAI;
let db: TestDatabase;
const turns: Array<FakeReply | string> = [];
const distills: Array<FakeReply | string> = [];
const harnesses: Harness[] = [];
const stores: MemoryStore[] = [];

type Body = { model: string; max_tokens?: number; max_completion_tokens?: number; messages: Array<{ role: string; content: string }> };
const bodyOf = (r: RecordedRequest): Body => r.body as Body;
const isDistill = (r: RecordedRequest): boolean => bodyOf(r).messages[0]?.content.startsWith(DISTILL_OPENING) ?? false;
const chats = (): RecordedRequest[] => fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
const distillRequests = (): RecordedRequest[] => chats().filter(isDistill);
const turnRequests = (): RecordedRequest[] => chats().filter((r) => !isDistill(r));

beforeAll(async () => {
  [fake, db] = await Promise.all([startFakeOpenAI(), createTestDatabase()]);
});
afterAll(async () => {
  await fake?.close();
  await db?.drop();
});
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.stop()));
  await Promise.all(stores.splice(0).map((s) => s.close()));
  fake.reset();
  turns.length = 0;
  distills.length = 0;
});

function keeper(opts: { maxTokens?: number; replyTokens?: number; learnings?: boolean } = {}): string {
  return `name: keeper
type: llm
brain:
  provider: openai
  model: fake-gpt
  exploration_model: fake-gpt-mini
  api_base: ${fake.url}
  api_key_env: KEEPER_API_KEY
  max_tokens: ${opts.replyTokens ?? 4096}
capabilities:
  grants: [hub:read, hub:write]
behavior:
  max_tokens: ${opts.maxTokens ?? 100000}
  limits: {min_interval_seconds: 0}
memory:
  enabled: true
  distill: true
  retrieval: {strategy: keyword, max_context_items: 5, relevance_threshold: 0.1}
observability: {post_learnings: ${opts.learnings === true}}
`;
}

async function start(store: string, opts: { maxTokens?: number; replyTokens?: number; learnings?: boolean } = {}): Promise<Harness> {
  // The agent's turns and the distiller's answers come from their own queues, whatever order the requests arrive in.
  fake.setResponder((r) => (isDistill(r) ? distills : turns).shift() ?? { error: { status: 500, message: 'the test scripted no more answers' } });
  const h = await startHarness({
    redisUrl,
    agentsDir: makeAgentsDir({ keeper: { config: keeper(opts), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
    env: { KEEPER_API_KEY: 'sk-keeper-test-key' },
    config: (c) => {
      c.memory.store = store;
    },
  });
  harnesses.push(h);
  return h;
}

const keys = new Map<string, string>();
/** `person` mentions keeper in a new post; resolves once the activation has ended (its distillation included). */
async function say(h: Harness, person: string, title: string, content: string): Promise<void> {
  const id = `${h.prefix}/${person}`;
  if (!keys.has(id)) keys.set(id, await h.registerUser(person));
  const ended = h.outcomes.length;
  const post = await h.api.post<{ id: string }>('/posts', keys.get(id)!, { title, content: `@keeper ${content}` });
  await waitFor(`keeper's answer to ${person}`, async () => (await h.api.get<WirePost>(`/posts/${post.id}?include_comments=true`, keys.get(id)!)).comments?.find((c) => c.author.name === 'keeper'), ANSWER_MS);
  await waitFor('the activation to end', () => h.outcomes.length > ended || undefined, ANSWER_MS);
}

/** The recalled-memory section of the last turn's system message. */
function lastRecall(): string {
  const system = bodyOf(turnRequests().at(-1)!).messages[0]!.content;
  const at = system.indexOf(MEMORY_HEADING);
  return at < 0 ? '' : system.slice(at);
}

const ops = (...operations: unknown[]): FakeReply => ({ content: JSON.stringify({ operations }), usage: { prompt_tokens: 700, completion_tokens: 40 } });

async function storeAt(url: string): Promise<MemoryStore> {
  const s = await openMemoryStore(url);
  stores.push(s);
  return s;
}

const sqlitePath = (): string => join(mkdtempSync(join(tmpdir(), 'warren-distill-')), 'memory.sqlite');

describe.each([
  { name: 'SQLite', store: sqlitePath },
  { name: 'PostgreSQL', store: () => db.url },
])('memory.distill on $name', { timeout: PROCESS_TEST_MS }, ({ store }) => {
  it('adds a fact, replaces it when it changes, retires it when it no longer holds; recall carries the current fact only', async () => {
    const url = store();
    const h = await start(url);
    turns.push({ content: 'Noted.', usage: { prompt_tokens: 300, completion_tokens: 5 } });
    distills.push(ops({ op: 'add', text: 'The deploy codeword is PELICAN-42 (told by alice).' }));
    await say(h, 'alice', 'Release notes', 'remember: the deploy codeword is PELICAN-42');
    // Asked of the exploration model, within the budget, with the exchange and no facts yet.
    const first = bodyOf(distillRequests()[0]!);
    expect(first.model).toBe('fake-gpt-mini');
    expect(first.messages[1]!.content).toContain('Facts now:\n(none)');
    expect(first.messages[1]!.content).toContain('the deploy codeword is PELICAN-42');
    // Charged to the activation: its turn and its distillation.
    expect(h.outcomes.at(-1)!.usage).toMatchObject({ inputTokens: 1000, outputTokens: 45 });

    const memory = await storeAt(url);
    const current = async () => (await memory.search('keeper', { strategy: 'recent', limit: 20 })).map((r) => r.entry);
    expect((await current()).map((e) => [e.kind, e.people])).toEqual(expect.arrayContaining([['fact', ['alice']], ['project', ['alice']]]));
    expect((await current()).some((e) => e.kind === 'conversation')).toBe(false); // the raw exchange is retired

    turns.push('Noted, it changed.');
    distills.push(ops({ op: 'update', id: 'F1', text: 'The deploy codeword is HERON-7 (changed by alice).' }));
    await say(h, 'alice', 'Codeword change', 'the deploy codeword changed: it is HERON-7 now');
    const second = bodyOf(distillRequests()[1]!).messages[1]!.content;
    expect(second).toContain('F1: The deploy codeword is PELICAN-42 (told by alice).');
    // The changed fact replaced the old one.
    const facts = (await current()).filter((e) => e.kind === 'fact').map((e) => e.text);
    expect(facts).toEqual(['The deploy codeword is HERON-7 (changed by alice).']);

    turns.push('HERON-7.');
    distills.push(ops());
    await say(h, 'alice', 'Friday deploy', 'what is the deploy codeword?');
    expect(lastRecall()).toContain('HERON-7');
    expect(lastRecall()).not.toContain('PELICAN-42');

    turns.push('Understood.');
    distills.push(ops({ op: 'delete', id: 'F1' }));
    await say(h, 'alice', 'No more codewords', 'we dropped the deploy codeword: there is none now');
    expect(bodyOf(distillRequests().at(-1)!).messages[1]!.content).toContain('F1: The deploy codeword is HERON-7');
    expect((await current()).filter((e) => e.kind === 'fact')).toEqual([]);

    turns.push('There is none.');
    distills.push(ops());
    await say(h, 'alice', 'Saturday deploy', 'what is the deploy codeword?');
    expect(lastRecall()).not.toContain('HERON-7');
    expect(lastRecall()).not.toContain('PELICAN-42');
  });

  it("two people: bob's exchange is distilled beside alice's facts, never shown them; each recalls only their own", async () => {
    const url = store();
    const h = await start(url);
    turns.push('Noted.', 'Noted too.');
    distills.push(ops({ op: 'add', text: "alice's deploy codeword is PELICAN-42." }), ops({ op: 'add', text: "bob's locker code is HERON-7." }));
    await say(h, 'alice', 'Release notes', 'remember: the deploy codeword is PELICAN-42');
    await say(h, 'bob', 'My locker', 'remember: my locker code is HERON-7, and the deploy codeword?');
    const bobDistill = JSON.stringify(distillRequests()[1]!.body);
    expect(bobDistill).toContain('HERON-7');
    expect(bobDistill).not.toContain('PELICAN-42');
    expect(bobDistill).toContain('Facts now:\\n(none)');

    turns.push('I cannot say.', 'PELICAN-42.');
    distills.push(ops(), ops());
    await say(h, 'bob', 'Friday deploy', 'what is the deploy codeword? and my locker code?');
    expect(lastRecall()).toContain('HERON-7');
    expect(lastRecall()).not.toContain('PELICAN-42');
    await say(h, 'alice', 'Saturday deploy', 'what is the deploy codeword? and the locker code?');
    expect(lastRecall()).toContain('PELICAN-42');
    expect(lastRecall()).not.toContain('HERON-7');
    // No request to the model for bob carried alice's words.
    expect(chats().filter((r) => JSON.stringify(r.body).includes('my locker code')).map((r) => JSON.stringify(r.body)).join('\n')).not.toContain('PELICAN-42');
    const facts = (await (await storeAt(url)).search('keeper', { strategy: 'recent', limit: 20, facts: {} })).map((r) => [r.entry.text, r.entry.people]);
    expect(facts).toEqual(expect.arrayContaining([["alice's deploy codeword is PELICAN-42.", ['alice']], ["bob's locker code is HERON-7.", ['bob']]]));
  });
});

describe('memory.distill that cannot be done keeps the raw entry and the answer', { timeout: PROCESS_TEST_MS }, () => {
  it('a distiller that fails or answers out of shape is logged; the exchange is still recalled raw', async () => {
    const h = await start(sqlitePath());
    turns.push('Noted.', 'Noted again.', 'PELICAN-42.');
    distills.push({ error: { status: 400, message: 'bad request' } }, { content: 'Sure! Here are the facts: the codeword is PELICAN-42', usage: { prompt_tokens: 500, completion_tokens: 20 } }, ops());
    await say(h, 'alice', 'Release notes', 'remember: the deploy codeword is PELICAN-42');
    expect(h.outcomes.at(-1)!.outcome.kind).toBe('answered');
    expect(h.logs.join('')).toContain('memory distillation failed; the raw entries are kept');
    await say(h, 'alice', 'Other notes', 'remember: the standup is at ten');
    expect(h.logs.join('')).toContain("the model's answer was refused");
    // The refused answer still cost tokens: charged.
    expect(h.outcomes.at(-1)!.usage.inputTokens).toBeGreaterThanOrEqual(500);
    await say(h, 'alice', 'Friday deploy', 'what is the deploy codeword?');
    expect(lastRecall()).toMatch(/alice mentioned me in "Release notes".*PELICAN-42/);
  });

  it('with no token budget left after the turn, nothing is asked; the raw entry is kept', async () => {
    const h = await start(sqlitePath(), { maxTokens: 3000, replyTokens: 200 });
    const spent = { prompt_tokens: 2890, completion_tokens: 10 };
    turns.push({ content: 'Noted.', usage: spent });
    await say(h, 'alice', 'Release notes', 'remember: the deploy codeword is PELICAN-42');
    expect(h.logs.join('')).toContain('memory not distilled: the activation has no token budget left for it');
    expect(h.outcomes.at(-1)!.usage).toMatchObject({ inputTokens: 2890, outputTokens: 10 });
    turns.push({ content: 'PELICAN-42.', usage: spent });
    await say(h, 'alice', 'Friday deploy', 'what is the deploy codeword?');
    expect(distillRequests()).toHaveLength(0); // the question's own exchange had no budget either
    expect(lastRecall()).toContain('PELICAN-42');
  });
});

// Issue 33 item 3: with memory distillation on, a new distilled fact may be offered as a learning by the same tool
// (post_learning), never without the switch. The fact is recalled into the next turn and the model may share it;
// warren posts no fact by itself (a fact keeps the people it came from; a learning is read by every agent).
describe('a distilled fact offered as a learning', { timeout: PROCESS_TEST_MS }, () => {
  const FACT = 'Restarting the edge cache clears the 502s on the gateway.';
  const learnings = async (h: Harness): Promise<Array<{ title: string; content: string; author: { name: string } }>> =>
    (await h.api.get<{ posts: Array<{ title: string; content: string; author: { name: string } }> }>('/posts?community=agent-learnings&limit=100', h.adminKey)).posts;
  const toolsOf = (r: RecordedRequest): string[] => ((r.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name);

  it('with post_learnings: the next turn recalls the fact and post_learning shares it in m/agent-learnings', async () => {
    const h = await start(sqlitePath(), { learnings: true });
    turns.push('Noted.');
    distills.push(ops({ op: 'add', text: FACT }));
    await say(h, 'alice', 'Gateway 502s', 'remember: restarting the edge cache clears the 502s on the gateway');
    turns.push({ tool_calls: [{ id: 'call-1', name: 'post_learning', arguments: { title: 'Gateway 502s', content: FACT } }] }, 'Shared it.');
    distills.push(ops());
    await say(h, 'alice', 'Share it', 'the 502s on the gateway: share what you learned with the other agents');
    const turn = turnRequests().find((r) => bodyOf(r).messages.some((m) => m.role === 'user' && m.content.includes('share what you learned')))!;
    expect(toolsOf(turn)).toContain('post_learning');
    expect(bodyOf(turn).messages[0]!.content.slice(bodyOf(turn).messages[0]!.content.indexOf(MEMORY_HEADING))).toContain(FACT);
    expect((await learnings(h)).map((p) => [p.author.name, p.title, p.content])).toEqual([['keeper', 'Gateway 502s', FACT]]);
  });

  it('without the switch: the same fact is distilled and recalled, the tool is absent, nothing reaches m/agent-learnings', async () => {
    const h = await start(sqlitePath());
    turns.push('Noted.');
    distills.push(ops({ op: 'add', text: FACT }));
    await say(h, 'alice', 'Gateway 502s', 'remember: restarting the edge cache clears the 502s on the gateway');
    turns.push('I keep it to myself.');
    distills.push(ops());
    await say(h, 'alice', 'Share it', 'the 502s on the gateway: share what you learned with the other agents');
    const turn = turnRequests().find((r) => bodyOf(r).messages.some((m) => m.role === 'user' && m.content.includes('share what you learned')))!;
    expect(bodyOf(turn).messages[0]!.content).toContain(FACT);
    expect(toolsOf(turn)).not.toContain('post_learning');
    expect(await learnings(h)).toEqual([]);
  });
});
