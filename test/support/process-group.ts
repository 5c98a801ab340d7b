// What is left of a process group, read from /proc: tests that end a child's whole group check it is gone.
import { readdirSync, readFileSync } from 'node:fs';

/** Live (non-zombie) processes whose process group is `pgid`. */
export function liveGroupMembers(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command: state, ppid, pgrp, …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}
