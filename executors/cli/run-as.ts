// The user CLI agents run as. A coding CLI runs whatever its model asks for; under the daemon's own uid it
// could read the daemon's environment (/proc/<pid>/environ: the hub admin key, every agent's key) and secret
// files. A daemon running as root starts CLIs as separate unprivileged users (`executors.cli.run_as`, by
// default one per agent so agents cannot read each other's processes and workspaces either; created on
// demand); otherwise nothing stands between a CLI agent and the daemon's secrets, and it says so.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';

/** The system's own tool, from the system folders only: never a program of the same name earlier on PATH. */
function systemTool(name: string): string {
  for (const dir of ['/usr/sbin', '/usr/bin', '/sbin', '/bin']) if (existsSync(`${dir}/${name}`)) return `${dir}/${name}`;
  return name;
}

export interface CliUser {
  name: string;
  uid: number;
  gid: number;
}

export class CliUserError extends Error {
  readonly user: string;
  constructor(user: string, reason: string) {
    super(`executors.cli.run_as ${user}: ${reason}`);
    this.name = 'CliUserError';
    this.user = user;
  }
}

export interface CliIsolation {
  /** The user to run CLI agents as, or undefined: they run as the daemon's user. */
  runAs: string | undefined;
  /** Said at start-up and by `warren doctor` when CLI agents are not isolated from the daemon's secrets. */
  warning: string | undefined;
}

/**
 * The user of one agent: `<base>-<agent>`, or, when that passes the 32 characters a user name may have, its
 * head and a hash of the agent's name (names are unique, so are hashes in practice).
 */
export function agentUserName(base: string, agent: string): string {
  const full = `${base}-${agent}`;
  if (full.length <= 32) return full;
  return `${full.slice(0, 23)}-${createHash('sha256').update(agent).digest('hex').slice(0, 8)}`;
}

/** The users CLI agents run as: `base` (or, per agent, one derived from it), created on first use. */
export class CliUsers {
  readonly base: CliUser;
  readonly #perAgent: boolean;
  readonly #users = new Map<string, Promise<CliUser>>();

  constructor(base: CliUser, perAgent: boolean) {
    this.base = base;
    this.#perAgent = perAgent;
  }

  forAgent(agent: string): Promise<CliUser> {
    if (!this.#perAgent) return Promise.resolve(this.base);
    let user = this.#users.get(agent);
    if (!user) {
      user = ensureCliUser(agentUserName(this.base.name, agent));
      this.#users.set(agent, user);
      user.catch(() => this.#users.delete(agent)); // a failed useradd is tried again next time
    }
    return user;
  }

  describe(): string {
    return this.#perAgent ? `one user per agent, ${this.base.name}-<agent>` : this.base.name;
  }

  /**
   * Every user CLI agents may have run as (what a daemon killed with -9 may have left processes under): each
   * `<base>-…` user when each agent has its own, agents no longer defined included; else the base user.
   */
  async all(): Promise<CliUser[]> {
    return this.#perAgent ? usersNamedLike(`${this.base.name}-`) : [this.base];
  }
}

/** Whether CLI agents can be kept away from the daemon's secrets: only a root daemon can start them as another user. */
export function cliIsolation(setting: string, daemonUid: number | undefined): CliIsolation {
  const exposed = "CLI agents can read the daemon's secrets: its environment (/proc/<pid>/environ, the hub admin key and every agent's key) and any secret file it can read";
  // A leftover under the daemon's own uid cannot be told from the daemon's other processes: only the group goes.
  const leftovers = "Nor can a process a CLI agent leaves behind (setsid, a double fork) be ended with its run: only the CLI's process group is, so such a process may outlive its run and read the next one's credentials";
  if (setting === 'none') return { runAs: undefined, warning: `executors.cli.run_as is none, so ${exposed}. ${leftovers}. Set run_as to a user (default warren-agent) or run CLI agents in a container` };
  if (daemonUid !== 0) return { runAs: undefined, warning: `the daemon runs as uid ${daemonUid ?? 'unknown'}, not root, so CLI agents run as the same user and ${exposed}. ${leftovers}. Run the daemon as root (CLI agents then run as executors.cli.run_as) or run CLI agents in a container` };
  return { runAs: setting, warning: undefined };
}

/** The user's ids from the system's user database, or undefined when there is no such user. */
export function lookupUser(name: string): Promise<CliUser | undefined> {
  return new Promise((res, reject) => {
    execFile(systemTool('getent'), ['passwd', name], { timeout: 10_000 }, (err, stdout) => {
      // getent exits 2 for a missing entry.
      if (err && (err as { code?: unknown }).code === 2) return res(undefined);
      if (err) return reject(new CliUserError(name, `getent passwd failed: ${err.message}`));
      const [, , uid, gid] = stdout.trim().split(':');
      const user = { name, uid: Number(uid), gid: Number(gid) };
      if (!Number.isInteger(user.uid) || !Number.isInteger(user.gid)) return reject(new CliUserError(name, `unreadable passwd entry: ${stdout.trim()}`));
      res(user);
    });
  });
}

/** The users whose names start with `prefix`, from the system's user database (getent passwd, every entry). */
export function usersNamedLike(prefix: string): Promise<CliUser[]> {
  return new Promise((res, reject) => {
    execFile(systemTool('getent'), ['passwd'], { timeout: 10_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(new CliUserError(prefix, `getent passwd failed: ${err.message}`));
      const users = stdout
        .split('\n')
        .map((line) => line.split(':'))
        .filter(([name]) => name?.startsWith(prefix))
        .map(([name, , uid, gid]) => ({ name: name!, uid: Number(uid), gid: Number(gid) }))
        .filter((u) => Number.isInteger(u.uid) && Number.isInteger(u.gid) && u.uid !== 0);
      res(users);
    });
  });
}

/**
 * The user, created (system user, no home, no login shell, its own group) when missing. Agents starting
 * together may create theirs at once: useradd waits for the lock on /etc/passwd itself.
 */
export async function ensureCliUser(name: string): Promise<CliUser> {
  const found = await lookupUser(name);
  if (found) return checkUnprivileged(found);
  await new Promise<void>((res, reject) => {
    execFile(systemTool('useradd'), ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', name], { timeout: 30_000 }, (err, _stdout, stderr) => {
      // 9: the name was taken meanwhile (another daemon created it first), which is what we wanted.
      if (err && (err as { code?: unknown }).code !== 9) return reject(new CliUserError(name, `useradd failed: ${stderr.trim() || err.message} (executors.cli.run_as: none runs CLI agents as the daemon's user instead)`));
      res();
    });
  });
  const created = await lookupUser(name);
  if (!created) throw new CliUserError(name, 'useradd succeeded but the user cannot be found');
  return checkUnprivileged(created);
}

function checkUnprivileged(user: CliUser): CliUser {
  if (user.uid === 0 || user.gid === 0) throw new CliUserError(user.name, `has uid ${user.uid} and gid ${user.gid}; CLI agents need a user without root's ids`);
  return user;
}

/**
 * Whether `user` can access `path` as `test(1)` checks it (`-r`, `-w`, `-x`), asked of the kernel by a
 * process running as that user: mode bits, ACLs and every parent folder count.
 */
export function userCan(user: CliUser, path: string, checks: ReadonlyArray<'-r' | '-w' | '-x'>): boolean {
  const args = checks.flatMap((c, i) => (i ? ['-a', c, path] : [c, path]));
  const r = spawnSync(systemTool('test'), args, { uid: user.uid, gid: user.gid, stdio: 'ignore', timeout: 10_000, env: { PATH: '/usr/bin:/bin' } });
  return r.status === 0;
}

/** Why `user` cannot use `path` (the first folder it cannot pass, or the file itself), or undefined when it can. */
export function accessProblem(user: CliUser, path: string, checks: ReadonlyArray<'-r' | '-w' | '-x'>): string | undefined {
  const abs = resolve(path);
  if (userCan(user, abs, checks)) return undefined;
  const parents: string[] = [];
  for (let d = dirname(abs); ; d = dirname(d)) {
    parents.unshift(d);
    if (d === dirname(d)) break;
  }
  const blocked = parents.find((d) => !userCan(user, d, ['-x']));
  if (blocked) return `user ${user.name} cannot reach ${abs}: the folder ${blocked} is not searchable by it`;
  return `user ${user.name} cannot ${checks.map((c) => ({ '-r': 'read', '-w': 'write', '-x': 'execute' })[c]).join(' and ')} ${abs}`;
}
