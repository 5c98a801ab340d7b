// Acceptance for agent memory, end to end: the daemon, the local hub, a fake OpenAI-compatible server that
// records requests. An agent told "remember: the deploy codeword is PELICAN-42" is asked for it later on another
// post; the model's request then carries it in the recalled-memory section. Each recall strategy, on SQLite;
// keyword also on PostgreSQL, where a second daemon recalls what the first was told. Memory is per person: what
// one person told is never recalled for another (memory.scope person, the default), on both stores.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { MEMORY_HEADING } from '../prompts/memories.ts';
import { startFakeOpenAI, type FakeOpenAI, type RecordedRequest } from './fakes/openai-server.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres-db.ts';
import { keeperDefinition } from './support/memory-agent.ts';

const redisUrl = inject('redisUrl');
let fake: FakeOpenAI;
const harnesses: Harness[] = [];
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.stop()));
  fake.reset();
});


async function replyOf(h: Harness, postId: string, key: string): Promise<string | undefined> {
  const p = await h.api.get<WirePost>(`/posts/${postId}?include_comments=true`, key);
  return p.comments?.find((c) => c.author.name === 'keeper')?.content;
}

const chats = (): RecordedRequest[] => fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
const systemOf = (r: RecordedRequest): string => (r.body as { messages: Array<{ role: string; content: string }> }).messages[0]!.content;

/** The recalled-memory section of a system prompt: from its heading to the next heading. */
function memorySection(system: string): string {
  const at = system.indexOf(MEMORY_HEADING);
  if (at < 0) return '';
  const next = system.indexOf('\n## ', at + MEMORY_HEADING.length);
  return system.slice(at, next < 0 ? undefined : next);
}

async function startKeeper(strategy: string, store: string, opts: { embeddings?: boolean; agentsDir?: string } = {}): Promise<Harness> {
  const h = await startHarness({
    redisUrl,
    agentsDir: opts.agentsDir ?? makeAgentsDir({ keeper: { config: keeperDefinition(fake.url, strategy), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
    env: { KEEPER_API_KEY: 'sk-keeper-test-key' },
    config: (c) => {
      c.memory.store = store;
      if (opts.embeddings) c.memory.embeddings = { api_base: fake.url, model: 'fake-embedding' };
    },
  });
  harnesses.push(h);
  return h;
}

/** Registers `name` on the harness's hub (each harness has its own) and returns its key. */
const keys = new Map<string, string>();
async function userOn(h: Harness, name: string): Promise<string> {
  const id = `${h.prefix}/${name}`;
  if (!keys.has(id)) keys.set(id, await h.registerUser(name));
  return keys.get(id)!;
}

/** `person` tells keeper the codeword through `teller`, then asks for it on another post through `asker`. */
async function tellThenAsk(teller: Harness, asker: Harness, person = `alice-${Math.random().toString(36).slice(2, 8)}`): Promise<string> {
  fake.enqueue('Noted, I will remember that.', 'The deploy codeword is PELICAN-42.');
  const told = await teller.api.post<{ id: string }>('/posts', await userOn(teller, person), { title: 'Release notes', content: '@keeper remember: the deploy codeword is PELICAN-42' });
  await waitFor('the first answer', () => replyOf(teller, told.id, keys.get(`${teller.prefix}/${person}`)!));
  const key = await userOn(asker, person);
  const asked = await asker.api.post<{ id: string }>('/posts', key, { title: 'Friday deploy', content: '@keeper what is the deploy codeword?' });
  expect(await waitFor('the second answer', () => replyOf(asker, asked.id, key))).toBe('The deploy codeword is PELICAN-42.');
  return person;
}

/** `warren memory <args>` as an operator runs it, against the store `store`. */
async function warrenMemory(store: string, ...args: string[]): Promise<{ stdout: string; code: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-memory-cli-'));
  writeFileSync(join(dir, 'warren.yaml'), `memory:\n  store: ${JSON.stringify(store)}\n`);
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [resolve('bin/warren.js'), 'memory', ...args, '-c', join(dir, 'warren.yaml')]);
    return { stdout, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; code: number };
    return { stdout: e.stdout, code: e.code };
  }
}

/**
 * Two people, one agent: what alice told is recalled when alice asks, never when bob asks; bob's own entries reach
 * bob only; `warren memory keeper --forget alice` erases alice's and leaves bob's.
 */
async function twoPeople(h: Harness, store: string): Promise<void> {
  const ask = async (person: string, title: string, content: string): Promise<string> => {
    const key = await userOn(h, person);
    const post = await h.api.post<{ id: string }>('/posts', key, { title, content: `@keeper ${content}` });
    await waitFor(`keeper's answer to ${person}`, () => replyOf(h, post.id, key));
    return memorySection(systemOf(chats().at(-1)!));
  };
  fake.enqueue('Noted.', 'Noted too.', 'I cannot say.', 'PELICAN-42.', 'HERON-7.');
  await ask('alice', 'Release notes', 'remember: the deploy codeword is PELICAN-42');
  await ask('bob', 'My locker', 'remember: my locker code is HERON-7');
  const bobAsks = await ask('bob', 'Friday deploy', 'what is the deploy codeword? and my locker code?');
  expect(bobAsks).not.toContain('PELICAN-42');
  expect(bobAsks).toContain('HERON-7');
  const aliceAsks = await ask('alice', 'Saturday deploy', 'what is the deploy codeword? and the locker code?');
  expect(aliceAsks).toContain('PELICAN-42');
  expect(aliceAsks).not.toContain('HERON-7');
  // No request to the model ever carried what the other person said.
  const bobRequests = chats().filter((r) => JSON.stringify(r.body).includes('my locker code') || JSON.stringify(r.body).includes('Friday deploy'));
  expect(bobRequests.map((r) => JSON.stringify(r.body)).join('\n')).not.toContain('PELICAN-42');

  const forgot = await warrenMemory(store, 'keeper', '--forget', 'alice');
  expect(forgot.code).toBe(0);
  expect(forgot.stdout).toMatch(/^keeper: forgot \d+ entr(y|ies) from alice\n$/);
  const left = (await warrenMemory(store, 'keeper', '--recent', '50')).stdout;
  expect(left).not.toContain('PELICAN-42');
  expect(left).toContain('HERON-7');
}

describe.each([
  { strategy: 'keyword', embeddings: false },
  { strategy: 'recent', embeddings: false },
  { strategy: 'embedding_search', embeddings: true },
])('memory end to end on SQLite: $strategy', ({ strategy, embeddings }) => {
  it('recalls the codeword told in one thread into the model request of a later activation on another post', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'warren-memory-e2e-')), 'data', 'memory.sqlite');
    const h = await startKeeper(strategy, store, { embeddings });
    await tellThenAsk(h, h);
    const [first, second] = chats();
    expect(chats()).toHaveLength(2);
    expect(memorySection(systemOf(first!))).toBe('');
    const recalled = memorySection(systemOf(second!));
    expect(recalled).toContain('PELICAN-42');
    expect(recalled).toMatch(/- \[\d{4}-\d{2}-\d{2}\] alice-\w+ mentioned me in "Release notes"/);
    // The question itself is in the task, not in what the agent remembers.
    expect(recalled).not.toContain('what is the deploy codeword');
    const embedCalls = fake.requests.filter((r) => r.path.endsWith('/embeddings'));
    if (embeddings) expect(embedCalls.length).toBeGreaterThanOrEqual(2); // the entries written, the question recalled
    else expect(embedCalls).toHaveLength(0);
  });
});

describe('memory privacy end to end on SQLite', () => {
  it("two people, one agent: neither's entries reach the other's model requests; --forget removes one person's only", async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'warren-memory-e2e-')), 'data', 'memory.sqlite');
    await twoPeople(await startKeeper('keyword', store), store);
  });
});

describe('memory tools end to end', () => {
  it('memory_save keeps a note the next activation recalls, and memory_search finds it on request', async () => {
    const store = join(mkdtempSync(join(tmpdir(), 'warren-memory-e2e-')), 'data', 'memory.sqlite');
    const h = await startKeeper('keyword', store);
    fake.enqueue({ tool_calls: [{ name: 'memory_save', arguments: { text: 'The team standup moved to 10:00 on Thursdays.' } }] }, 'Saved it.');
    const alice = await h.registerUser('alice');
    const told = await h.api.post<{ id: string }>('/posts', alice, { title: 'Calendar', content: '@keeper note that the standup moves to ten on Thursdays' });
    await waitFor('the first answer', () => replyOf(h, told.id, alice));
    fake.enqueue({ tool_calls: [{ name: 'memory_search', arguments: { query: 'standup Thursdays', limit: 3 } }] }, 'At 10:00.');
    const asked = await h.api.post<{ id: string }>('/posts', alice, { title: 'Planning', content: '@keeper when is the standup on Thursdays?' });
    expect(await waitFor('the second answer', () => replyOf(h, asked.id, alice))).toBe('At 10:00.');
    const calls = chats();
    expect(calls).toHaveLength(4);
    expect(memorySection(systemOf(calls[2]!))).toContain('The team standup moved to 10:00 on Thursdays.');
    const messages = (calls[3]!.body as { messages: Array<{ role: string; content: string }> }).messages;
    const toolResult = messages.find((m) => m.role === 'tool')!;
    expect(toolResult.content).toMatch(/- \[\d{4}-\d{2}-\d{2}\] The team standup moved to 10:00 on Thursdays\./);
    const tools = (calls[0]!.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
    expect(tools).toEqual(expect.arrayContaining(['memory_save', 'memory_search']));
  });
});

describe('memory end to end on PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(harnesses.splice(0).map((h) => h.stop()));
    await db.drop();
  });

  it('a second daemon (its own hub and Redis prefix) on the same PostgreSQL database recalls what the first was told', async () => {
    const agentsDir = makeAgentsDir({ keeper: { config: keeperDefinition(fake.url, 'keyword'), prompt: 'You are {{name}}.' } }, { withGreeter: false });
    const one = await startKeeper('keyword', db.url, { agentsDir });
    const alice = await tellThenAsk(one, one);
    await one.stop();
    harnesses.splice(harnesses.indexOf(one), 1);
    fake.reset();
    const two = await startKeeper('keyword', db.url, { agentsDir });
    fake.enqueue('Still PELICAN-42.');
    const key = await userOn(two, alice);
    const asked = await two.api.post<{ id: string }>('/posts', key, { title: 'Again', content: '@keeper remind me of the deploy codeword' });
    await waitFor('the answer through the second daemon', () => replyOf(two, asked.id, key));
    expect(memorySection(systemOf(chats()[0]!))).toContain('PELICAN-42');
  });

  it("two people, one agent: neither's entries reach the other's model requests; --forget removes one person's only", async () => {
    const pg = await createTestDatabase();
    try {
      await twoPeople(await startKeeper('keyword', pg.url), pg.url);
    } finally {
      await Promise.all(harnesses.splice(0).map((h) => h.stop()));
      await pg.drop();
    }
  });
});
