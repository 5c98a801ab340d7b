// What a failure and a held mention tell the people concerned (issue 27.7, 27.8), end to end through the public
// surfaces: the error post and the could-not-answer line on the hub, `warren status` and `warren logs` (the real CLI),
// the watch page's fleet JSON (real HTTP); a real daemon, the real `openai` SDK against the fake server, private Redis.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ActivationRecord } from '../activation/activation-records.ts';
import { ActivationRecords } from '../activation/activation-records.ts';
import { fleetSource } from '../daemon/ops/fleet-source.ts';
import type { StatusReport } from '../daemon/ops/status.ts';
import type { FleetAgent } from '../local-hub/watch/fleet.ts';
import { startTestHub, watchSessionCookie } from '../local-hub/testing.ts';
import { AgentStateStore } from '../scheduler/agent-state.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { PROCESS_START_MS, PROCESS_TEST_MS } from './support/ceilings.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { warrenCli } from './support/warren-cli.ts';
import { llmDaemonSuite } from './support/llm-daemon-suite.ts';

const s = llmDaemonSuite();
const redisUrl = s.redisUrl;

/** scout on the fake OpenAI server; `behavior`: its behavior block's lines. */
const scout = (behavior = ''): string => `name: scout
type: llm
brain:
  provider: openai
  model: gpt-4o-mini-typo
  api_base: ${s.fake.url}
  api_key_env: SCOUT_API_KEY
capabilities:
  grants: [hub:read, hub:write]
behavior:
  limits: {min_interval_seconds: 0}
${behavior}`;

const UNKNOWN_MODEL = { error: { status: 404, message: "The model 'gpt-4o-mini-typo' does not exist or you do not have access to it.", code: 'model_not_found' } };
const LINE = 'I could not answer: my model endpoint refused the request; the operator has been told.';

function cli(harness: Harness, args: string[]): ReturnType<typeof warrenCli> {
  return warrenCli({ hubUrl: harness.hub.url, redisUrl, prefix: harness.prefix, agentsDir: harness.agentsDir }, args);
}

async function commentsBy(harness: Harness, postId: string, author: string): Promise<string[]> {
  const p = await harness.api.get<WirePost>(`/posts/${postId}?include_comments=true`, harness.adminKey);
  return (p.comments ?? []).filter((c) => c.author.name === author).map((c) => c.content);
}

async function errorPosts(harness: Harness): Promise<Array<{ id: string; title: string; content: string }>> {
  return (await harness.api.get<{ posts: Array<{ id: string; title: string; content: string }> }>('/posts?community=agent-errors&limit=50', harness.adminKey)).posts;
}

async function records(harness: Harness, agent: string): Promise<ActivationRecord[]> {
  return new ActivationRecords(s.redis, harness.prefix).recent({ agent, limit: 100 });
}

async function startScout(behavior = ''): Promise<Harness> {
  s.fake.setResponder(() => UNKNOWN_MODEL);
  return startHarness({ redisUrl, agentsDir: makeAgentsDir({ scout: { config: scout(behavior), prompt: 'You are {{name}}.' } }, { withGreeter: false }), env: { SCOUT_API_KEY: 'sk-scout-key-123456' } });
}

describe('a provider refusal', { timeout: PROCESS_TEST_MS }, () => {
  it('unknown model: the post says what happened, what to do, until when and what waits; the thread gets one line; status shows the wait', async () => {
    s.h = await startScout();
    const harness = s.h;
    const dana = await s.h.registerUser('dana');
    const mention = await s.h.api.post<{ id: string }>('/posts', dana, { title: 'Hi', content: '@scout which compost?' });
    const [post] = await waitFor('the error post', async () => {
      const p = await errorPosts(harness);
      return p.length ? p : undefined;
    }, PROCESS_START_MS);
    expect(post!.content).toContain('## What happened\n- The model endpoint does not know the model the agent asks for (brain.model), or this key may not use it.');
    expect(post!.content).toContain('## What to do\n- Fix brain.model in agents/scout/config.yaml to a model the endpoint lists (GET <api_base>/models), then `warren resume scout`.');
    expect(post!.content).toMatch(/## Waiting\n- Backoff until \d{4}-\d\d-\d\d \d\d:\d\dZ \(1 failure in a row\); the agent runs nothing before then\.\n- Mentions waiting: 1 unread notification; they run after the backoff\./);
    expect(post!.content).not.toContain('Unclear from the error alone');

    // The person who mentioned scout reads one short line, nothing of the error.
    const lines = await waitFor('the could-not-answer line', async () => {
      const c = await commentsBy(harness, mention.id, 'scout');
      return c.length ? c : undefined;
    });
    expect(lines).toEqual([LINE]);

    // `warren status`: the backoff's end, the mention waiting, and what ends the wait.
    const status = await waitFor('the held mention in status', async () => {
      const report = JSON.parse((await cli(harness, ['status', '--json'])).stdout) as StatusReport;
      const s = report.agents.find((a) => a.name === 'scout');
      return s?.held ? s : undefined;
    }, PROCESS_START_MS);
    expect(status).toMatchObject({ state: 'backoff', waiting_for: 'backoff', held: { reason: 'backoff', waiting: 1 } });
    expect(status.held!.runs_at).toBe(status.next_eligible_at);
    expect((await cli(harness, ['status'])).stdout).toMatch(/scout: 1 mention held since \d\d:\d\dZ, failure backoff: run at \d{4}-\d\d-\d\d \d\d:\d\dZ \(or now with `warren resume scout`\)/);

    // Resumed, it fails again on the same notification: the thread still has one line (once per notification).
    expect((await cli(harness, ['resume', 'scout'])).stdout).toContain('scout resumed');
    await waitFor('the second failure', async () => ((await records(harness, 'scout')).filter((r) => r.outcome === 'terminal_failure').length === 2 ? true : undefined), PROCESS_START_MS);
    expect(await commentsBy(harness, mention.id, 'scout')).toEqual([LINE]);
  });

  it('behavior.reply_on_failure: false leaves the thread alone', async () => {
    s.h = await startScout('  reply_on_failure: false\n');
    const harness = s.h;
    const dana = await s.h.registerUser('dana');
    const mention = await s.h.api.post<{ id: string }>('/posts', dana, { title: 'Hi', content: '@scout hello?' });
    await waitFor('the error post', async () => ((await errorPosts(harness)).length ? true : undefined), PROCESS_START_MS);
    await waitFor('the failure record', async () => ((await records(harness, 'scout')).some((r) => r.outcome === 'terminal_failure') ? true : undefined));
    expect(await commentsBy(harness, mention.id, 'scout')).toEqual([]);
  });
});

describe('held mentions', { timeout: PROCESS_TEST_MS }, () => {
  it('at budget critical a mention is held and says so in status, logs and the watch page, once', async () => {
    s.h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({}), hub: { budget: { defaultDailyLimitUsd: 10, defaultMonthlyLimitUsd: 1_000 } }, config: (c) => (c.scheduler.budget_ttl = 50) });
    const harness = s.h;
    await s.h.api.post('/system/consumption', s.h.adminKey, { agent_id: 'greeter', tokens_input: 1, tokens_output: 1, cost_usd: 10 });
    const dana = await s.h.registerUser('dana');
    const mention = await s.h.api.post<{ id: string }>('/posts', dana, { content: '@greeter hello?' });
    await waitFor('the mention held', () => (harness.logs.some((l) => l.includes('mentions held: budget critical')) ? true : undefined), PROCESS_START_MS);

    const report = JSON.parse((await cli(harness, ['status', '--json'])).stdout) as StatusReport;
    expect(report.agents.find((a) => a.name === 'greeter')?.held).toMatchObject({ reason: 'budget', waiting: 1, runs_at: null });
    const logs = (await cli(harness, ['logs', '--json', '--agent', 'greeter'])).stdout.trim().split('\n').map((l) => JSON.parse(l) as ActivationRecord);
    expect(logs.filter((r) => r.reason === 'held: budget')).toHaveLength(1); // once, not every poll
    expect((await cli(harness, ['logs', '--agent', 'greeter'])).stdout).toMatch(/greeter notification skipped \(held: budget\) .* — 1 mention waiting; budget critical: run when the hub's budget allows again/);

    // A second mention while held: one more line, with both waiting.
    await s.h.api.post('/posts', dana, { content: '@greeter anyone?' });
    await waitFor('the second mention held', async () => ((await new ActivationRecords(s.redis, harness.prefix).recentHeld({ agent: 'greeter' })).some((r) => r.detail?.startsWith('2 mentions waiting')) ? true : undefined), PROCESS_START_MS);
    // Not an activation: the agent's records (its last outcome in `warren status`) do not hold them. They hold the one
    // run before the first hold: with no budget reading yet, the intake left the budget to the run, which read it
    // with its inbox and was skipped (docs/scheduling.md "Budget gates").
    expect((await records(harness, 'greeter')).map((r) => `${r.outcome} ${r.reason}`)).toEqual(['skipped budget_critical']);

    // The watch page's fleet JSON, served over HTTP from the same reading.
    const defs = (await new LocalFolderStore(join(harness.agentsDir, '..')).load()).agents;
    const watch = await startTestHub({ fleet: fleetSource({ sources: { redis: s.redis, prefix: harness.prefix, minStalenessMs: 60_000 }, definitions: () => defs, state: new AgentStateStore(s.redis, harness.prefix) }) });
    try {
      // Read as the page reads it: with the session the operator link gives.
      const fleet = (await (await fetch(`${watch.hub.url}/watch/api/fleet`, { headers: { cookie: await watchSessionCookie(watch.hub.watchUrl) } })).json()) as { agents: FleetAgent[] };
      const held = fleet.agents.find((a) => a.name === 'greeter')?.held;
      expect(held).toHaveLength(1);
      expect(held![0]!.reason).toMatch(/^budget critical: run when the hub's budget allows again/);
      expect(held![0]!.runs_at).toBeNull();
    } finally {
      await watch.close();
    }
    expect(await commentsBy(harness, mention.id, 'greeter')).toEqual([]);
  });

  it('the second answer of a conversation is not held back by min_interval_seconds (default 60)', async () => {
    const chatty = `name: chatty\ntype: llm\nbrain: {provider: scripted, model: m, responses: ["Sure."]}\ncapabilities: {grants: [hub:read, hub:write]}\n`;
    s.h = await startHarness({ redisUrl, agentsDir: makeAgentsDir({ chatty: { config: chatty, prompt: 'You are chatty.' } }, { withGreeter: false }) });
    const harness = s.h;
    const dana = await s.h.registerUser('dana');
    const post = await s.h.api.post<{ id: string }>('/posts', dana, { content: '@chatty first question' });
    await waitFor('the first answer', async () => ((await commentsBy(harness, post.id, 'chatty')).length === 1 ? true : undefined), PROCESS_START_MS);
    await s.h.api.post(`/posts/${post.id}/comments`, dana, { content: '@chatty and a second one' });
    await waitFor('the second answer', async () => ((await commentsBy(harness, post.id, 'chatty')).length === 2 ? true : undefined), PROCESS_START_MS);
    // Answered at the first attempt: no min_interval refusal sent it back to the queue. The record is written when
    // the activation ends, after its comment is on the hub: waited for, not read at once.
    const answered = await waitFor('both records', async () => {
      const done = (await records(harness, 'chatty')).filter((r) => r.outcome === 'answered');
      return done.length === 2 ? done : undefined;
    }, PROCESS_START_MS);
    expect(answered.map((r) => r.attempt)).toEqual([1, 1]);
    expect(harness.logs.join('\n')).not.toContain('min_interval_seconds');
  });
});
