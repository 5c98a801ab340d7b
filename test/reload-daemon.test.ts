// Reloading a real `warren start` process: a new agent whose key is a new file in `secrets.dir` runs after an edit
// and `warren reload`, without a restart (the secret files are read again at each reload).
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { startHub } from '../local-hub/server.ts';
import { startFakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller, waitFor, type WirePost } from './support/hub-api.ts';
import { startWarren } from './support/warren-process.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** `warren <args>` as its own process, without blocking this one (the hub and the fake model run here). */
async function warrenCli(args: string[]): Promise<{ stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [resolve('bin/warren.js'), ...args], { encoding: 'utf8', env: { ...process.env, REDIS_URL: '' }, timeout: PROCESS_START_MS });
}

const newcomer = (apiBase: string): string => `name: newcomer
type: llm
brain:
  provider: openai
  model: fake-gpt
  api_base: ${apiBase}
  api_key_env: NEWCOMER_KEY
capabilities:
  grants: [hub:read, hub:write]
`;

describe('a new agent with a new key, through a running daemon', { timeout: PROCESS_TEST_MS }, () => {
  it('runs after adding its folder and its secret file and `warren reload`, without a restart', async () => {
    const hub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
    cleanups.push(() => hub.close());
    const fake = await startFakeOpenAI();
    cleanups.push(() => fake.close());
    const secrets = join(mkdtempSync(join(tmpdir(), 'warren-secrets-')), 'secrets');
    mkdirSync(secrets, { mode: 0o700 });
    const agentsDir = makeAgentsDir({}, { withGreeter: true });
    const daemon = startWarren({
      hubUrl: hub.url,
      adminKey: hub.adminKey,
      redisUrl: inject('redisUrl'),
      prefix: `reload-${randomUUID().slice(0, 8)}`,
      agentsDir,
      // No watching: the reload below is the only way the daemon learns of the new agent.
      store: 'watch: false',
      sections: [`secrets: {dir: "${secrets}"}`, 'executors: {cli: {run_as: none}}'],
    });
    cleanups.push(async () => {
      daemon.kill('SIGKILL');
      await daemon.exited;
    });
    await daemon.waitForLine(/warren is running/);

    // No key shape the redactor knows by itself: only learning the new file's value hides it.
    const key = `pumpkin-${randomBytes(12).toString('hex')}`;
    writeFileSync(join(secrets, 'NEWCOMER_KEY'), `${key}\n`, { mode: 0o600 });
    mkdirSync(join(agentsDir, 'newcomer'));
    writeFileSync(join(agentsDir, 'newcomer', 'config.yaml'), newcomer(fake.url));
    writeFileSync(join(agentsDir, 'newcomer', 'system-prompt.md'), 'You are {{name}}.');
    const sent = await warrenCli(['reload', '--config', daemon.config]);
    expect(sent.stdout).toContain('reload sent to 1 daemon');

    const api = hubCaller(hub.url);
    await waitFor('newcomer registered on the hub', () => api.get('/agents/newcomer', hub.adminKey).then(() => true, () => undefined), PROCESS_START_MS);
    fake.enqueue({ content: `Hello from the newcomer. My key is ${key}.` });
    const user = (await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'alice', type: 'human' })).api_key;
    const post = await api.post<{ id: string }>('/posts', user, { title: 'Hi', content: '@newcomer are you there?' });
    const reply = await waitFor(
      'newcomer reply',
      async () => (await api.get<WirePost>(`/posts/${post.id}?include_comments=true`, user)).comments?.find((c) => c.author.name === 'newcomer')?.content,
      PROCESS_START_MS,
    );
    // The redaction learned the new secret at the reload: the model's echo of it is not posted.
    expect(reply).toBe('Hello from the newcomer. My key is [REDACTED].');
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual([`Bearer ${key}`]);
    // The same process all along, and the key never in its log.
    expect(daemon.child.exitCode).toBeNull();
    expect(daemon.lines.join('\n')).not.toContain(key);
  });
});
