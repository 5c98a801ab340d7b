// The host's processes as /proc shows them: pid, state, parent, process group and user ids. Ending a run's
// leftovers (executors/cli/user-sweep.ts) reads it; so do the tests that check a group or a user has none left.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessEntry {
  pid: number;
  /** One letter, as ps shows it: R, S, D, Z (a zombie, gone but not yet reaped), … */
  state: string;
  ppid: number;
  pgid: number;
  /** Real, effective, saved and filesystem user ids. */
  uids: readonly number[];
}

/** State, parent and group from the text of /proc/<pid>/stat (pure); undefined when it is not one. */
export function parseProcStat(text: string): Pick<ProcessEntry, 'state' | 'ppid' | 'pgid'> | undefined {
  // The command, in parentheses, may hold spaces and parentheses itself: the fields start after the last ')'.
  const close = text.lastIndexOf(')');
  if (close < 0) return undefined;
  const [state, ppid, pgid] = text.slice(close + 2).split(' ');
  if (!state || !Number.isInteger(Number(ppid)) || !Number.isInteger(Number(pgid))) return undefined;
  return { state, ppid: Number(ppid), pgid: Number(pgid) };
}

/** The four user ids of the `Uid:` line of /proc/<pid>/status (pure); undefined without one. */
export function parseStatusUids(text: string): number[] | undefined {
  const line = /^Uid:\s+(.*)$/m.exec(text)?.[1];
  const uids = line?.trim().split(/\s+/).map(Number);
  return uids && uids.length > 0 && uids.every(Number.isInteger) ? uids : undefined;
}

/** One process, or undefined when it ended while being read. */
export function readProcess(pid: number): ProcessEntry | undefined {
  try {
    const stat = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const uids = parseStatusUids(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return stat && uids ? { pid, ...stat, uids } : undefined;
  } catch {
    return undefined; // the process ended while we looked
  }
}

/** Every process of the host (of this pid namespace), as it is now. */
export function readProcessTable(): ProcessEntry[] {
  const table: ProcessEntry[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const p = readProcess(Number(entry));
    if (p) table.push(p);
  }
  return table;
}
