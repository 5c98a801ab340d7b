// Ending what a CLI agent's user left behind (executors/cli/user-sweep.ts): which processes a sweep ends, as a table
// over process tables; the loop that kills until none is left; and when a run's end sweeps at all. The sweep against
// a real separate user, a real daemon and a real setsid leftover is test/security/host-containment.test.ts.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { parseProcStat, parseStatusUids, readProcessTable, type ProcessEntry } from '../agent-loop/process-table.ts';
import { ensureCliUser } from '../executors/cli/run-as.ts';
import { beginUserRun, openUserRuns, sweepTargets, sweepUser } from '../executors/cli/user-sweep.ts';
import { waitFor } from './support/hub-api.ts';
import { processAlive } from './support/process-group.ts';

const U = 990; // the agent's uid
const SELF = 500; // the daemon
const p = (pid: number, ppid: number, uid: number, state = 'S'): ProcessEntry => ({ pid, ppid, pgid: pid, state, uids: [uid, uid, uid, uid] });
const init = p(1, 0, 0);
const daemon = p(SELF, 1, 0);

describe('which processes of the agent\'s user a sweep ends', () => {
  it.each<[string, ProcessEntry[], number[]]>([
    ['none of the user', [init, daemon, p(600, SELF, 0)], []],
    ['a setsid leftover reparented to init', [init, daemon, p(700, 1, U)], [700]],
    ['the leftover and the children it forked', [init, daemon, p(700, 1, U), p(701, 700, U), p(702, 701, U)], [700, 701, 702]],
    ['what is still a child of this daemon (its run is over)', [init, daemon, p(710, SELF, U), p(711, 710, U)], [710, 711]],
    ['a zombie is gone already', [init, daemon, p(720, 1, U, 'Z')], []],
    ["another daemon's live run of the same agent (held by another user's process)", [init, daemon, p(800, 1, 0), p(801, 800, U), p(802, 801, U)], []],
    ['a leftover beside another daemon\'s live run: only the leftover', [init, p(800, 1, 0), p(801, 800, U), p(730, 1, U)], [730]],
    ['a setuid program the user started counts as the user\'s (real uid)', [init, { pid: 740, ppid: 1, pgid: 740, state: 'S', uids: [U, 0, 0, 0] }], [740]],
    ['this daemon as init (a container): leftovers reparented to it', [p(1, 0, 0), p(750, 1, U)], [750]],
    ['a parent loop in a torn read ends the walk', [init, p(760, 761, U), p(761, 760, U)], [760, 761]],
    ['an orphan whose parent is not in the table', [init, p(770, 99999, U)], [770]],
  ])('%s', (_what, table, want) => {
    expect(sweepTargets(table, U, table.some((e) => e.pid === SELF) ? SELF : 1)).toEqual(want);
  });
});

describe('reading /proc', () => {
  it.each<[string, string, ReturnType<typeof parseProcStat>]>([
    ['a plain command', '123 (sleep) S 1 123 123 0 -1', { state: 'S', ppid: 1, pgid: 123 }],
    ['a command with spaces and parentheses', '124 (a) b (c)) Z 9 8 8 0', { state: 'Z', ppid: 9, pgid: 8 }],
    ['not a stat line', 'garbage', undefined],
  ])('stat: %s', (_what, text, want) => {
    expect(parseProcStat(text)).toEqual(want);
  });

  it.each<[string, string, number[] | undefined]>([
    ['the four ids', 'Name:\tsh\nUid:\t990\t990\t990\t990\nGid:\t5\t5\t5\t5\n', [990, 990, 990, 990]],
    ['a setuid program', 'Uid:\t990\t0\t0\t0\n', [990, 0, 0, 0]],
    ['no Uid line', 'Name:\tsh\n', undefined],
  ])('status: %s', (_what, text, want) => {
    expect(parseStatusUids(text)).toEqual(want);
  });
});

describe('the sweep', () => {
  const user = { name: 'warren-agent-coder', uid: U, gid: U };

  it('kills until none is left: children forked as their parent dies are found by the next look', async () => {
    // A process table that changes as kills land: 700 forks 701 before it dies.
    let table: ProcessEntry[] = [init, daemon, p(700, 1, U)];
    const killed: number[] = [];
    const result = await sweepUser(user, {
      graceMs: 10_000,
      selfPid: SELF,
      read: () => table,
      kill: (pid) => {
        killed.push(pid);
        table = table.filter((e) => e.pid !== pid);
        if (pid === 700) table.push(p(701, 1, U));
      },
    });
    expect(result).toEqual({ user: user.name, killed: [700, 701], survivors: [] });
    expect(killed).toEqual([700, 701]);
  });

  it('gives up after the grace period and names what survived', async () => {
    const stuck = p(700, 1, U, 'D');
    const result = await sweepUser(user, { graceMs: 50, selfPid: SELF, read: () => [init, daemon, stuck], kill: () => undefined });
    expect(result.survivors).toEqual([700]);
  });
});

describe('when a run\'s end sweeps its user', () => {
  // A uid no process has: the sweeps find nothing, quickly.
  const user = { name: 'nobody-here', uid: 2 ** 30 + 7, gid: 2 ** 30 + 7 };

  it('only the last run of a user ends with a sweep; a shared user with a run under way is left alone', async () => {
    const before = openUserRuns();
    const a = await beginUserRun(user, 1_000);
    const b = await beginUserRun(user, 1_000);
    expect(openUserRuns()).toBe(before + 2);
    expect(await a.end()).toBeUndefined();
    expect(await a.end()).toBeUndefined(); // once
    expect(await b.end()).toEqual({ user: user.name, killed: [], survivors: [] });
    expect(openUserRuns()).toBe(before);
    // A new run after the last ended sweeps again at its end.
    const c = await beginUserRun(user, 1_000);
    expect(await c.end()).toEqual({ user: user.name, killed: [], survivors: [] });
  });
});

describe('sweeping a real separate user', () => {
  const name = `wsw${randomBytes(3).toString('hex')}`;
  afterAll(async () => {
    await new Promise((r) => execFile('pkill', ['-KILL', '-u', name], r));
    await new Promise((r) => execFile('userdel', [name], r));
  });

  it("kills its setsid leftover and spares its process another user's live process holds", async () => {
    expect(process.getuid?.(), 'a separate user needs a root test run, as in CI').toBe(0);
    const user = await ensureCliUser(name);
    const asUser = { uid: user.uid, gid: user.gid, detached: true, stdio: 'ignore' as const };
    // A leftover: setsid forks (its caller leads a group), so the sleep is orphaned to init in a new session.
    spawn('setsid', ['sleep', '600'], asUser).unref();
    // Held: root's shell waits for the user's sleep (as a daemon waits for its CLI).
    const holder = spawn('sh', ['-c', `setpriv --reuid=${user.uid} --regid=${user.gid} --clear-groups sleep 601 & wait`], { detached: true, stdio: 'ignore' });
    const sleeps = (): ProcessEntry[] => readProcessTable().filter((p) => p.uids[0] === user.uid && p.state !== 'Z');
    const [leftover, held] = await waitFor('both sleeps', () => {
      const mine = sleeps();
      const orphan = mine.find((p) => p.ppid === 1);
      const child = mine.find((p) => p.ppid === holder.pid);
      return orphan && child ? [orphan.pid, child.pid] : undefined;
    });
    const result = await sweepUser(user, { graceMs: 5_000 });
    expect(result).toEqual({ user: name, killed: [leftover], survivors: [] });
    await waitFor('the leftover gone', () => (processAlive(leftover) ? undefined : true), 5_000);
    expect(processAlive(held)).toBe(true);
    process.kill(-holder.pid!, 'SIGKILL');
  });
});
