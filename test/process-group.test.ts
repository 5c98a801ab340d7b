// Ending a whole process group (agent-loop/process-group.ts), against real processes: a shell that leads its own
// group and has started a sleeping grandchild. Both the MCP stdio transport and the CLI supervisor end their
// children this way.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { endProcessGroup, processGroupAlive } from '../agent-loop/process-group.ts';
import { liveGroupMembers } from './support/process-group.ts';

/** A shell leading a new group, with a sleeping grandchild; resolves once both run. */
async function shellWithGrandchild(script: string): Promise<{ pgid: number; closed: Promise<void> }> {
  const child = spawn('sh', ['-c', script], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const pgid = child.pid!;
  // The script prints once the grandchild started.
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  return { pgid, closed };
}

/** The group's live members once they had up to a second to die (a signal is delivered, not awaited). */
async function survivors(pgid: number): Promise<number[]> {
  for (let i = 0; i < 50 && liveGroupMembers(pgid).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
  return liveGroupMembers(pgid);
}

describe('ending a process group', () => {
  it('ends a shell and its sleeping grandchild with SIGTERM, without waiting out the grace', async () => {
    const { pgid, closed } = await shellWithGrandchild('sleep 30 & echo started; wait');
    expect(liveGroupMembers(pgid)).toHaveLength(2);
    const t0 = Date.now();
    await endProcessGroup(pgid, { graceMs: 10_000, exited: closed });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await survivors(pgid)).toEqual([]);
  });

  it('kills a group that ignores SIGTERM once the grace period has passed', async () => {
    // `trap '' TERM` is inherited: the grandchild ignores SIGTERM too, and holds the shell's stdout open.
    const { pgid, closed } = await shellWithGrandchild("trap '' TERM; sleep 30 & echo started; wait");
    expect(liveGroupMembers(pgid)).toHaveLength(2);
    const t0 = Date.now();
    await endProcessGroup(pgid, { graceMs: 300, exited: closed });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    await closed;
    expect(await survivors(pgid)).toEqual([]);
  });

  it('kills what is left behind after the leader closed: a grandchild that let go of the pipes and ignores SIGTERM', async () => {
    const { pgid, closed } = await shellWithGrandchild("trap '' TERM; sleep 30 >/dev/null 2>&1 & echo started");
    await closed; // the shell exited, its grandchild lives on in the group
    expect(liveGroupMembers(pgid)).toHaveLength(1);
    const t0 = Date.now();
    await endProcessGroup(pgid, { graceMs: 10_000, exited: closed });
    expect(Date.now() - t0).toBeLessThan(5_000); // not the grace: the child had closed already
    expect(await survivors(pgid)).toEqual([]);
  });

  it('does nothing to a group that is already gone', async () => {
    const { pgid, closed } = await shellWithGrandchild('echo started');
    await closed;
    expect(processGroupAlive(pgid)).toBe(false);
    const t0 = Date.now();
    await endProcessGroup(pgid, { graceMs: 10_000 });
    expect(Date.now() - t0).toBeLessThan(1_000);
  });
});
