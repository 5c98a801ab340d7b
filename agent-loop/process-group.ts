// Ending a child's whole process group: what a stdio MCP server (mcp-stdio-transport.ts) and a coding-agent CLI
// (executors/cli/supervisor.ts) leave behind. Both start their child as the leader of a new group (detached, no
// shell), because the work is often done by a grandchild (`npx`, `bash -c`, a CLI's shells and MCP servers):
// killing the leader alone left those running for as long as their work took.

/** Sends `signal` to every process of the group (0: only checks); false when none is left (ESRCH). */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    // ESRCH: the whole group is already gone.
    return false;
  }
}

/** Whether any process of the group is still there (signal 0 checks without sending anything). */
export function processGroupAlive(pgid: number): boolean {
  return signalProcessGroup(pgid, 0);
}

export interface EndProcessGroupOptions {
  /** How long the group gets to end after SIGTERM before SIGKILL. */
  graceMs: number;
  /**
   * Settles when the caller saw its child close (the leader exited and its pipes closed): the wait ends early then.
   * A member that let go of the pipes but ignored SIGTERM is still in the group, so SIGKILL follows for it.
   */
  exited?: Promise<unknown>;
}

/**
 * SIGTERM to the whole group now; then, once `exited` settles or the grace period passes (whichever is first),
 * SIGKILL to whatever of the group is left. Resolves when that is done. The grace timer never holds the process
 * open. Calling it again sends the signals again (harmless); callers that must signal once keep their promise.
 */
export async function endProcessGroup(pgid: number, opts: EndProcessGroupOptions): Promise<void> {
  if (!signalProcessGroup(pgid, 'SIGTERM')) return;
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, opts.graceMs);
    timer.unref();
  });
  const exited = opts.exited?.then(
    () => undefined,
    () => undefined,
  );
  await Promise.race(exited ? [exited, grace] : [grace]);
  clearTimeout(timer);
  if (processGroupAlive(pgid)) signalProcessGroup(pgid, 'SIGKILL');
}
