// Ending every process of a CLI agent's own user once its run is over. The supervisor ends the CLI's process group,
// but a tool the agent runs can leave that group (`setsid`, a daemonising double fork) and sleep on, under the
// same uid as the agent's next run: it could read that run's gateway token from /proc/<pid>/environ. When the
// last run of a user in this process ends, and at daemon start (what a daemon killed with -9 left), every
// process of that user that no one else holds is killed.
import { readProcessTable, type ProcessEntry } from '../../agent-loop/process-table.ts';
import type { CliUser } from './run-as.ts';

/**
 * The processes of `uid` a sweep ends (pure): the live ones, except those a live process of another user holds
 * as an ancestor (another warren on this host running the same agent right now: its CLI is its daemon's child).
 * Init does not count as holding, nor does this daemon (`selfPid`): a leftover is reparented to init, or to the
 * daemon when the daemon is init (a container), and this daemon sweeps only when it has no run of that user.
 */
export function sweepTargets(table: readonly ProcessEntry[], uid: number, selfPid: number): number[] {
  const byPid = new Map(table.map((p) => [p.pid, p]));
  const ofUser = (p: ProcessEntry): boolean => p.uids.includes(uid);
  const held = (p: ProcessEntry): boolean => {
    const seen = new Set<number>();
    for (let q = byPid.get(p.ppid); q && !seen.has(q.pid); q = byPid.get(q.ppid)) {
      seen.add(q.pid);
      if (q.pid === 1 || q.pid === selfPid) return false;
      if (!ofUser(q)) return true;
    }
    return false;
  };
  return table.filter((p) => ofUser(p) && p.state !== 'Z' && !held(p)).map((p) => p.pid);
}

export interface SweepResult {
  user: string;
  /** Processes sent SIGKILL. */
  killed: number[];
  /** Still there when the grace period ran out (stuck in the kernel, or forking faster than killed). */
  survivors: number[];
  /** The process table could not be read (no /proc): nothing was swept. */
  error?: string;
}

export interface SweepOptions {
  /** How long the sweep keeps killing and looking before it gives up (executors.cli.kill_grace). */
  graceMs: number;
  selfPid?: number;
  /** The process table (default /proc) and the kill; replaced in tests of the loop alone. */
  read?: () => readonly ProcessEntry[];
  kill?: (pid: number) => void;
}

/**
 * SIGKILL to every process sweepTargets names, looked for again until none is left or the grace runs out: a
 * process forking as it is killed leaves children the next look finds. SIGKILL at once: the run is over and its
 * group had its SIGTERM and grace already; what is left outside it was never meant to outlive it.
 */
export async function sweepUser(user: CliUser, opts: SweepOptions): Promise<SweepResult> {
  const read = opts.read ?? readProcessTable;
  const kill = opts.kill ?? ((pid: number) => process.kill(pid, 'SIGKILL'));
  const deadline = Date.now() + opts.graceMs;
  const killed = new Set<number>();
  for (;;) {
    const targets = sweepTargets(read(), user.uid, opts.selfPid ?? process.pid);
    if (targets.length === 0 || Date.now() > deadline) return { user: user.name, killed: [...killed], survivors: targets };
    for (const pid of targets) {
      try {
        kill(pid);
        killed.add(pid);
      } catch {
        // ESRCH: it ended meanwhile
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Runs of each uid under way in this process, the sweep of a uid under way, and how many runs are not over yet. */
const active = new Map<number, number>();
const sweeping = new Map<number, Promise<unknown>>();
let open = 0;

/** Runs of CLI agents as their own users not over yet, their sweeps included (the daemon's shutdown waits for them). */
export function openUserRuns(): number {
  return open;
}

export interface UserRun {
  /**
   * Ends the run; when it was the last of its user in this process, sweeps that user (undefined otherwise: a run of
   * the same user still under way would be killed too: a shared run_as user, or an agent with concurrency). Once.
   */
  end(): Promise<SweepResult | undefined>;
}

/**
 * A run of `user` begins (after a sweep of that user under way, which would kill it): until it ends, no other run's
 * end sweeps that user.
 */
export async function beginUserRun(user: CliUser, graceMs: number): Promise<UserRun> {
  open++;
  try {
    await sweeping.get(user.uid);
  } catch {
    // a failed sweep does not stop the next run
  }
  active.set(user.uid, (active.get(user.uid) ?? 0) + 1);
  let ended: Promise<SweepResult | undefined> | undefined;
  const end = async (): Promise<SweepResult | undefined> => {
    try {
      const left = (active.get(user.uid) ?? 1) - 1;
      if (left > 0) {
        active.set(user.uid, left);
        return undefined;
      }
      active.delete(user.uid);
      // A sweep that cannot look (no /proc) says so; it does not turn the run's ending into a failure.
      const sweep = sweepUser(user, { graceMs }).catch((err: unknown): SweepResult => ({ user: user.name, killed: [], survivors: [], error: err instanceof Error ? err.message : String(err) }));
      sweeping.set(user.uid, sweep);
      try {
        return await sweep;
      } finally {
        sweeping.delete(user.uid);
      }
    } finally {
      open--;
    }
  };
  return { end: () => (ended ??= end()) };
}
