// Runs one CLI subprocess under supervision: no shell, its own process group, stdin closed (or the prompt
// written and ended), stdout split into capped lines, a bounded stderr tail, and the whole group killed
// (SIGTERM, grace, SIGKILL) on abort, deadline, idle silence or a runaway line. Decisions about what the
// output means belong to the executors; this file only keeps the process in bounds.
import { spawn } from 'node:child_process';
import { endProcessGroup } from '../../agent-loop/process-group.ts';
import { LineSplitter, LineTooLongError, TailBuffer } from './line-splitter.ts';

export interface SuperviseOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  /** The complete environment of the child (see child-env.ts); nothing is inherited. */
  env: Record<string, string>;
  /** The user and group the child runs as (CLI agents under run_as, see run-as.ts); default the daemon's. */
  uid?: number;
  gid?: number;
  /** Written to stdin, which is then closed; without it stdin is /dev/null (a CLI never waits on an open pipe). */
  stdin?: string;
  /** Wall-clock limit; the agent's behavior.max_duration is enforced by the caller's signal too. */
  deadlineMs: number;
  /** No stdout or stderr for this long means the CLI is stuck. */
  idleMs: number;
  /** Between SIGTERM and SIGKILL to the group. */
  graceMs: number;
  /** One stdout line longer than this fails the run (default 8 MiB). */
  maxLineBytes?: number;
  /** All of stdout past this many bytes stops the run (`output_too_large`) before the excess is read (behavior.limits.max_cli_output_bytes). */
  maxOutputBytes?: number;
  stderrTailBytes?: number;
  signal?: AbortSignal;
  /** Each complete stdout line, in order. Exceptions thrown here stop the run like a runaway line. */
  onLine: (line: string) => void;
}

/** Why the supervisor stopped the child; absent when it exited by itself. */
export type StopReason = 'aborted' | 'deadline' | 'idle' | 'line_too_long' | 'output_too_large' | 'parser_error';

export interface SupervisedExit {
  pid: number | undefined;
  code: number | null;
  signal: NodeJS.Signals | null;
  stoppedBy?: StopReason;
  /** Detail for `stoppedBy` (e.g. the line cap), or the spawn failure. */
  detail?: string;
  /** The child could not be started at all (ENOENT, EACCES). */
  spawnError?: string;
  stderrTail: string;
  /** Bytes of stdout read (at most maxOutputBytes plus the chunk that passed it), and the head of them. */
  stdoutBytes: number;
  stdoutHead: string;
  /** The bound stdout was read against (SuperviseOptions.maxOutputBytes), when there was one. */
  maxOutputBytes?: number;
  durationMs: number;
}

/** Bytes of stdout kept as its head, for the record of a run stopped for too much output. */
const STDOUT_HEAD_BYTES = 2_000;

export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;

let running = 0;

/** CLI subprocesses running in this process right now (the metrics gauge reads it). */
export function runningSubprocessCount(): number {
  return running;
}

export function supervise(opts: SuperviseOptions): Promise<SupervisedExit> {
  const started = Date.now();
  const splitter = new LineSplitter(opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  const stderr = new TailBuffer(opts.stderrTailBytes ?? 8 * 1024);
  let stdoutBytes = 0;
  const head: Buffer[] = [];
  let headBytes = 0;

  return new Promise<SupervisedExit>((resolve) => {
    // detached: the child leads a new process group, so one kill(-pid) reaches every shell, MCP server and
    // test runner it started. Never a shell: a kill would reach only the shell.
    const child = spawn(opts.command, opts.args, {
      cwd: opts.cwd,
      env: opts.env,
      // Node drops the supplementary groups too when uid/gid are set, so nothing of root's remains.
      uid: opts.uid,
      gid: opts.gid,
      stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
      shell: false,
      windowsHide: true,
    });
    const pid = child.pid;
    let stoppedBy: StopReason | undefined;
    let detail: string | undefined;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let ending: Promise<void> | undefined;
    let settled = false;
    /** Settles at 'close': the leader is gone and so is every holder of its pipes. */
    let closed!: () => void;
    const whenClosed = new Promise<void>((res) => (closed = res));
    if (pid !== undefined) running++;

    const timers: NodeJS.Timeout[] = [];
    const finish = (extra: Partial<SupervisedExit> = {}): void => {
      if (settled) return;
      settled = true;
      if (pid !== undefined) running--;
      for (const t of timers) clearTimeout(t);
      clearTimeout(idleTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      const stdoutHead = Buffer.concat(head).toString('utf8');
      resolve({ pid, code: exited?.code ?? null, signal: exited?.signal ?? null, stoppedBy, detail, stderrTail: stderr.text(), stdoutBytes, stdoutHead, ...(opts.maxOutputBytes !== undefined ? { maxOutputBytes: opts.maxOutputBytes } : {}), durationMs: Date.now() - started, ...extra });
    };

    /**
     * SIGTERM to the group now; SIGKILL to what is left of it after the grace period, or as soon as the child
     * closed (a member that let go of the pipes but ignored SIGTERM is still there); once.
     */
    const terminate = (): void => {
      if (ending || pid === undefined) return;
      ending = endProcessGroup(pid, { graceMs: opts.graceMs, exited: whenClosed });
    };
    const stop = (why: StopReason, text?: string): void => {
      // Once the leader exited, only the output still draining can fail the run; timers no longer can.
      if (stoppedBy || (exited && (why === 'aborted' || why === 'deadline' || why === 'idle'))) return;
      stoppedBy = why;
      detail = text;
      terminate();
    };

    const onAbort = (): void => stop('aborted', String(opts.signal?.reason ?? 'aborted'));
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
    timers.push(setTimeout(() => stop('deadline', `no result within ${opts.deadlineMs} ms`), opts.deadlineMs));
    const idleTimer = setTimeout(() => stop('idle', `no output for ${opts.idleMs} ms`), opts.idleMs);
    const alive = (): void => {
      idleTimer.refresh();
    };

    child.on('error', (err) => {
      // Spawn failures (ENOENT, EACCES) come without a process; other errors precede 'close'.
      if (pid === undefined) finish({ spawnError: err.message });
    });

    if (child.stdin) {
      child.stdin.on('error', () => {
        // EPIPE: the child exited or closed stdin early; its exit says what happened.
      });
      child.stdin.end(opts.stdin);
    }

    child.stdout?.on('data', (chunk: Buffer) => {
      alive();
      if (stoppedBy) return; // after a stop, output is drained and ignored
      stdoutBytes += chunk.length;
      if (headBytes < STDOUT_HEAD_BYTES) {
        const part = chunk.subarray(0, STDOUT_HEAD_BYTES - headBytes);
        head.push(Buffer.from(part));
        headBytes += part.length;
      }
      // The chunk that passes the bound is not parsed: what is held stays within it.
      if (opts.maxOutputBytes !== undefined && stdoutBytes > opts.maxOutputBytes) return stop('output_too_large', `more than ${opts.maxOutputBytes} bytes of output`);
      try {
        for (const line of splitter.push(chunk)) opts.onLine(line);
      } catch (err) {
        if (err instanceof LineTooLongError) stop('line_too_long', err.message);
        else stop('parser_error', err instanceof Error ? err.message : String(err));
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      alive();
      stderr.push(chunk);
    });

    // stdout may still deliver data after 'exit'; the unterminated last line is flushed only at its end.
    child.stdout?.on('end', () => {
      if (stoppedBy) return;
      try {
        const last = splitter.end();
        if (last !== undefined) opts.onLine(last);
      } catch (err) {
        stop('parser_error', err instanceof Error ? err.message : String(err));
      }
    });

    child.on('exit', (code, signal) => {
      exited = { code, signal };
      // The leader is gone; whatever it left behind in its group (MCP servers, shells) goes too.
      terminate();
    });
    // 'close' comes once every holder of the pipes is gone, i.e. after the group is dead.
    child.on('close', () => {
      closed();
      finish();
    });
  });
}
