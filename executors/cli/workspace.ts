// One working directory per agent (workspaces/<agent>/) and its CLI state (workspaces/.state/<agent>/),
// created on demand. A workspace keeps agents' files apart; when CLI agents run as their own user
// (run-as.ts) both folders belong to that user and nobody else can read them, and the parents only let
// that user pass through, not list them.
import { existsSync } from 'node:fs';
import { chmod, lchown, lstat, mkdir, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { makePrivate, type ModeFix } from '../../local-hub/private-files.ts';
import { AGENT_NAME } from '../../store/agent-config.ts';
import type { CliUser } from './run-as.ts';

export interface AgentDirs {
  /** The CLI's working directory. */
  workspace: string;
  /** The CLI's own state (config dir, sessions, HOME when it runs as another user), kept between activations. */
  stateDir: string;
  /** HOME of a CLI run as another user (the daemon's HOME is not its to read): `<stateDir>/home`. */
  home: string;
}

export async function ensureWorkspace(root: string, agent: string, owner?: CliUser): Promise<AgentDirs> {
  // Agent names are validated at load; checked again because the name becomes a path.
  if (!AGENT_NAME.test(agent)) throw new Error(`agent name "${agent}" cannot name a workspace folder`);
  const base = resolve(root);
  // Names cannot start with a dot, so `.state` never collides with an agent's workspace.
  const stateRoot = join(base, '.state');
  const dirs = { workspace: join(base, agent), stateDir: join(stateRoot, agent), home: join(stateRoot, agent, 'home') };
  await mkdir(dirs.workspace, { recursive: true, mode: 0o700 });
  await mkdir(dirs.stateDir, { recursive: true, mode: 0o700 });
  if (owner) await mkdir(dirs.home, { recursive: true, mode: 0o700 });
  if (owner) {
    // Search but not read: the CLI's user reaches its own folders without listing the other agents'.
    await chmod(base, PASS_THROUGH);
    await chmod(stateRoot, PASS_THROUGH);
    for (const dir of [dirs.workspace, dirs.stateDir, dirs.home]) await ownTree(dir, owner);
  } else {
    // The CLI runs as the daemon's user: no one else needs in (an older warren made them 0755).
    for (const dir of [base, stateRoot, dirs.workspace, dirs.stateDir]) makePrivate(dir);
  }
  return dirs;
}

/** The mode of the workspaces root and `.state` when CLI agents run as their own users: others pass, not list. */
const PASS_THROUGH = 0o711;

/**
 * At start: every agent's workspace and state folder closed to other users (an older warren left them 0755), and
 * the two roots only passable, so an agent cannot read another's before that one's next run hands it to its
 * owner. `isolated`: CLI agents run as their own users, who must pass through the roots.
 */
export async function closeWorkspaces(root: string, isolated: boolean): Promise<ModeFix[]> {
  const base = resolve(root);
  if (!existsSync(base)) return [];
  const stateRoot = join(base, '.state');
  const fixes: ModeFix[] = [];
  for (const dir of [base, stateRoot]) {
    const st = await lstat(dir).catch(() => undefined);
    if (!st?.isDirectory()) continue;
    if (!isolated) {
      const fix = makePrivate(dir);
      if (fix) fixes.push(fix);
    } else if ((st.mode & 0o777) !== PASS_THROUGH) {
      await chmod(dir, PASS_THROUGH);
      // Said only when it closes something: a 0700 root opened to passing (run_as newly on) exposes nothing.
      if (st.mode & 0o066) fixes.push({ path: dir, from: st.mode & 0o777, to: PASS_THROUGH });
    }
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || (dir === base && entry.name === '.state')) continue;
      const fix = makePrivate(join(dir, entry.name));
      if (fix) fixes.push(fix);
    }
  }
  return fixes;
}

/**
 * Gives `dir` to `owner` (mode 700). Files an earlier run left under another owner (a daemon that ran CLIs
 * as root before run_as) are handed over too, so the agent can keep working on them.
 */
async function ownTree(dir: string, owner: CliUser): Promise<void> {
  const st = await lstat(dir);
  // `home` lies in a folder the agent owns: it could have put a symlink there, and chmod would follow it.
  if (!st.isDirectory()) throw new Error(`${dir} is not a folder (a symlink the agent made?); remove it`);
  if (st.uid !== owner.uid || st.gid !== owner.gid) await chownTree(dir, owner);
  if ((st.mode & 0o777) !== 0o700) await chmod(dir, 0o700);
}

/** lchown, never chown: a symlink the agent planted must not hand it the file it points to. */
async function chownTree(path: string, owner: CliUser): Promise<void> {
  const st = await lstat(path);
  if (st.uid !== owner.uid || st.gid !== owner.gid) await lchown(path, owner.uid, owner.gid);
  if (!st.isDirectory()) return;
  for (const entry of await readdir(path)) await chownTree(join(path, entry), owner);
}
