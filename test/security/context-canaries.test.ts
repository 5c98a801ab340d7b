// Issue 26, finding 6: secrets in a human's post reached the model provider in clear through the thread context
// (the hub_get_thread tool path redacted the same text). A human posts the admin key, another agent's hub key,
// another agent's model key, an AWS key id and a database URL with its password (and the admin key once more,
// disguised with zero-width spaces) on the hub, mentioning an LLM agent and a CLI agent. None of it may appear
// in any request the model server gets, nor in anything the CLI is given (argv, stdin, system prompt file).
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { startHub } from '../../local-hub/server.ts';
import { HubGateway } from '../../services/hub-gateway.ts';
import { REDACTED, Redactor } from '../../services/redact.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.ts';
import { FAKE_CLIS } from '../support/cli-agent.ts';
import { makeAgentsDir, startHarness, type Harness } from '../support/daemon-harness.ts';
import { hubCaller, waitFor } from '../support/hub-api.ts';

const redisUrl = inject('redisUrl');
let fake: FakeOpenAI;
let h: Harness | undefined;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await h?.stop();
  h = undefined;
  fake.reset();
});

const OTHER_MODEL_KEY = 'mdl-canary-3c9e1f7a5b2d8e40c6';
const AWS_KEY_ID = 'AKIAZ7CANARY4Q2W9XYZ';
const DB_PASSWORD = 'Pg-canary-pass-8c1f';
const DB_URL = `postgres://app:${DB_PASSWORD}@db.internal:5432/prod`;

/** Every file under `dir`, with its text. */
function filesUnder(dir: string): Array<[string, string]> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((p) => join(dir, p))
    .filter((p) => statSync(p).isFile())
    .map((p) => [p, readFileSync(p, 'utf8')]);
}

/** The text with zero-width spaces taken out (raw or JSON-escaped), so a disguised canary shows as itself. */
const visible = (text: string): string => text.replace(/\u200b|\\u200b/gi, '');

describe('canaries in a human\'s post', () => {
  it('reach no model request and nothing a CLI agent is given', async () => {
    fake.setResponder(() => ({ content: 'Thanks, noted.' }));
    const workspaces = mkdtempSync(join(tmpdir(), 'warren-ws-'));
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir(
        {
          reader: {
            config: `name: reader\ntype: llm\nbrain: {provider: openai, model: fake-gpt, api_base: "${fake.url}", api_key_env: READER_CRED}\ncapabilities: {grants: [hub:read, hub:write]}\n`,
            prompt: 'You are {{name}}.',
          },
          coder: {
            config: `name: coder\ntype: claude-code\nbrain: {provider: anthropic, model: claude-sonnet-4-5, api_base: "http://127.0.0.1:9", api_key_env: CODER_KEY}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {max_duration: 60s}\n`,
            prompt: 'You are {{name}}.',
          },
          // Never activated: it is here so the daemon holds its model key, under a name that says nothing of secrets.
          other: { config: `name: other\ntype: llm\nbrain: {provider: openai, model: fake-gpt, api_base: "${fake.url}", api_key_env: OTHER_CRED}\ncapabilities: {grants: [hub:read]}\n`, prompt: 'You are {{name}}.' },
        },
        { withGreeter: false },
      ),
      env: { READER_CRED: 'reader-own-model-key-1', CODER_KEY: 'sk-ant-coder-own-key', OTHER_CRED: OTHER_MODEL_KEY, PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspaces },
      config: (c) => {
        c.executors.cli.binaries['claude-code'] = join(FAKE_CLIS, 'claude-record-input.js');
        c.executors.cli.workspaces = workspaces;
        c.executors.cli.run_as = 'none';
      },
      hubMcp: null,
    });
    const harness = h;
    const dana = await h.registerUser('dana');
    const otherHubKey = (await h.api.post<{ api_key: string }>('/agents/register', h.adminKey, { name: 'bystander' })).api_key;
    const canaries = { admin: h.adminKey, otherHubKey, otherModelKey: OTHER_MODEL_KEY, awsKeyId: AWS_KEY_ID, dbPassword: DB_PASSWORD };
    const zeroWidthAdmin = [...h.adminKey].join('\u200b');
    await h.api.post('/posts', dana, {
      title: 'Keys for the migration',
      content: `@reader @coder PLEASE-HELP with the migration. Admin key ${h.adminKey}, the bystander's key ${otherHubKey}, the other model key ${OTHER_MODEL_KEY}, AWS ${AWS_KEY_ID}, database ${DB_URL}. Once more: ${zeroWidthAdmin}.`,
    });
    await waitFor('both agents to finish', () => (['reader', 'coder'].every((a) => harness.outcomes.some((o) => o.agent === a)) ? true : undefined), 60_000);

    // The LLM agent's model was sent the thread (so the absence below means something), with the secrets hidden.
    const requests = fake.requests.map((r) => visible(r.rawBody)).join('\n');
    expect(requests).toContain('PLEASE-HELP');
    expect(requests).toContain('[REDACTED]');
    expect(requests).toContain('db.internal:5432/prod');
    // The CLI agent was given the thread too.
    const given = filesUnder(workspaces).filter(([p]) => p.endsWith('received.json'));
    expect(given).toHaveLength(1);
    const cli = visible(given[0]![1]);
    expect(cli).toContain('PLEASE-HELP');

    for (const [where, text] of [['model requests', requests], ['CLI input', cli]] as const) {
      for (const [name, value] of Object.entries(canaries)) expect(text.includes(value), `${where} contain the ${name}`).toBe(false);
    }
  }, 120_000);

  it('reach no CLI agent that reads the thread through the hub gateway (as hub_get_thread redacts for LLM agents)', async () => {
    const hub = await startHub({ dbPath: ':memory:', port: 0 });
    const redactor = new Redactor([hub.adminKey, OTHER_MODEL_KEY]);
    const gateway = await HubGateway.start({ hubUrl: hub.url, adminKey: hub.adminKey, redact: (text) => redactor.redact(text), logger: pino({ level: 'silent' }) });
    try {
      const api = hubCaller(hub.url);
      await api.post('/agents/register', hub.adminKey, { name: 'coder' });
      const dana = (await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'dana', type: 'human' })).api_key;
      const post = await api.post<{ id: string }>('/posts', dana, { title: 'keys', content: `@coder admin ${hub.adminKey}, model ${OTHER_MODEL_KEY}, AWS ${AWS_KEY_ID}, db ${DB_URL}` });
      const t = gateway.issue('coder', ['hub:read'], 60_000);
      const read = async (path: string): Promise<string> => {
        const res = await fetch(`${gateway.url}${path}`, { headers: { authorization: `Bearer ${t.token}` } });
        expect(res.status).toBe(200);
        const text = await res.text();
        JSON.parse(text); // still JSON
        return text;
      };
      const seen = [await read(`/api/v1/posts/${post.id}?include_comments=true`), await read('/api/v1/notifications?agent_id=coder')].join('\n');
      expect(seen).toContain(REDACTED);
      expect(seen).toContain('db.internal:5432/prod');
      for (const value of [hub.adminKey, OTHER_MODEL_KEY, AWS_KEY_ID, DB_PASSWORD]) expect(seen).not.toContain(value);
    } finally {
      await gateway.close();
      await hub.close();
    }
  });
});
