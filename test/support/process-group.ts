// What is left of a process group, or of one process, read from /proc: tests that end a child's whole group, or
// every process of an agent's user, check it is gone.
import { readdirSync, readFileSync } from 'node:fs';

/** State and process group of a pid from /proc/<pid>/stat; undefined once it is gone. */
function statOf(pid: number): { state: string; pgid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command: state, ppid, pgrp, …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, pgid: Number(fields[2]) };
  } catch {
    return undefined; // the process ended while we looked
  }
}

/** Live (non-zombie) processes whose process group is `pgid`. */
export function liveGroupMembers(pgid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = statOf(Number(entry));
    if (s && s.pgid === pgid && s.state !== 'Z') found.push(Number(entry));
  }
  return found;
}

/** Whether `pid` is a live (non-zombie) process. */
export function processAlive(pid: number): boolean {
  const s = statOf(pid);
  return s !== undefined && s.state !== 'Z';
}
