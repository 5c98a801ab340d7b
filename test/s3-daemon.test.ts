// The daemon on an S3 store (s3rver on loopback): agents come from the bucket, and a changed object reaches
// the next activation through the listing poll, without a restart.
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { startS3, TEST_CREDENTIALS, type TestS3 } from './support/s3-server.ts';

const redisUrl = inject('redisUrl');
let s3: TestS3;
let h: Harness | undefined;
beforeAll(async () => {
  s3 = await startS3();
});
afterEach(async () => {
  await h?.stop();
  h = undefined;
});
afterAll(async () => {
  await s3.close();
});

const echo = (reply: string): string => `name: echo\ntype: llm\nbrain: {provider: scripted, model: m, responses: [${JSON.stringify(reply)}]}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {limits: {min_interval_seconds: 0}}\ncache_ttl: 30\n`;

describe('daemon on an S3 store', () => {
  it('runs the agents of the bucket and picks up a changed config on the next activation', async () => {
    await s3.put('live/agents/echo/config.yaml', echo('from the bucket'));
    await s3.put('live/agents/echo/system-prompt.md', 'You are {{name}}.');
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({}, { withGreeter: false }), // unused: the store is the bucket
      env: { STORE_ID: TEST_CREDENTIALS.accessKeyId, STORE_SECRET: TEST_CREDENTIALS.secretAccessKey },
      config: (c) => {
        c.store = { ...c.store, type: 's3', url: `s3://${s3.bucket}/live`, endpoint: s3.endpoint, region: 'us-east-1', access_key_id_env: 'STORE_ID', secret_access_key_env: 'STORE_SECRET', poll_interval: 100 };
      },
    });
    const harness = h;
    expect([...h.daemon.registry.runnable()]).toEqual(['echo']);
    const key = await h.registerUser('alice');
    const ask = async (text: string): Promise<string> => {
      const post = await harness.api.post<{ id: string }>('/posts', key, { content: `@echo ${text}` });
      return waitFor('echo reply', async () => {
        const p = await harness.api.get<WirePost>(`/posts/${post.id}?include_comments=true`, key);
        return p.comments?.find((c) => c.author.name === 'echo')?.content;
      });
    };
    expect(await ask('one')).toBe('from the bucket');

    await s3.put('live/agents/echo/config.yaml', echo('changed in the bucket'));
    await waitFor('reload from the bucket', () => (harness.daemon.registry.get('echo')?.config.brain.responses?.[0] === 'changed in the bucket' ? true : undefined), 5_000);
    expect(await ask('two')).toBe('changed in the bucket');
  });
});
