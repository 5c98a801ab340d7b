// An operator's `warren pause` outlives Redis (issue 27.6): kept in the pause file (pauses.file) and applied to Redis
// again when the daemon starts or its Redis comes back empty. Real daemon, a private redis-server without persistence
// that the test restarts, the real `warren` CLI.
import { statSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusReport } from '../daemon/ops/status.ts';
import type { ActivationRecord } from '../activation/activation-records.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';
import { warrenCli, type CliResult } from './support/warren-cli.ts';

let h: Harness | undefined;
let redis: PrivateRedis | undefined;
let client: Redis | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
  client?.disconnect();
  client = undefined;
  await redis?.stop();
  redis = undefined;
});

function warren(harness: Harness, r: PrivateRedis, args: string[]): Promise<CliResult> {
  return warrenCli({ hubUrl: harness.hub.url, redisUrl: r.url, prefix: harness.prefix, agentsDir: harness.agentsDir }, args);
}

async function greeterReplies(harness: Harness, postId: string): Promise<number> {
  const post = await harness.api.get<WirePost>(`/posts/${postId}?include_comments=true`, harness.adminKey);
  return (post.comments ?? []).filter((c) => c.author.name === 'greeter').length;
}

describe('a pause outlives Redis', { timeout: PROCESS_TEST_MS }, () => {
  it('Redis restarted without persistence: greeter stays paused, its mention is held and shown, resume answers it', async () => {
    redis = await startPrivateRedis(); // --save '' and no AOF: a restart comes back empty
    const r = redis;
    h = await startHarness({ redisUrl: r.url, agentsDir: makeAgentsDir({}) });
    const harness = h;
    client = new Redis(r.url, { maxRetriesPerRequest: null });
    const c = client;
    const paused = await warren(harness, r, ['pause', 'greeter']);
    expect(paused.stdout, paused.stderr).toContain('greeter paused');
    // The decision is in the pause file too, owner-only.
    const file = join(harness.agentsDir, '..', 'data', 'pauses.json');
    expect(Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { paused: object }).paused)).toEqual(['greeter']);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    // A key only this test writes: gone after the restart, it shows Redis came back empty, the pause with it. (Reading
    // the pause itself raced the daemon, whose reconnect may put it back before this client's.)
    const sentinel = `${harness.prefix}:test-sentinel`;
    await c.set(sentinel, '1');
    await r.kill();
    await r.start();
    expect(await c.exists(sentinel)).toBe(0);
    // The daemon puts the pause back once its connection is ready again.
    await waitFor('the pause re-applied', async () => ((await c.hget(`${harness.prefix}:agent-paused`, 'greeter')) === '1' ? true : undefined), PROCESS_START_MS);
    // Logged once the write is answered: the daemon's log line may follow this test's read of the key.
    await waitFor('the re-applied pause logged', () => (harness.logs.some((l) => l.includes('operator pauses applied from the pause file')) ? true : undefined), PROCESS_START_MS);

    const dana = await harness.registerUser('dana');
    const mention = await harness.api.post<{ id: string }>('/posts', dana, { content: '@greeter still there?' });
    // The intake round holds the mention (positive evidence that it was seen and not run), once in the logs.
    await waitFor('the mention held', () => (harness.logs.some((l) => l.includes('mentions held: paused')) ? true : undefined), PROCESS_START_MS);
    expect(await greeterReplies(harness, mention.id)).toBe(0);

    const status = JSON.parse((await warren(harness, r, ['status', '--json'])).stdout) as StatusReport;
    expect(status.agents.find((a) => a.name === 'greeter')).toMatchObject({ paused: true, state: 'paused', held: { reason: 'paused', waiting: 1, runs_at: null } });
    const human = (await warren(harness, r, ['status'])).stdout;
    expect(human).toMatch(/greeter: 1 mention held since \d\d:\d\dZ, paused: run after `warren resume greeter`/);
    const logs = (await warren(harness, r, ['logs', '--json', '--agent', 'greeter'])).stdout.trim().split('\n').map((l) => JSON.parse(l) as ActivationRecord);
    expect(logs.filter((x) => x.reason === 'held: paused')).toHaveLength(1); // once, however many rounds held it
    expect((await warren(harness, r, ['logs', '--agent', 'greeter'])).stdout).toMatch(/greeter notification skipped \(held: paused\) .* — 1 mention waiting; paused: run after `warren resume greeter`/);

    expect((await warren(harness, r, ['resume', 'greeter'])).stdout).toContain('greeter resumed');
    await waitFor('the reply after resume', async () => ((await greeterReplies(harness, mention.id)) === 1 ? true : undefined), PROCESS_START_MS);
    expect(Object.keys((JSON.parse(readFileSync(file, 'utf8')) as { paused: object }).paused)).toEqual([]);
  });

  it('`warren pause` with Redis down and no daemon is kept, and the daemon applies it when it starts', async () => {
    redis = await startPrivateRedis();
    const r = redis;
    const agentsDir = makeAgentsDir({});
    await r.kill();
    const target = { hubUrl: 'http://127.0.0.1:9', redisUrl: r.url, prefix: `pause-${Date.now().toString(36)}`, agentsDir };
    const paused = await warrenCli(target, ['pause', 'greeter']);
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toContain('greeter paused');
    expect(paused.stderr).toMatch(/redis is unreachable: recorded in .*pauses\.json; the daemon applies it when it connects to Redis/);

    await r.start();
    h = await startHarness({ redisUrl: r.url, agentsDir });
    const status = JSON.parse((await warren(h, r, ['status', '--json'])).stdout) as StatusReport;
    expect(status.agents.find((a) => a.name === 'greeter')).toMatchObject({ paused: true, state: 'paused' });
  });
});
