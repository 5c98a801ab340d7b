// Issue 26, items 3 and 4: what a CLI agent's own user can still reach on the host. A real `warren start` as root
// (the tests run as root, as CI does) with the embedded hub and memory in a data folder runs a hostile fake claude
// (test/fakes/cli/claude-host-probe.js) as the agent's own user. It tries to read the hub's and memory's
// databases and another agent's workspace, and leaves a `setsid` process behind.
// On main before this change both succeeded: data/hub.sqlite and data/memory.sqlite were 0644 in a 0755 folder (the
// probe read them), and the setsid leftover slept on after its run, after the daemon's clean shutdown and after
// a kill -9 and a new start.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { agentUserName, CliUsers, ensureCliUser, lookupUser, type CliUser } from '../../executors/cli/run-as.ts';
import { ensureWorkspace } from '../../executors/cli/workspace.ts';
import { SqliteMemoryStore } from '../../memory/sqlite-memory-store.ts';
import { FAKE_CLIS } from '../support/cli-agent.ts';
import { PROCESS_TEST_MS } from '../support/ceilings.ts';
import { makeAgentsDir } from '../support/daemon-harness.ts';
import { freePort } from '../support/free-port.ts';
import { hubCaller, waitFor, type WirePost } from '../support/hub-api.ts';
import { processAlive } from '../support/process-group.ts';
import { startWarren, type WarrenProcess } from '../support/warren-process.ts';

const redisUrl = inject('redisUrl');
const PROBE = join(FAKE_CLIS, 'claude-host-probe.js');
const ADMIN = `admin-${randomBytes(12).toString('hex')}`;
/** executors.cli.kill_grace of these daemons: leftovers must be gone within it. */
const GRACE_MS = 2_000;
// A user base of this file's own: the sweep ends every process of warren-agent-coder, which other test files'
// daemons run as at the same time.
const BASE = `wh${randomBytes(3).toString('hex')}`;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});
const run = (cmd: string, args: string[]): Promise<unknown> => new Promise((r) => execFile(cmd, args, r));
afterAll(async () => {
  for (const agent of ['coder', 'other']) await run('pkill', ['-KILL', '-u', agentUserName(BASE, agent)]);
  for (const user of [agentUserName(BASE, 'coder'), agentUserName(BASE, 'other'), BASE]) await run('userdel', [user]);
});

interface Host {
  base: string;
  data: string;
  workspaces: string;
  agentsDir: string;
  other: CliUser;
  /** A note in memory.sqlite as an older warren left it (0644 in a 0755 folder). */
  memoryCanary: string;
  hubPort: number;
  prefix: string;
}

/** The folders a daemon of an older version left: a data folder and workspaces readable by everyone. */
async function oldHost(): Promise<Host> {
  const base = mkdtempSync(join(tmpdir(), 'warren-host-'));
  // Every user may pass through to what is below: only warren's own modes keep the agent out.
  chmodSync(base, 0o711);
  const data = join(base, 'data');
  const memoryCanary = `wcanary_${randomBytes(12).toString('hex')}`;
  const memory = new SqliteMemoryStore(join(data, 'memory.sqlite'));
  await memory.write('other', [{ key: 'k1', kind: 'note', text: `other's private note ${memoryCanary}`, createdAt: Date.now() }]);
  await memory.close();
  for (const f of readdirSync(data)) chmodSync(join(data, f), 0o644);
  chmodSync(data, 0o755); // as an older warren made it (this one closed it as the store opened)
  const workspaces = join(base, 'workspaces');
  const other = await new CliUsers(await ensureCliUser(BASE), true).forAgent('other');
  const dirs = await ensureWorkspace(workspaces, 'other', other);
  writeFileSync(join(dirs.workspace, 'notes.md'), 'other agent only', { mode: 0o600 });
  chownSync(join(dirs.workspace, 'notes.md'), other.uid, other.gid);
  // A workspace from before run_as: root's, open to all.
  mkdirSync(join(workspaces, 'legacy'), { mode: 0o755 });
  chmodSync(join(workspaces, 'legacy'), 0o755);
  writeFileSync(join(workspaces, 'legacy', 'notes.md'), 'legacy agent only', { mode: 0o644 });
  const agentsDir = makeAgentsDir(
    {
      coder: {
        config: `name: coder\ntype: claude-code\nbrain: {provider: anthropic, model: claude-sonnet-4-5, api_base: "http://127.0.0.1:9", api_key_env: CODER_KEY}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {max_duration: 60s}\n`,
        prompt: 'You are {{name}}.',
      },
    },
    { withGreeter: false },
  );
  return { base, data, workspaces, agentsDir, other, memoryCanary, hubPort: await freePort(), prefix: `host-${randomUUID().slice(0, 8)}` };
}

function daemonOn(h: Host): WarrenProcess {
  const d = startWarren({
    hubUrl: `http://127.0.0.1:${h.hubPort}`,
    adminKey: ADMIN,
    redisUrl,
    prefix: h.prefix,
    agentsDir: h.agentsDir,
    // A clean shutdown gives running activations this long before it aborts them.
    workers: 'shutdown_grace: 2s',
    hub: `hub: {embedded: true, host: 127.0.0.1, port: ${h.hubPort}, db: "${join(h.data, 'hub.sqlite')}"}`,
    env: { CODER_KEY: 'sk-ant-coder-own-key', WARREN_LOG_LEVEL: 'info' },
    sections: [
      `memory: {store: "${join(h.data, 'memory.sqlite')}"}`,
      `executors: {cli: {run_as: ${BASE}, kill_grace: ${GRACE_MS}ms, workspaces: "${h.workspaces}", binaries: {claude-code: "${PROBE}"}}}`,
    ],
  });
  cleanups.push(async () => {
    d.kill('SIGKILL');
    await d.exited;
  });
  return d;
}

/** Mentions coder with `task`; the mention's post id. */
async function mention(h: Host, task: string): Promise<{ postId: string; userKey: string }> {
  const api = hubCaller(`http://127.0.0.1:${h.hubPort}`);
  const name = `mallory${randomBytes(3).toString('hex')}`;
  const { api_key: userKey } = await api.post<{ api_key: string }>('/agents/register', ADMIN, { name, type: 'human' });
  const post = await api.post<{ id: string }>('/posts', userKey, { title: 'probe', content: `@coder ${task}` });
  return { postId: post.id, userKey };
}

async function replyTo(h: Host, m: { postId: string; userKey: string }): Promise<string> {
  const api = hubCaller(`http://127.0.0.1:${h.hubPort}`);
  return waitFor(
    "coder's reply",
    async () => (await api.get<WirePost>(`/posts/${m.postId}?include_comments=true`, m.userKey)).comments?.find((c) => c.author.name === 'coder')?.content,
    60_000,
    100,
  );
}

/** The pid of the setsid leftover of coder's current run, once it wrote it. */
async function leftoverPid(h: Host): Promise<number> {
  const file = join(h.workspaces, 'coder', 'leftover.pid');
  return waitFor('the leftover pid file', () => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) || undefined : undefined), 60_000, 50);
}

const gone = (pid: number, ms = GRACE_MS): Promise<true> => waitFor(`pid ${pid} to be gone`, () => (processAlive(pid) ? undefined : true), ms, 20);

/** Every path under `root`, the root included, with its owner and mode. */
function walk(root: string): Array<{ path: string; uid: number; mode: number; dir: boolean }> {
  const st = lstatSync(root);
  const here = { path: root, uid: st.uid, mode: st.mode & 0o7777, dir: st.isDirectory() };
  return st.isDirectory() ? [here, ...readdirSync(root).flatMap((e) => walk(join(root, e)))] : [here];
}

describe('what a CLI agent\'s own user can reach on the host', { timeout: PROCESS_TEST_MS }, () => {
  it("cannot read warren's databases or another agent's workspace; everything warren made is its own, 0600/0700", async () => {
    expect(process.getuid?.(), 'run_as applies to a root daemon, as in CI').toBe(0);
    const h = await oldHost();
    const daemon = daemonOn(h);
    await daemon.waitForLine(/warren is running/);
    const targets = [
      join(h.data, 'hub.sqlite'),
      join(h.data, 'hub.sqlite-wal'),
      join(h.data, 'hub.sqlite-shm'),
      join(h.data, 'hub.sqlite.lock'),
      join(h.data, 'memory.sqlite'),
      h.data,
      join(h.workspaces, 'other'),
      join(h.workspaces, 'other', 'notes.md'),
      join(h.workspaces, 'legacy'),
      join(h.workspaces, 'legacy', 'notes.md'),
      h.workspaces,
    ];
    for (const t of targets.slice(0, 5)) expect(existsSync(t), t).toBe(true);
    const report = JSON.parse(await replyTo(h, await mention(h, `PROBE=${targets.join(':')}`))) as { uid: number; probes: Record<string, string>; leftover: number };
    const coder = await lookupUser(agentUserName(BASE, 'coder'));
    expect(report.uid).toBe(coder!.uid);
    // Listing the workspaces root is refused too: agents pass through it to their own, they do not see the others.
    expect(report.probes).toEqual(Object.fromEntries(targets.map((t) => [t, 'EACCES'])));
    expect(report.probes[join(h.data, 'memory.sqlite')]).not.toBe('read'); // the older version's 0644 file included
    // What the older version left open was closed at start, and said.
    for (const said of [`${h.data} was readable by other users (mode 755): now 711`, `${join(h.data, 'memory.sqlite')} was readable by other users (mode 644): now 600`, `${join(h.workspaces, 'legacy')} was readable by other users (mode 755): now 700`]) {
      expect(daemon.lines.some((l) => l.includes(said)), said).toBe(true);
    }

    // Every file and folder warren made is owned by the daemon's user (root) or, in a workspace, by the agent's;
    // none is open to group or others, but the two folders agents pass through (search only).
    const passThrough = new Set([h.workspaces, join(h.workspaces, '.state')]);
    const agentOwned = (p: string): CliUser | undefined => ([['coder', coder!], ['other', h.other]] as const).find(([a]) => p.startsWith(join(h.workspaces, a)) || p.startsWith(join(h.workspaces, '.state', a)))?.[1];
    // The legacy agent's own files keep their modes: its folder, now 0700, is what keeps them from others.
    const entries = [...walk(h.data), ...walk(h.workspaces)].filter((e) => !e.path.startsWith(join(h.workspaces, 'legacy', '/')));
    expect(entries.map((e) => e.path)).toContain(join(h.workspaces, 'coder', 'leftover.pid'));
    for (const e of entries) {
      const owner = agentOwned(e.path);
      const want = passThrough.has(e.path) ? { uid: 0, mode: 0o711 } : { uid: owner?.uid ?? 0, open: 0 };
      expect({ path: e.path, uid: e.uid, ...(passThrough.has(e.path) ? { mode: e.mode } : { open: e.mode & 0o077 }) }).toEqual({ path: e.path, ...want });
    }
  });

  it('leaves no process of the agent\'s user behind: after its run, after a clean shutdown, and after a kill -9 at the next start', async () => {
    expect(process.getuid?.()).toBe(0);
    const h = await oldHost();
    const a = daemonOn(h);
    await a.waitForLine(/warren is running/);
    // 1. The run ends by itself: its setsid leftover is gone by the time the answer is posted, within the grace.
    const report = JSON.parse(await replyTo(h, await mention(h, 'PROBE=/nonexistent'))) as { leftover: number };
    expect(report.leftover).toBeGreaterThan(1);
    await gone(report.leftover);

    // 2. A run the daemon's clean shutdown interrupts.
    rmSync(join(h.workspaces, 'coder', 'leftover.pid'), { force: true });
    await mention(h, 'STAY');
    const second = await leftoverPid(h);
    expect(processAlive(second)).toBe(true);
    a.kill('SIGTERM');
    await a.exited;
    await gone(second);

    // 3. A daemon killed with -9 ends nothing: the next start does.
    rmSync(join(h.workspaces, 'coder', 'leftover.pid'), { force: true });
    const b = daemonOn(h);
    await b.waitForLine(/warren is running/);
    await mention(h, 'STAY');
    const third = await leftoverPid(h);
    b.kill('SIGKILL');
    await b.exited;
    await new Promise((r) => setTimeout(r, 200)); // a fixed look after the kill: the leftover did not go with it
    expect(processAlive(third)).toBe(true);
    const c = daemonOn(h);
    await c.waitForLine(/warren is running/);
    await gone(third);
    expect(c.lines.some((l) => l.includes('killed processes left by an earlier run'))).toBe(true);
  });
});
