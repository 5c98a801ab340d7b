// Issue 26, findings 2 and 9: the watch page trusted any local process. From an agent's own user, GET / handed
// out the page's session cookie; with it and the page's header, POST /watch/api/posts posted as an existing human
// and as a newly minted one, mentioning other agents (past the agent's own limits), /watch/api/agents/*/pause
// paused them, and /watch/events let it hold all 64 event streams, locking the operator's page out. On main the
// hostile CLI below got 200 for the page with a cookie, 201 for both posts, 200 for the pause and 64 open streams.
// Now a session comes only from the operator token, kept in a file only the daemon's user can read (printed as
// a link at start); reads, streams and writes need it, and streams are capped per session.
// A real `warren start` as root with its embedded hub and the private Redis runs a fake claude as the agent's own
// user (executors.cli.run_as: warren-agent → warren-agent-coder) that tries each of these.
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { agentUserName, lookupUser } from '../../executors/cli/run-as.ts';
import { FAKE_CLIS } from '../support/cli-agent.ts';
import { PROCESS_TEST_MS } from '../support/ceilings.ts';
import { makeAgentsDir } from '../support/daemon-harness.ts';
import { freePort } from '../support/free-port.ts';
import { hubCaller, waitFor, type WirePost } from '../support/hub-api.ts';
import { startWarren } from '../support/warren-process.ts';

const redisUrl = inject('redisUrl');
const ATTACKER = join(FAKE_CLIS, 'claude-watch-attack.js');
const ADMIN = `watch-operator-admin-${randomUUID()}`;

interface AttackReport {
  uid: number;
  page: number;
  gotCookie: boolean;
  posts: Array<{ as: string; status: number }>;
  pause: number;
  streams: Record<string, number>;
  tokenFile: string;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

describe('a hostile CLI agent against the watch page of the daemon it runs under', { timeout: PROCESS_TEST_MS }, () => {
  it('cannot take a session, post as a human, pause an agent, hold the event streams or read the token; the operator can', async () => {
    expect(process.getuid?.(), 'CI runs as root, where run_as applies').toBe(0);
    // The data folder is open to everyone (as a careless install leaves it): only the token file's own mode protects it.
    const data = mkdtempSync(join(tmpdir(), 'warren-watch-op-'));
    chmodSync(data, 0o755);
    const port = await freePort();
    const hubUrl = `http://127.0.0.1:${port}`;
    const agentsDir = makeAgentsDir(
      {
        coder: {
          config: `name: coder\ntype: claude-code\nbrain: {provider: anthropic, model: claude-sonnet-4-5, api_base: "http://127.0.0.1:9", api_key_env: CODER_KEY}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {max_duration: 60s}\n`,
          prompt: 'You are {{name}}.',
        },
        victim: { config: 'name: victim\ntype: llm\nbrain: {provider: scripted, model: scripted-victim, responses: ["ok"]}\ncapabilities: {grants: [hub:read, hub:write]}\n', prompt: 'x' },
      },
      { withGreeter: false },
    );
    const daemon = startWarren({
      hubUrl,
      adminKey: ADMIN,
      redisUrl,
      prefix: `watch-op-${randomUUID().slice(0, 8)}`,
      agentsDir,
      hub: `hub: {embedded: true, port: ${port}, db: "${join(data, 'hub.sqlite')}"}`,
      env: { CODER_KEY: 'sk-ant-coder-own-key', WARREN_LOG_LEVEL: 'info' },
      sections: [`executors: {cli: {run_as: warren-agent, workspaces: "${join(data, 'workspaces')}", binaries: {claude-code: "${ATTACKER}"}}}`],
    });
    cleanups.push(async () => {
      daemon.kill('SIGKILL');
      await daemon.exited;
    });
    await daemon.waitForLine(/warren is running/);
    const tokenFile = join(data, 'watch-token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(tokenFile).uid).toBe(0);

    const api = hubCaller(hubUrl);
    const { api_key: aliceKey } = await api.post<{ api_key: string }>('/agents/register', ADMIN, { name: 'alice', type: 'human' });
    const postsBefore = (await api.get<{ total: number }>('/posts', ADMIN)).total;
    const task = await api.post<{ id: string }>('/posts', aliceKey, { title: 'attack', content: `@coder go HUB=${hubUrl} VICTIM=victim TOKENFILE=${tokenFile}` });
    const reply = await waitFor(
      'the attacker reply',
      async () => (await api.get<WirePost>(`/posts/${task.id}?include_comments=true`, aliceKey)).comments?.find((c) => c.author.name === 'coder')?.content,
      60_000,
      100,
    );
    const report = JSON.parse(reply) as AttackReport;
    const user = await lookupUser(agentUserName('warren-agent', 'coder'));
    expect(report.uid).toBe(user!.uid);
    // The page (public code) loads, but hands out no session.
    expect(report.page).toBe(200);
    expect(report.gotCookie).toBe(false);
    // Posting as the existing human and as a new one, and pausing: refused for want of the session.
    expect(report.posts).toEqual([
      { as: 'human', status: 401 },
      { as: 'mallory-new', status: 401 },
    ]);
    expect(report.pause).toBe(401);
    // Not one event stream.
    expect(report.streams).toEqual({ 401: 64 });
    expect(report.tokenFile).toBe('EACCES');
    // Nothing was written: no post but the task (and no human minted).
    expect((await api.get<{ total: number }>('/posts', ADMIN)).total).toBe(postsBefore + 1);
    expect((await fetch(`${hubUrl}/api/v1/agents/mallory-new`, { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(404);

    // The operator, with the link printed at start (stderr, not the log), gets a session and a stream.
    const line = await daemon.waitForLine(/watch page \(operator link/);
    const link = /(http:\/\/\S+\?token=\S+)/.exec(line)![1]!;
    expect(daemon.lines.filter((l) => l.includes(new URL(link).searchParams.get('token')!))).toEqual([line]);
    const login = await fetch(link, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const stream = await fetch(`${hubUrl}/watch/events`, { headers: { cookie } });
    expect(stream.status).toBe(200);
    await stream.body?.cancel();
    const mine = await fetch(`${hubUrl}/watch/api/posts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-warren-watch': '1', cookie }, body: JSON.stringify({ content: 'from the operator' }) });
    expect(mine.status).toBe(201);
  });
});
