// What runs agents (services/runtime.ts) and the one turn (activation/run-turn.ts): the executors the daemon and
// `warren run` share, and the context pieces every kind of activation gets, delegates included. Real local hub,
// real OpenAI-compatible HTTP.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventLog } from '../agent-loop/events.ts';
import { runTurn } from '../activation/run-turn.ts';
import { buildExecutors, contextSources } from '../services/runtime.ts';
import { WarrenConfigSchema } from '../services/config.ts';
import { Redactor } from '../services/redact.ts';
import { HubClient } from '../hub-client/client.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller } from './support/hub-api.ts';

let hub: RunningHub;
let openai: FakeOpenAI;
beforeAll(async () => {
  hub = await startHub({ dbPath: ':memory:', port: 0 });
  for (const name of ['boss', 'helper']) await hubCaller(hub.url).post('/agents/register', hub.adminKey, { name });
  openai = await startFakeOpenAI({ defaultReply: 'helper here' });
});
afterAll(async () => {
  await hub.close();
  await openai.close();
});

async function load(): Promise<AgentDefinition[]> {
  const dir = makeAgentsDir(
    {
      boss: {
        config: `name: boss\ntype: llm\nbrain:\n  provider: scripted\n  model: scripted-boss\n  responses:\n    - tool_calls: [{name: delegate_to_helper, arguments: {task: "look up the release notes"}}]\n    - "done"\ncapabilities:\n  grants: [hub:read]\n  delegates: [helper]\n`,
        prompt: 'You are the boss.',
      },
      helper: {
        config: `name: helper\ntype: llm\nbrain:\n  provider: openai\n  model: fake-gpt\n  api_base: ${openai.url}\n  api_key_env: HELPER_KEY\ncapabilities:\n  grants: [hub:read, hub:write]\nbehavior:\n  limits: {max_daily_posts: 5, max_daily_comments: 9}\n`,
        prompt: 'You are the helper.',
      },
    },
    { withGreeter: false },
  );
  const { agents, problems } = await new LocalFolderStore(dir).load();
  expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  return agents;
}

describe('composition root', () => {
  it('a delegate gets the context pieces of any activation: its skills, its budget and what it has left today', async () => {
    const agents = await load();
    const config = WarrenConfigSchema.parse({ executors: { cli: { workspaces: mkdtempSync(join(tmpdir(), 'warren-ws-')) } } });
    const env = { HELPER_KEY: 'sk-helper', PATH: process.env.PATH };
    const executors = buildExecutors({
      config,
      env,
      redactor: new Redactor([]),
      agents: { get: (name) => agents.find((a) => a.name === name) },
    });
    const sources = contextSources(config, env, (agent) => Promise.resolve(agent === 'helper' ? { posts: 1, comments: 2 } : undefined));
    const boss = agents.find((a) => a.name === 'boss')!;
    const resolved = executors.resolve(boss);
    if (!('executor' in resolved)) throw new Error(resolved.unavailable);
    const events = new EventLog('act_boss');
    const { result } = await runTurn({ ...sources, redact: (text) => text, hub: new HubClient({ baseUrl: hub.url, apiKey: hub.adminKey }) }, boss, { kind: 'prompt', text: 'delegate it' }, new AbortController().signal, { id: 'act_boss', events, executor: resolved.executor });
    expect(result).toMatchObject({ termination: 'final', text: 'done' });

    expect(openai.requests).toHaveLength(1);
    const messages = (openai.requests[0]!.body as { messages: Array<{ role: string; content: string }> }).messages;
    const system = messages.find((m) => m.role === 'system')!.content;
    expect(system).toMatch(/^You are the helper\./);
    expect(system).toContain('## Available Skills');
    expect(system).toContain('## System Resource Status');
    expect(system).toContain('**Left today:** 4 posts, 7 comments');
    expect(messages.find((m) => m.role === 'user')!.content).toContain('look up the release notes');
  });
});
