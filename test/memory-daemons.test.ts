// Two warren daemons as real processes on one Redis (a private redis-server, one prefix) and one PostgreSQL
// database (private, dropped after) share an agent's memory: the agent is told the codeword in an activation
// daemon A runs; A stops; daemon B runs the next activation, and the model's request carries the codeword in
// the recalled-memory section.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { MEMORY_HEADING } from '../prompts/memories.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller, waitFor, type WirePost } from './support/hub-api.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres-db.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';
import { keeperDefinition } from './support/memory-agent.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

let redis: PrivateRedis;
let db: TestDatabase;
let hub: RunningHub;
let fake: FakeOpenAI;
const running: WarrenProcess[] = [];
beforeAll(async () => {
  [redis, db, hub, fake] = await Promise.all([startPrivateRedis(), createTestDatabase(), startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` }), startFakeOpenAI()]);
});
afterAll(async () => {
  for (const p of running) p.kill('SIGKILL');
  await Promise.all(running.map((p) => p.exited));
  await fake?.close();
  await hub?.close();
  await db?.drop();
  await redis?.stop();
});


describe('two daemons, one Redis, one PostgreSQL', { timeout: PROCESS_TEST_MS }, () => {
  it('an agent told the codeword through daemon A recalls it in an activation daemon B runs', async () => {
    const agentsDir = makeAgentsDir({ keeper: { config: keeperDefinition(fake.url), prompt: 'You are {{name}}.' } }, { withGreeter: false });
    const prefix = `memory-${randomUUID().slice(0, 8)}`;
    const daemon = (): WarrenProcess => {
      const p = startWarren({ hubUrl: hub.url, adminKey: hub.adminKey, redisUrl: redis.url, prefix, agentsDir, env: { KEEPER_API_KEY: 'sk-keeper' }, sections: [`memory: {store: "${db.url}"}`] });
      running.push(p);
      return p;
    };
    const api = hubCaller(hub.url);
    const { api_key: alice } = await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'alice', type: 'human' });
    const replyOf = async (postId: string): Promise<string | undefined> => (await api.get<WirePost>(`/posts/${postId}?include_comments=true`, alice)).comments?.find((c) => c.author.name === 'keeper')?.content;

    const a = daemon();
    await a.waitForLine(/warren is running/);
    fake.enqueue('Noted.');
    const told = await api.post<{ id: string }>('/posts', alice, { title: 'Release notes', content: '@keeper remember: the deploy codeword is PELICAN-42' });
    expect(await waitFor('A answers', () => replyOf(told.id), 30_000)).toBe('Noted.');
    a.kill('SIGTERM');
    await a.exited;

    const b = daemon();
    await b.waitForLine(/warren is running/);
    fake.enqueue('The deploy codeword is PELICAN-42.');
    const asked = await api.post<{ id: string }>('/posts', alice, { title: 'Friday deploy', content: '@keeper what is the deploy codeword?' });
    expect(await waitFor('B answers', () => replyOf(asked.id), 30_000)).toBe('The deploy codeword is PELICAN-42.');

    const chats = fake.requests.filter((r) => r.path.endsWith('/chat/completions'));
    expect(chats).toHaveLength(2);
    const system = (chats[1]!.body as { messages: Array<{ content: string }> }).messages[0]!.content;
    const at = system.indexOf(MEMORY_HEADING);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(system.slice(at)).toContain('PELICAN-42');
    // B ran it: A was gone, and B's log has the activation.
    expect(b.lines.some((l) => l.includes('keeper') && /activation/i.test(l))).toBe(true);
  }, 120_000);
});
