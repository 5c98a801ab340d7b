// What is left of a process group, or of one process, read from /proc (agent-loop/process-table.ts): tests that end
// a child's whole group, or every process of an agent's user, check it is gone.
import { readProcess, readProcessTable } from '../../agent-loop/process-table.ts';

/** Live (non-zombie) processes whose process group is `pgid`. */
export function liveGroupMembers(pgid: number): number[] {
  return readProcessTable()
    .filter((p) => p.pgid === pgid && p.state !== 'Z')
    .map((p) => p.pid);
}

/** Whether `pid` is a live (non-zombie) process. */
export function processAlive(pid: number): boolean {
  const p = readProcess(pid);
  return p !== undefined && p.state !== 'Z';
}
