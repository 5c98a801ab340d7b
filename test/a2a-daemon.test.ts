// Remote delegation through the real daemon (issue 29 item 1): a mention makes a warren agent delegate to an A2A
// agent built with @a2a-js/sdk on loopback and the answer reaches the hub reply (blocking and streaming); an
// INPUT_REQUIRED question is answered by the model's follow-up call on the same remote task; the run's deadline
// and an abort (the daemon stopping past its grace) send CancelTask; a card that cannot be read is a warning at start, not a stop; and a daemon
// SIGKILLed mid-delegation leaves no second remote task: the retried activation reattaches to the first.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import type { ActivationEvent } from '../agent-loop/events.ts';
import { llmDaemonSuite } from './support/llm-daemon-suite.ts';
import { startA2aPeer, type A2aPeer, type PeerOptions } from './support/a2a-peer.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { hubCaller, waitFor, type WirePost } from './support/hub-api.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { startPrivateRedis } from './support/redis-server.ts';
import { startWarren, type WarrenProcess } from './support/warren-process.ts';

const suite = llmDaemonSuite({ redis: false });
const redisUrl = suite.redisUrl;

async function peer(opts: PeerOptions): Promise<A2aPeer> {
  const p = await startA2aPeer(opts);
  suite.defer(() => p.close());
  return p;
}

async function harness(config: string, env: Record<string, string> = {}): Promise<Harness> {
  const h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ relay: { config, prompt: 'You are {{name}}.' } }, { withGreeter: false }), env: { RELAY_API_KEY: 'sk-relay', ...env } });
  suite.defer(() => h.stop());
  return h;
}

const relay = (delegate: string, extra = ''): string => `name: relay
type: llm
brain: {provider: openai, model: fake-gpt, api_base: ${suite.fake.url}, api_key_env: RELAY_API_KEY}
capabilities:
  grants: [hub:read, hub:write, a2a:echo]
  delegates:
    - ${delegate}
behavior: {limits: {min_interval_seconds: 0}${extra}}
`;

/** The model: it hands the thread's question to echo, then says what echo answered. */
function relayModel(): void {
  suite.fake.setResponder((req) => {
    const messages = (req.body as { messages: Array<{ role: string; content: string }> }).messages;
    const answer = messages.findLast((m) => m.role === 'tool');
    if (answer) return { content: `echo says: ${answer.content}` };
    return { tool_calls: [{ name: 'delegate_to_echo', arguments: { task: 'what is the capital of France?' } }] };
  });
}

async function replyOf(h: Harness, postId: string, key: string): Promise<string | undefined> {
  const p = await h.api.get<WirePost>(`/posts/${postId}?include_comments=true`, key);
  return p.comments?.find((c) => c.author.name === 'relay')?.content;
}

describe('remote delegation through the daemon', () => {
  it.each([
    { streaming: true, sent: 'SendStreamingMessage' },
    { streaming: false, sent: 'SendMessage' },
  ])('a mention → delegation to the A2A agent → its answer in the hub reply (streaming: $streaming)', async ({ streaming, sent }) => {
    const p = await peer({ streaming, behaviour: (t) => (t.working(), t.complete(`Paris (you asked: ${t.text})`)) });
    relayModel();
    const h = await harness(relay(`{name: echo, card_url: "${p.url}", streaming: ${streaming}}`));
    const me = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', me, { title: 'Geography', content: '@relay what is the capital of France?' });
    const reply = await waitFor('the relay reply', () => replyOf(h, post.id, me), 30_000);
    expect(reply).toBe('echo says: Paris (you asked: what is the capital of France?)');
    expect(p.calls.filter((c) => c.startsWith('Send'))).toEqual([sent]);
    const events: readonly ActivationEvent[] = (await waitFor('the activation outcome', () => h.outcomes.find((o) => o.agent === 'relay'))).events;
    expect(events.map((e) => e.type).filter((t) => ['user_message', 'delegation_request', 'delegation_response', 'agent_response'].includes(t))).toEqual(['user_message', 'delegation_request', 'delegation_response', 'agent_response']);
    expect(events.find((e) => e.type === 'progress')).toMatchObject({ action: 'delegate', target: 'echo' });
  });

  it("the run's deadline sends CancelTask: the remote executor observes it", async () => {
    const p = await peer({ behaviour: (t) => (t.working(), t.cancelled) });
    relayModel();
    const h = await harness(relay(`{name: echo, card_url: "${p.url}"}`, ', max_duration: 4s'));
    const me = await h.registerUser('alice');
    await h.api.post<{ id: string }>('/posts', me, { title: 'Slow', content: '@relay take your time' });
    await p.cancelCount(1, 30_000);
    expect(p.cancels).toEqual([(await p.turn(1)).taskId]);
  });

  it('INPUT_REQUIRED through the daemon: the question reaches the model, its follow-up call with the ids continues the same remote task, the answer reaches the reply', async () => {
    const p = await peer({ behaviour: (t) => (t.followUp ? t.complete(`Sunny in ${t.text}`) : t.ask('Which city?')) });
    suite.fake.setResponder((req) => {
      const tools = (req.body as { messages: Array<{ role: string; content: string }> }).messages.filter((m) => m.role === 'tool');
      if (tools.length === 0) return { tool_calls: [{ name: 'delegate_to_echo', arguments: { task: 'weather please' } }] };
      const last = tools.at(-1)!.content;
      if (tools.length === 1) {
        // The question and the ids to answer it with, as the tool result tells the model.
        const taskId = /task_id "([^"]+)"/.exec(last)?.[1];
        const contextId = /context_id "([^"]+)"/.exec(last)?.[1];
        if (!last.includes('Which city?') || !taskId || !contextId) return { content: `no question came back: ${last}` };
        return { tool_calls: [{ name: 'delegate_to_echo', arguments: { task: 'Paris', task_id: taskId, context_id: contextId } }] };
      }
      return { content: `Weather: ${last}` };
    });
    const h = await harness(relay(`{name: echo, card_url: "${p.url}"}`));
    const me = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', me, { title: 'Weather', content: '@relay what is the weather?' });
    expect(await waitFor('the relay reply', () => replyOf(h, post.id, me), 30_000)).toBe('Weather: Sunny in Paris');
    expect(p.turns).toHaveLength(2);
    expect(p.turns[1]).toMatchObject({ followUp: true, taskId: p.turns[0]!.taskId, contextId: p.turns[0]!.contextId, text: 'Paris' });
  });

  it('an activation aborted mid-delegation (the daemon stopping past its grace) sends CancelTask: the remote executor observes it', async () => {
    const p = await peer({ behaviour: (t) => (t.working(), t.cancelled) });
    relayModel();
    const h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ relay: { config: relay(`{name: echo, card_url: "${p.url}"}`), prompt: 'You are {{name}}.' } }, { withGreeter: false }),
      env: { RELAY_API_KEY: 'sk-relay' },
      config: (c) => {
        c.workers.shutdown_grace = 500;
      },
    });
    let stopped = false;
    suite.defer(() => (stopped ? Promise.resolve() : h.stop()));
    const me = await h.registerUser('alice');
    await h.api.post<{ id: string }>('/posts', me, { title: 'Slow', content: '@relay take your time' });
    const turn = await p.turn(1);
    expect(p.cancels).toEqual([]);
    stopped = true;
    await h.stop();
    await p.cancelCount(1, 30_000);
    expect(p.cancels).toEqual([turn.taskId]);
  });

  it('a card that cannot be read is a warning at start naming the agent, the delegate and the cause; the daemon runs on', async () => {
    const gone = await startA2aPeer({ behaviour: () => undefined });
    const url = gone.url;
    await gone.close();
    const h = await harness(relay(`{name: echo, card_url: "${url}"}`));
    const line = await waitFor('the warning', () => h.logs.find((l) => l.includes('remote delegate echo of relay cannot be reached')));
    expect(JSON.parse(line)).toMatchObject({ level: 40, agent: 'relay', delegate: 'echo' });
    expect(line).toContain(`agent card ${url}.well-known/agent-card.json: unreachable (ECONNREFUSED)`);
  });
});

describe('remote delegation across a SIGKILL', { timeout: PROCESS_TEST_MS }, () => {
  it('the daemon is killed mid-delegation: the retried activation reattaches to the remote task, no second one, one reply', async () => {
    const redis = await startPrivateRedis();
    suite.defer(() => redis.stop());
    const hub: RunningHub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
    suite.defer(() => hub.close());
    const api = hubCaller(hub.url);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const p = await peer({ behaviour: async (t) => (t.working(), await released, t.complete(`answer to "${t.text}"`)) });
    const dir = makeAgentsDir(
      {
        relay: {
          config: `name: relay
type: llm
brain:
  provider: scripted
  model: m
  responses:
    - {tool_calls: [{name: delegate_to_echo, arguments: {task: relay this}}]}
    - Relayed.
capabilities:
  grants: [hub:read, hub:write, a2a:echo]
  delegates:
    - {name: echo, card_url: "${p.url}"}
behavior: {limits: {min_interval_seconds: 0}}
`,
          prompt: 'You are {{name}}.',
        },
      },
      { withGreeter: false },
    );
    const prefix = `a2a-${randomUUID().slice(0, 8)}`;
    const daemon = (): WarrenProcess => {
      const d = startWarren({ hubUrl: hub.url, adminKey: hub.adminKey, redisUrl: redis.url, prefix, agentsDir: dir });
      suite.defer(async () => {
        d.kill('SIGKILL');
        await d.exited;
      });
      return d;
    };
    const first = daemon();
    await first.waitForLine(/warren is running/, PROCESS_START_MS);
    const { api_key: me } = await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'dana', type: 'human' });
    const post = await api.post<{ id: string }>('/posts', me, { title: 'Relay', content: '@relay pass it on' });
    await p.turn(1, 30_000);
    first.kill('SIGKILL');
    await first.exited;

    const second = daemon();
    // The retried activation asks the remote side for the task its first attempt started, and follows it.
    await waitFor('the retry to reattach', () => (p.calls.includes('SubscribeToTask') ? true : undefined), PROCESS_START_MS, 50);
    release();
    const replies = async (): Promise<string[]> => ((await api.get<WirePost>(`/posts/${post.id}?include_comments=true`, me)).comments ?? []).filter((c) => c.author.name === 'relay').map((c) => c.content);
    await waitFor('the reply', async () => ((await replies()).length ? true : undefined), 30_000, 100);
    await second.waitForLine(/"msg":"replied"/, 10_000);
    expect(await replies()).toEqual(['Relayed.']);
    expect(p.turns).toHaveLength(1);
    expect(p.calls.filter((c) => c.startsWith('Send'))).toEqual(['SendStreamingMessage']);
    expect(p.cancels).toEqual([]);
  });
});
