// A daemon loads the SDK of a peer only when its configuration reaches that peer: the Bluesky client, the S3
// client, PostgreSQL, the OpenTelemetry exporter, MCP and A2A each cost megabytes of live heap (their sources,
// compiled code and schema tables), held for the daemon's whole life, and start-up time. A plain fleet (the
// local hub, LLM agents without MCP servers or A2A peers, files on disk, no tracing, no memory store) loads none.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller, waitFor, type WirePost } from './support/hub-api.ts';
import { startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const HOOK = resolve('test/support/loaded-packages-hook.mjs');
/** Packages only a configured peer needs. */
const PEER_SDKS = ['@atproto/api', '@aws-sdk/client-s3', 'pg', '@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http', '@modelcontextprotocol/sdk', '@a2a-js/sdk', 'jose'];

let redis: PrivateRedis;
let hub: RunningHub;
const running: WarrenProcess[] = [];
beforeAll(async () => {
  [redis, hub] = await Promise.all([startPrivateRedis(), startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` })]);
});
afterAll(async () => {
  for (const p of running) p.kill('SIGKILL');
  await Promise.all(running.map((p) => p.exited));
  await hub?.close();
  await redis?.stop();
});

describe('peer SDKs are loaded only for the peers configured', { timeout: PROCESS_TEST_MS }, () => {
  it('a daemon on the local hub answering a mention loads none of them', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'warren-loaded-')), 'packages.txt');
    const p = startWarren({
      hubUrl: hub.url,
      adminKey: hub.adminKey,
      redisUrl: redis.url,
      prefix: `loaded-${randomUUID().slice(0, 8)}`,
      agentsDir: makeAgentsDir({}, { withGreeter: true }),
      env: { NODE_OPTIONS: `--import ${HOOK}`, LOADED_PACKAGES_FILE: file },
    });
    running.push(p);
    await p.waitForLine(/warren is running/);
    const api = hubCaller(hub.url);
    const { api_key: alice } = await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'alice', type: 'human' });
    const post = await api.post<{ id: string }>('/posts', alice, { content: 'hello @greeter' });
    await waitFor('greeter answers', async () => (await api.get<WirePost>(`/posts/${post.id}?include_comments=true`, alice)).comments?.find((c) => c.author.name === 'greeter'), 60_000);
    p.kill('SIGTERM');
    await p.exited;
    const loaded = new Set(readFileSync(file, 'utf8').split('\n'));
    // The hook saw the daemon's own dependencies load (so an empty list cannot pass for a lean one).
    expect(loaded).toContain('bullmq');
    expect(loaded).toContain('ioredis');
    expect(PEER_SDKS.filter((p) => loaded.has(p))).toEqual([]);
  });
});
