// A stdio MCP server as its own process group. Servers are often launched through a wrapper (`npx`, `npm exec`,
// `bash -c`) whose child does the work: killing only the wrapper left that child running for as long as its work
// took. So the server leads a new group (detached), and closing ends the whole group: stdin closed and SIGTERM to
// the group at once, SIGKILL to whatever of it is left after a short grace (process-group.ts, which the CLI
// supervisor uses for CLIs too).
import { spawn, type ChildProcess } from 'node:child_process';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { endProcessGroup } from './process-group.ts';

export const DEFAULT_KILL_GRACE_MS = 2000;
/** After the leader exits, what it wrote last is still read before the connection counts as closed. */
const LEADER_EXIT_GRACE_MS = 250;

export interface ProcessGroupStdioOptions {
  command: string;
  args: readonly string[];
  /** The declared variables, over the SDK's minimal base (PATH, HOME, USER…); nothing else of the daemon's. */
  env: Record<string, string>;
  /** Between SIGTERM and SIGKILL to the group. */
  killGraceMs?: number;
}

export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  readonly #opts: ProcessGroupStdioOptions;
  readonly #buffer = new ReadBuffer();
  #child: ChildProcess | undefined;
  /** The group's id (its leader's pid), kept after the leader exits: the rest of the group may not have. */
  #pgid: number | undefined;
  #exited: Promise<void> = Promise.resolve();
  #closing: Promise<void> | undefined;
  #closedEmitted = false;

  constructor(opts: ProcessGroupStdioOptions) {
    this.#opts = opts;
  }

  start(): Promise<void> {
    if (this.#child) return Promise.reject(new Error(`MCP server ${this.#opts.command} already started`));
    return new Promise<void>((resolve, reject) => {
      // shell: false, so the group's leader is the command itself and the kill reaches everything it starts.
      // stderr is not kept: a server may print what its declared secrets hold (and an unread pipe would block it).
      const child = spawn(this.#opts.command, this.#opts.args, { env: { ...getDefaultEnvironment(), ...this.#opts.env }, stdio: ['pipe', 'pipe', 'ignore'], detached: true, shell: false, windowsHide: true });
      this.#child = child;
      // 'close' waits for stdout to close too, which a grandchild that inherited it holds open until it is gone.
      this.#exited = new Promise<void>((res) => child.once('close', () => res()));
      child.once('close', () => this.#emitClose());
      // The leader (the server, or the wrapper that ran it) exiting ends the connection even while something it
      // left behind holds stdout open: pending calls fail at once instead of waiting out tool_timeout. close()
      // still ends the rest of the group.
      child.once('exit', () => setTimeout(() => this.#emitClose(), LEADER_EXIT_GRACE_MS).unref());
      child.once('error', (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => {
        this.#pgid = child.pid;
        resolve();
      });
      child.stdin?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('error', (err) => this.onerror?.(err));
      child.stdout?.on('data', (chunk: Buffer) => this.#receive(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#closing ? undefined : this.#child?.stdin;
    if (!stdin) return Promise.reject(new Error('MCP server not connected'));
    return new Promise<void>((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Ends the server's whole process group; settles once it is gone or was sent SIGKILL. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#terminate();
    return this.#closing;
  }

  async #terminate(): Promise<void> {
    const pgid = this.#pgid;
    if (pgid !== undefined) {
      this.#child?.stdin?.end();
      await endProcessGroup(pgid, { graceMs: this.#opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS, exited: this.#exited });
    }
    this.#buffer.clear();
    this.#emitClose();
  }

  #receive(chunk: Buffer): void {
    try {
      this.#buffer.append(chunk);
    } catch (err) {
      // Over the buffer's bound: the server is not speaking MCP; nothing it sends later can be trusted.
      this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      void this.close();
      return;
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.#buffer.readMessage();
      } catch (err) {
        this.onerror?.(err instanceof Error ? err : new Error(String(err)));
        continue; // that line is dropped; the next may be fine
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  #emitClose(): void {
    if (this.#closedEmitted) return;
    this.#closedEmitted = true;
    this.onclose?.();
  }
}
