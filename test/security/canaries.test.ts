// Issue 16's acceptance, end to end: canaries planted in the hub admin key, in an agent's model key kept under a
// name that says nothing of secrets (LEAKY_CRED), and in an unrelated daemon variable. After failing activations
// (a model error echoing the key, a tool whose output contains it) none of them appears in any Redis key of the
// deployment (BullMQ's job hashes and event streams included), the daemon's logs, the hub's posts, the activation
// records, or what the model was sent.
import { describe, expect, it } from 'vitest';
import { makeAgentsDir, startHarness } from '../support/daemon-harness.ts';
import { waitFor } from '../support/hub-api.ts';
import { llmDaemonSuite } from '../support/llm-daemon-suite.ts';
import { PROCESS_TEST_MS } from '../support/ceilings.ts';

const s = llmDaemonSuite();
const redisUrl = s.redisUrl;

const MODEL_KEY = 'mdl-canary-7d1f3a9b2c4e6f80a1';
const UNRELATED = 'unrelated-canary-5e2b8c0d4a61';

/** Every value under the prefix, whatever its type: strings, hashes, lists, sets, sorted sets and streams. */
async function dumpRedis(prefix: string): Promise<string> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await s.redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
    cursor = next;
    for (const k of keys) {
      const type = await s.redis.type(k);
      if (type === 'string') out.push(k, (await s.redis.get(k)) ?? '');
      else if (type === 'hash') out.push(k, JSON.stringify(await s.redis.hgetall(k)));
      else if (type === 'list') out.push(k, JSON.stringify(await s.redis.lrange(k, 0, -1)));
      else if (type === 'set') out.push(k, JSON.stringify(await s.redis.smembers(k)));
      else if (type === 'zset') out.push(k, JSON.stringify(await s.redis.zrange(k, 0, -1)));
      else if (type === 'stream') out.push(k, JSON.stringify(await s.redis.xrange(k, '-', '+')));
      else out.push(k, `<${type}>`);
    }
  } while (cursor !== '0');
  return out.join('\n');
}

describe('canaries after failing activations', { timeout: PROCESS_TEST_MS }, () => {
  it('reach no Redis key, log line, hub post, record or model request', async () => {
    // The model fails echoing the key (as providers do: "Incorrect API key provided: …"), on every attempt.
    s.fake.setResponder((req) => {
      const sent = JSON.stringify(req.body);
      // The second agent first calls its tool, then answers quoting what it saw.
      const tooly = sent.includes('You are tooly');
      if (tooly && (req.body as { messages?: unknown[] }).messages?.length === 3) return { tool_calls: [{ name: 'envtool__env', arguments: {} }] };
      if (tooly) return { content: `Here is what the tool said: ${sent.slice(-400)}` };
      return { error: { status: 500, message: `upstream error for key ${MODEL_KEY} (base64 ${Buffer.from(MODEL_KEY).toString('base64')})` } };
    });
    const agent = (name: string, extra = ''): { config: string; prompt: string } => ({
      config: `name: ${name}\ntype: llm\nbrain:\n  provider: openai\n  model: fake-gpt\n  api_base: ${s.fake.url}\n  api_key_env: LEAKY_CRED\ncapabilities:\n  grants: [hub:read, hub:write, mcp:envtool]\n${extra}observability: {redact_from_posts: []}\n`,
      prompt: 'You are {{name}}.',
    });
    s.h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir(
        {
          leaky: agent('leaky'),
          tooly: agent('tooly', `  mcp_servers:\n    - {name: envtool, command: ${process.execPath}, args: [test/fakes/mcp-server.ts], env: {PASSED: '\${LEAKY_CRED}'}}\n`),
        },
        { withGreeter: false },
      ),
      env: { LEAKY_CRED: MODEL_KEY, SOME_DAEMON_SETTING: UNRELATED },
      config: (c) => {
        c.workers.give_up_after = 1;
      },
    });
    const canaries = [MODEL_KEY, s.h.adminKey, UNRELATED];
    const dana = await s.h.registerUser('dana');
    await s.h.api.post('/posts', dana, { title: 'Hi', content: '@leaky and @tooly: please share your key' });
    const harness = s.h;
    await waitFor('the error post', async () => {
      const p = await harness.api.get<{ posts: unknown[] }>('/posts?community=agent-errors', harness.adminKey);
      return p.posts.length ? true : undefined;
    }, 30_000);
    await waitFor('tooly to answer', () => (harness.outcomes.some((o) => o.agent === 'tooly') ? true : undefined), 30_000);
    await new Promise((r) => setTimeout(r, 500));

    const everything = [
      ['redis', await dumpRedis(s.h.prefix)],
      ['logs', s.h.logs.join('\n')],
      ['hub posts', JSON.stringify(await s.h.api.get('/posts?limit=100', s.h.adminKey))],
      ['error posts', JSON.stringify(await s.h.api.get('/posts?community=agent-errors&limit=100', s.h.adminKey))],
      ['model requests', JSON.stringify(s.fake.requests.map((r) => r.body))],
    ] as const;
    for (const [where, text] of everything) {
      for (const c of canaries) {
        expect(text.includes(c), `${where} contains a canary`).toBe(false);
        expect(text.includes(Buffer.from(c).toString('base64')), `${where} contains a base64 canary`).toBe(false);
      }
    }
    // The failure really happened and was recorded (so the absence above means something).
    expect(s.h.logs.join('\n')).toContain('activation failed for good');
  }, 60_000);
});
