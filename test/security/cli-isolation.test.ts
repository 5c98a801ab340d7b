// Finding 1 of the containment work: a CLI agent ran with the daemon's uid and read the daemon's secrets in
// /proc/<pid>/environ. A real `warren start` with canaries planted in its environment (the hub admin key, an
// agent's model key under a name that says nothing of secrets, an unrelated variable) and in its secrets
// folder runs a fake claude that scans everything it can read. As the daemon's own user it finds them all;
// as executors.cli.run_as (the tests run as root, as CI does) it finds none.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, chownSync, copyFileSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { runDoctor } from '../../daemon/commands/doctor.ts';
import { WarrenConfigSchema } from '../../services/config.ts';
import { CliExecutor } from '../../executors/cli/cli-executor.ts';
import { claudeCodeAdapter } from '../../executors/cli/claude-code.ts';
import { Semaphore } from '../../executors/cli/concurrency.ts';
import { agentUserName, cliIsolation, CliUsers, ensureCliUser, lookupUser } from '../../executors/cli/run-as.ts';
import { ensureWorkspace } from '../../executors/cli/workspace.ts';
import { ExecutorSetupError } from '../../executors/executor.ts';
import { startHub, type RunningHub } from '../../local-hub/server.ts';
import { activation, definition, FAKE_CLIS } from '../support/cli-agent.ts';
import { makeAgentsDir } from '../support/daemon-harness.ts';
import { freePort } from '../support/free-port.ts';
import { hubCaller, waitFor, type WirePost } from '../support/hub-api.ts';
import { startWarren, type WarrenProcess } from '../support/warren-process.ts';
import { PROCESS_TEST_MS } from '../support/ceilings.ts';

const redisUrl = inject('redisUrl');
const SCANNER = join(FAKE_CLIS, 'claude-canary-scan.js');
const canary = (): string => `wcanary_${randomBytes(12).toString('hex')}`;

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

interface ScanReport {
  uid: number;
  gid: number;
  groups: string;
  home: string;
  findings: Array<{ where: string; canary: string }>;
  environ: { readable: number[]; unreadable: number[] };
  filesRead: number;
  filesDenied: number;
}

interface Scan {
  report: ScanReport;
  daemon: WarrenProcess;
  canaries: Record<'admin' | 'model' | 'unrelated' | 'secretFile' | 'otherWorkspace', string>;
  workspaces: string;
  secretsDir: string;
}

const agents = (): string =>
  makeAgentsDir(
    {
      coder: {
        config: `name: coder\ntype: claude-code\nbrain: {provider: anthropic, model: claude-sonnet-4-5, api_base: "http://127.0.0.1:9", api_key_env: CODER_KEY}\ncapabilities: {grants: [hub:read, hub:write]}\nbehavior: {max_duration: 60s}\n`,
        prompt: 'You are {{name}}.',
      },
      // Never activated: it is here so the daemon holds its key, under a name without KEY/TOKEN/SECRET.
      writer: { config: `name: writer\ntype: llm\nbrain: {provider: openai, model: gpt-4o-mini, api_key_env: WRITER_CRED}\ncapabilities: {grants: [hub:read, hub:write]}\n`, prompt: 'You are {{name}}.' },
    },
    { withGreeter: false },
  );

/** Starts a daemon with planted canaries, mentions the scanning agent and returns what it found. */
async function scan(runAs: string): Promise<Scan> {
  const canaries = { admin: canary(), model: canary(), unrelated: canary(), secretFile: canary(), otherWorkspace: canary() };
  const hub: RunningHub = await startHub({ dbPath: ':memory:', port: 0, adminKey: canaries.admin });
  cleanups.push(() => hub.close());
  const base = mkdtempSync(join(tmpdir(), 'warren-sec-'));
  // CLI agents must be able to pass through to their workspace: the parent is searchable, not listable.
  chmodSync(base, 0o711);
  const workspaces = join(base, 'workspaces');
  const secretsDir = join(base, 'secrets');
  mkdirSync(secretsDir, { mode: 0o700 });
  writeFileSync(join(secretsDir, 'OPS_PASSPHRASE'), `${canaries.secretFile}\n`, { mode: 0o600 });
  const agentsDir = agents();
  // Another CLI agent's workspace as the executor leaves it (owned by that agent's user when run_as applies),
  // with something of its own in it.
  const other = runAs === 'none' ? undefined : new CliUsers(await ensureCliUser(runAs), true);
  const otherDirs = await ensureWorkspace(workspaces, 'other', await other?.forAgent('other'));
  writeFileSync(join(otherDirs.workspace, 'notes.md'), canaries.otherWorkspace, { mode: 0o600 });
  const otherUser = await other?.forAgent('other');
  if (otherUser) chownSync(join(otherDirs.workspace, 'notes.md'), otherUser.uid, otherUser.gid);
  const daemon = startWarren({
    hubUrl: hub.url,
    adminKey: canaries.admin,
    redisUrl,
    prefix: `sec-${randomUUID().slice(0, 8)}`,
    agentsDir,
    env: { CODER_KEY: 'sk-ant-coder-own-key-not-a-canary', WRITER_CRED: canaries.model, DEPLOY_NOTE: canaries.unrelated, WARREN_LOG_LEVEL: 'info' },
    sections: [`executors: {cli: {run_as: ${runAs}, workspaces: "${workspaces}", binaries: {claude-code: "${SCANNER}"}}}`, `secrets: {dir: "${secretsDir}"}`],
  });
  cleanups.push(async () => {
    daemon.kill('SIGKILL');
    await daemon.exited;
  });
  await daemon.waitForLine(/warren is running/);
  const api = hubCaller(hub.url);
  const { api_key: userKey } = await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'mallory', type: 'human' });
  const roots = [secretsDir, workspaces, otherDirs.workspace, otherDirs.stateDir, dirname(daemon.config), dirname(agentsDir)];
  const post = await api.post<{ id: string }>('/posts', userKey, { title: 'scan', content: `@coder scan ROOTS=${roots.join(':')}` });
  const reply = await waitFor(
    'the scanner reply',
    async () => {
      const p = await api.get<WirePost>(`/posts/${post.id}?include_comments=true`, userKey);
      return p.comments?.find((c) => c.author.name === 'coder')?.content;
    },
    45_000,
    100,
  );
  return { report: JSON.parse(reply) as ScanReport, daemon, canaries, workspaces, secretsDir };
}

const found = (s: Scan): string[] => {
  const names = Object.entries(s.canaries).map(([name, value]) => [value.slice(-6), name] as const);
  return [...new Set(s.report.findings.map((f) => names.find(([tail]) => tail === f.canary)?.[1] ?? `unknown ${f.canary}`))].sort();
};

describe('a CLI agent scanning for the daemon\'s secrets', { timeout: PROCESS_TEST_MS }, () => {
  it('as the daemon\'s own user (run_as: none) finds every canary, and the daemon warns at start that it would', async () => {
    const s = await scan('none');
    expect(s.report.uid).toBe(process.getuid?.());
    expect(s.report.environ.readable).toContain(s.daemon.pid);
    expect(found(s)).toEqual(['admin', 'model', 'otherWorkspace', 'secretFile', 'unrelated']);
    expect(s.report.findings).toContainEqual({ where: `/proc/${s.daemon.pid}/environ`, canary: s.canaries.admin.slice(-6) });
    expect(s.daemon.lines.some((l) => l.includes("CLI agents can read the daemon's secrets"))).toBe(true);
  }, 90_000);

  it('as executors.cli.run_as finds none: not in /proc, not in the secrets folder, the config or another agent\'s workspace', async () => {
    expect(process.getuid?.(), 'CI runs as root, where run_as applies; as another user the test above covers the warning').toBe(0);
    const s = await scan('warren-agent');
    // Each agent has its own user: this one is warren-agent-coder.
    const user = await lookupUser(agentUserName('warren-agent', 'coder'));
    expect(user).toBeDefined();
    expect(s.report.uid).toBe(user!.uid);
    expect(s.report.uid).not.toBe(0);
    expect(s.report.gid).toBe(user!.gid);
    // No supplementary group of root's survives the switch.
    expect(s.report.groups.split(/\s+/).filter(Boolean).every((g) => Number(g) === user!.gid)).toBe(true);
    expect(s.report.findings).toEqual([]);
    // It did look: the daemon's environment was there and refused, and it read files (its own workspace at least).
    expect(s.report.environ.unreadable).toContain(s.daemon.pid);
    expect(s.report.filesDenied).toBeGreaterThan(0);
    expect(s.daemon.lines.some((l) => l.includes("CLI agents can read the daemon's secrets"))).toBe(false);
    // The workspace and the CLI's HOME belong to that user alone.
    const ws = statSync(join(s.workspaces, 'coder'));
    expect([ws.uid, ws.gid, ws.mode & 0o777]).toEqual([user!.uid, user!.gid, 0o700]);
    expect(s.report.home).toBe(join(s.workspaces, '.state', 'coder', 'home'));
    expect(statSync(s.report.home).uid).toBe(user!.uid);
  }, 90_000);
});

describe('run_as and the CLI binary', () => {
  it('a CLI the run_as user cannot reach is refused with a setup error naming the folder in the way', async () => {
    expect(process.getuid?.()).toBe(0);
    const user = await ensureCliUser('warren-agent');
    const hidden = mkdtempSync(join(tmpdir(), 'warren-hidden-')); // mode 700, root's: as /root is
    const binary = join(hidden, 'claude');
    copyFileSync(SCANNER, binary);
    chmodSync(binary, 0o755);
    const make = (bin: string): CliExecutor =>
      new CliExecutor({ adapter: claudeCodeAdapter(), binary: bin, workspacesRoot: join(mkdtempSync(join(tmpdir(), 'warren-ws-')), 'ws'), secret: () => 'sk-ant-x', parentEnv: { PATH: process.env.PATH }, slots: new Semaphore(1), runAs: new CliUsers(user, false) });
    const def = definition({ type: 'claude-code' });
    const refused = make(binary);
    expect(refused.missingRequirement(def)).toBe(
      `the claude-code CLI (${binary}) cannot be run as executors.cli.run_as: user warren-agent cannot reach ${binary}: the folder ${hidden} is not searchable by it; install it where that user can read it (a world-readable path such as /usr/local or /opt) or set executors.cli.run_as: none`,
    );
    await expect(refused.run(activation(def))).rejects.toBeInstanceOf(ExecutorSetupError);
    // The same file where the user can reach it runs (as a control for the check itself).
    chmodSync(hidden, 0o755);
    expect(make(binary).missingRequirement(def)).toBeUndefined();
  });

  it('a workspace under a folder the run_as user cannot pass is a setup error naming that folder', async () => {
    const user = await ensureCliUser('warren-agent');
    const hidden = mkdtempSync(join(tmpdir(), 'warren-hidden-')); // mode 700, root's
    const executor = new CliExecutor({ adapter: claudeCodeAdapter(), binary: SCANNER, workspacesRoot: join(hidden, 'ws'), secret: () => 'sk-ant-x', parentEnv: { PATH: process.env.PATH }, slots: new Semaphore(1), runAs: new CliUsers(user, false) });
    const def = definition({ type: 'claude-code' });
    expect(executor.missingRequirement(def)).toBeUndefined();
    const err = await executor.run(activation(def)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExecutorSetupError);
    expect((err as Error).message).toContain(`its workspace cannot be used as executors.cli.run_as: user warren-agent cannot reach ${join(hidden, 'ws', 'coder')}: the folder ${hidden} is not searchable by it`);
  });

  it('a TMPDIR the run_as user cannot pass is a setup error naming it', async () => {
    const user = await ensureCliUser('warren-agent');
    const open = mkdtempSync(join(tmpdir(), 'warren-ws-'));
    chmodSync(open, 0o711);
    const hidden = mkdtempSync(join(tmpdir(), 'warren-tmp-')); // mode 700, root's
    const executor = new CliExecutor({ adapter: claudeCodeAdapter(), binary: SCANNER, workspacesRoot: join(open, 'ws'), secret: () => 'sk-ant-x', parentEnv: { PATH: process.env.PATH }, slots: new Semaphore(1), runAs: new CliUsers(user, false) });
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = hidden;
    try {
      const err = await executor.run(activation(definition({ type: 'claude-code' }))).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ExecutorSetupError);
      expect((err as Error).message).toMatch(new RegExp(`the temporary folder cannot be used as executors.cli.run_as: user warren-agent cannot reach ${hidden}/warren-coder-\\w+: the folder ${hidden} is not searchable by it; set the daemon's TMPDIR`));
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  it('a workspace left by root is handed to the run_as user without following the symlinks in it', async () => {
    const user = await ensureCliUser('warren-agent');
    const base = mkdtempSync(join(tmpdir(), 'warren-ws-'));
    chmodSync(base, 0o755);
    const outside = join(base, 'outside.txt');
    writeFileSync(outside, 'root only', { mode: 0o600 });
    const ws = join(base, 'ws', 'coder');
    mkdirSync(join(ws, 'src'), { recursive: true });
    writeFileSync(join(ws, 'src', 'main.ts'), 'code');
    symlinkSync(outside, join(ws, 'link'));
    const dirs = await ensureWorkspace(join(base, 'ws'), 'coder', user);
    for (const p of [ws, join(ws, 'src'), join(ws, 'src', 'main.ts'), dirs.stateDir, dirs.home]) expect([p, statSync(p).uid]).toEqual([p, user.uid]);
    expect(lstatSync(join(ws, 'link')).uid).toBe(user.uid);
    expect(statSync(outside).uid).toBe(0);
    // HOME lies in a folder the agent owns: a symlink put in its place is refused, not chmod-ed through.
    rmSync(dirs.home, { recursive: true });
    symlinkSync(base, dirs.home);
    await expect(ensureWorkspace(join(base, 'ws'), 'coder', user)).rejects.toThrow(/is not a folder/);
    expect(statSync(base).mode & 0o777).toBe(0o755);
  });

  it('users created at once (several agents starting together) are all created, each unprivileged', async () => {
    const names = Array.from({ length: 4 }, () => `wtest-${randomBytes(4).toString('hex')}`);
    cleanups.push(() => Promise.all(names.map((n) => new Promise((r) => execFile('userdel', [n], r)))));
    const users = await Promise.all(names.map((n) => ensureCliUser(n)));
    expect(users.map((u) => u.name)).toEqual(names);
    expect(new Set(users.map((u) => u.uid)).size).toBe(4);
    expect(users.every((u) => u.uid > 0 && u.gid > 0)).toBe(true);
    expect(await lookupUser(names[0]!)).toEqual(users[0]);
  });

  it('an agent user that cannot be created fails the activation as a setup error saying how to opt out', async () => {
    const base = await ensureCliUser('warren-agent');
    const open = mkdtempSync(join(tmpdir(), 'warren-ws-'));
    // useradd refuses a name with a colon: the derived bad:x-coder cannot be created.
    const executor = new CliExecutor({ adapter: claudeCodeAdapter(), binary: SCANNER, workspacesRoot: join(open, 'ws'), secret: () => 'sk-ant-x', parentEnv: { PATH: process.env.PATH }, slots: new Semaphore(1), runAs: new CliUsers({ ...base, name: 'bad:x' }, true) });
    const err = await executor.run(activation(definition({ type: 'claude-code' }))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExecutorSetupError);
    expect((err as Error).message).toMatch(/executors.cli.run_as bad:x-coder: useradd failed: .*\(executors.cli.run_as: none runs CLI agents as the daemon's user instead\)/);
  });

  it('agent users are named <run_as>-<agent>, hashed to fit 32 characters', () => {
    expect(agentUserName('warren-agent', 'coder')).toBe('warren-agent-coder');
    const long = agentUserName('warren-agent', 'a-very-long-agent-name-of-forty-characters');
    expect(long).toMatch(/^warren-agent-a-very-lon-[0-9a-f]{8}$/);
    expect(long).toHaveLength(32);
    expect(agentUserName('warren-agent', 'a-very-long-agent-name-of-forty-characterz')).not.toBe(long);
  });

  it('isolation is decided by the daemon\'s uid and the setting alone', () => {
    expect(cliIsolation('warren-agent', 0)).toEqual({ runAs: 'warren-agent', warning: undefined });
    expect(cliIsolation('none', 0).warning).toMatch(/run_as is none, so CLI agents can read the daemon's secrets/);
    expect(cliIsolation('warren-agent', 1000)).toMatchObject({ runAs: undefined, warning: expect.stringMatching(/runs as uid 1000, not root, .*CLI agents can read the daemon's secrets/) as unknown });
  });
});

describe('warren doctor on CLI isolation', () => {
  const doctor = async (cli: Record<string, unknown>, secretsDir?: string) => {
    const config = WarrenConfigSchema.parse({
      hub: { url: `http://127.0.0.1:${await freePort()}` },
      redis: { url: redisUrl },
      store: { path: dirname(agents()) },
      // No CLI installed: their version checks would only slow this down.
      executors: { cli: { binaries: { 'claude-code': '/nonexistent/claude', goose: '/nonexistent/goose', aider: '/nonexistent/aider', opencode: '/nonexistent/opencode' }, ...cli } },
      secrets: { dir: secretsDir },
    });
    return (await runDoctor(config, { PATH: process.env.PATH })).filter((c) => c.area === 'cli isolation');
  };

  it('says plainly that CLI agents can read the daemon\'s secrets when run_as is none', async () => {
    expect(await doctor({ run_as: 'none' })).toEqual([{ status: 'warn', area: 'cli isolation', message: expect.stringContaining("executors.cli.run_as is none, so CLI agents can read the daemon's secrets") as unknown }]);
  });

  it('says that what a CLI agent leaves running cannot be ended with its run when it runs as the daemon\'s user', async () => {
    const [check] = await doctor({ run_as: 'none' });
    expect(check?.message).toContain("Nor can a process a CLI agent leaves behind (setsid, a double fork) be ended with its run: only the CLI's process group is");
    // The same words whatever makes CLI agents run as the daemon's user: a daemon that is not root.
    expect(cliIsolation('warren-agent', 1000).warning).toContain('Nor can a process a CLI agent leaves behind');
  });

  it('as root: names the user CLI agents run as, and warns about each secret file that user can read', async () => {
    expect(process.getuid?.()).toBe(0);
    const user = await ensureCliUser('warren-agent');
    const dir = join(mkdtempSync(join(tmpdir(), 'warren-sec-')), 'secrets');
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'TIGHT'), 'tight-value-123456', { mode: 0o600 });
    writeFileSync(join(dir, 'LOOSE'), 'loose-value-123456', { mode: 0o644 });
    chmodSync(dirname(dir), 0o755);
    expect(await doctor({}, dir)).toEqual([{ status: 'ok', area: 'cli isolation', message: "CLI agents run as warren-agent-<agent> (one user per agent, created on first use); they cannot read the daemon's environment, and what they leave running is killed when their run ends" }]);
    chmodSync(dir, 0o755); // now the folder and LOOSE are readable by others, TIGHT is not
    expect((await doctor({ run_as_per_agent: false }, dir)).map((c) => `${c.status} ${c.message}`)).toEqual([
      `ok CLI agents run as warren-agent (uid ${user.uid}); they cannot read the daemon's environment, and what they leave running is killed when their run ends`,
      `warn secret file ${dir} is readable by warren-agent, the user CLI agents run as: make it readable by the daemon's user only (chmod 600, folder 700)`,
      `warn secret file ${join(dir, 'LOOSE')} is readable by warren-agent, the user CLI agents run as: make it readable by the daemon's user only (chmod 600, folder 700)`,
    ]);
  });
});
