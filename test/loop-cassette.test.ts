// Record-and-replay (docs/agent-loop.md R15): a run recorded against a real HTTP endpoint replays offline with
// byte-identical provider requests, the same termination and the same ledger; a run that diverges is told so.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoop, type LoopResult } from '../agent-loop/loop.ts';
import { ToolRegistry } from '../agent-loop/tools.ts';
import type { LedgerEntry } from '../agent-loop/usage-ledger.ts';
import type { RunRecord } from '../daemon/commands/run.ts';
import { emptyCassette, readCassette, recordingFetch, replayingFetch, writeCassette, type FetchFn } from '../executors/llm/cassette.ts';
import { OpenAIChatModel } from '../executors/llm/openai-model.ts';
import { startFakeOpenAI, type FakeOpenAI } from './fakes/openai-server.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { events, makeTool } from './support/loop-kit.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';

const dir = mkdtempSync(join(tmpdir(), 'warren-cassette-'));
const SCRIPT = [
  { tool_calls: [{ name: 'lookup', arguments: { q: 'bees' } }, { name: 'lookup', arguments: { q: 'wasps' } }] },
  { tool_calls: [{ name: 'lookup', arguments: { q: 'hornets' } }], usage: { prompt_tokens: 90, completion_tokens: 12 } },
  { content: 'Bees, wasps and hornets are all hymenoptera.', usage: { prompt_tokens: 140, completion_tokens: 20 } },
];

function loop(fetchFn: FetchFn, baseURL: string, task = 'compare them') {
  return runLoop({
    model: new OpenAIChatModel({ baseURL, apiKey: 'sk-test', stream: true, maxRetries: 0, fetch: fetchFn }),
    modelName: 'fake-gpt',
    system: 'You compare insects.',
    task,
    maxSteps: 5,
    signal: new AbortController().signal,
    events: events(),
    tools: new ToolRegistry([makeTool('lookup', { readOnly: true })], []),
  });
}

const withoutLatency = (ledger: readonly LedgerEntry[]) => ledger.map(({ latencyMs: _l, ...rest }) => rest);

describe('cassettes', { timeout: PROCESS_TEST_MS }, () => {
  let recorded: LoopResult;
  const file = join(dir, 'insects.json');
  let url: string;

  beforeAll(async () => {
    const fake = await startFakeOpenAI();
    url = fake.url;
    fake.enqueue(...SCRIPT);
    const cassette = emptyCassette();
    recorded = await loop(recordingFetch(cassette), url);
    await fake.close(); // from here on, nothing answers on the network
    await writeCassette(file, cassette);
  });

  it('records every exchange, streams included', async () => {
    expect(recorded).toMatchObject({ termination: 'final', text: 'Bees, wasps and hornets are all hymenoptera.' });
    const cassette = await readCassette(file);
    expect(cassette.entries).toHaveLength(3);
    expect(cassette.entries.every((e) => e.request.path === '/v1/chat/completions' && e.response.status === 200)).toBe(true);
    expect(cassette.entries[0]!.response.body).toContain('data: [DONE]');
  });

  it('replays offline: byte-identical requests, the same termination, answer and ledger', async () => {
    const replayer = replayingFetch(await readCassette(file));
    const replayed = await loop(replayer.fetch, url);
    expect(replayer.mismatches).toEqual([]);
    expect(replayer.remaining()).toBe(0);
    expect(replayed.termination).toBe(recorded.termination);
    expect(replayed.text).toBe(recorded.text);
    expect(withoutLatency(replayed.ledger)).toEqual(withoutLatency(recorded.ledger));
    expect(replayed.toolResults.map((r) => r.content)).toEqual(recorded.toolResults.map((r) => r.content));
  });

  it('a run that sends something else is stopped at the first difference, with the place named', async () => {
    const replayer = replayingFetch(await readCassette(file));
    const r = await loop(replayer.fetch, url, 'compare them, briefly');
    expect(r.termination).toBe('error');
    expect(replayer.mismatches).toHaveLength(1);
    expect(replayer.mismatches[0]).toMatch(/^cassette mismatch at request 1: the body differs at character \d+: recorded …".*compare them\\".*, sent …".*compare them, briefly/);
    expect(r.error?.message).toContain('cassette mismatch at request 1');
  });

  it('a network failure is recorded and replayed as one: the replay retries where the run did', async () => {
    const fake = await startFakeOpenAI();
    try {
      fake.enqueue({ content: 'after a retry' });
      let calls = 0;
      const flaky: FetchFn = (input, init) => (++calls === 1 ? Promise.reject(new TypeError('fetch failed', { cause: new Error('connect ECONNRESET') })) : fetch(input, init));
      const cassette = emptyCassette();
      const live = await runLoop({ model: new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', maxRetries: 0, fetch: recordingFetch(cassette, flaky) }), modelName: 'fake-gpt', system: 's', task: 't', maxSteps: 2, signal: new AbortController().signal, events: events(), retry: { attemptsPerModel: 3, initialDelayMs: 5, maxDelayMs: 10, maxRetryAfterMs: 1_000 } });
      expect(live).toMatchObject({ termination: 'final', text: 'after a retry' });
      expect(cassette.entries.map((e) => e.response.network_error ?? e.response.status)).toEqual(['fetch failed', 200]);
      const replayer = replayingFetch(cassette);
      const again = await runLoop({ model: new OpenAIChatModel({ baseURL: fake.url, apiKey: 'k', maxRetries: 0, fetch: replayer.fetch }), modelName: 'fake-gpt', system: 's', task: 't', maxSteps: 2, signal: new AbortController().signal, events: events(), retry: { attemptsPerModel: 3, initialDelayMs: 5, maxDelayMs: 10, maxRetryAfterMs: 1_000 } });
      expect(replayer.mismatches).toEqual([]);
      expect(replayer.remaining()).toBe(0);
      expect(withoutLatency(again.ledger)).toEqual(withoutLatency(live.ledger));
      expect(again.ledger[0]?.attempt).toBe(2);
    } finally {
      await fake.close();
    }
  });

  it('a file that is not a cassette is refused by name', async () => {
    const bad = join(dir, 'bad.json');
    await writeCassette(bad, { version: 1, entries: [] });
    expect((await readCassette(bad)).entries).toEqual([]);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(bad, JSON.stringify({ version: 2, entries: [] }));
    await expect(readCassette(bad)).rejects.toThrow(`${bad}: not a warren cassette: version`);
  });
});

describe('warren run --record / --replay', () => {
  let fake: FakeOpenAI;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
  });
  afterAll(() => fake.close());
  const agentsDir = makeAgentsDir({ insecter: { config: 'name: insecter\ntype: llm\nbrain:\n  provider: openai\n  model: fake-gpt\n  api_key_env: INSECT_KEY\ncapabilities:\n  grants: [hub:read]\n', prompt: 'You are {{name}}.' } }, { withGreeter: false });
  const warren = (args: string[], env: Record<string, string> = {}) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
      const child = spawn(process.execPath, [resolve('bin/warren.js'), 'run', 'insecter', '--agents', agentsDir, '--json', ...args], { env: { ...process.env, WARREN_HUB_ADMIN_KEY: '', OPENAI_BASE_URL: fake.url, INSECT_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('close', (status) => done({ status, stdout, stderr }));
    });

  it('records a run, then replays it without the endpoint or the key', async () => {
    const file = join(dir, 'run.json');
    fake.enqueue({ content: 'Ants are insects too.', usage: { prompt_tokens: 30, completion_tokens: 6 } });
    const live = await warren(['--prompt', 'tell me about ants', '--record', file], { INSECT_KEY: 'sk-live' });
    expect(live.status, live.stderr).toBe(0);
    expect(readFileSync(file, 'utf8')).not.toContain('sk-live'); // requests are kept without their headers
    const served = fake.requests.length;
    const replay = await warren(['--prompt', 'tell me about ants', '--replay', file]);
    expect(replay.status, replay.stderr).toBe(0);
    expect(fake.requests.length).toBe(served); // nothing went to the endpoint
    const a = JSON.parse(live.stdout) as RunRecord;
    const b = JSON.parse(replay.stdout) as RunRecord;
    expect({ termination: b.termination, text: b.text, usage: b.usage }).toEqual({ termination: a.termination, text: a.text, usage: a.usage });
    const off = await warren(['--prompt', 'tell me about bees', '--replay', file]);
    expect(off.status).toBe(1);
    expect(off.stderr).toMatch(/cassette mismatch at request 1/);
  });
});
