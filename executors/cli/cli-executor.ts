// The executor shared by the four coding-agent CLIs: takes a concurrency slot, prepares the workspace and the
// activation's private files, builds the child's environment from the allow-list, runs the CLI under the
// supervisor and lets the CLI's adapter read the output. The adapter decides; this file only does the I/O.
import { accessSync, constants, realpathSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { ExecutorSetupError, type ActivationInput, type Executor, type ExecutorResult } from '../executor.ts';
import { GENERAL_ONLY } from '../../memory/audience.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import type { CliAdapter } from './adapter.ts';
import { buildChildEnv } from './child-env.ts';
import type { Semaphore } from './concurrency.ts';
import { DEFAULT_POSTING_TOOLS, mcpServersFor, type HubMcpLauncher, type McpLaunch } from './mcp.ts';
import { missingKey, providerNeedsKey } from './provider-env.ts';
import { accessProblem, CliUserError, type CliUser, type CliUsers } from './run-as.ts';
import { boundedAnswer } from './outcome.ts';
import { supervise } from './supervisor.ts';
import { beginUserRun, type UserRun } from './user-sweep.ts';
import { ensureWorkspace, type AgentDirs } from './workspace.ts';

export interface CliExecutorOptions {
  adapter: CliAdapter;
  /** Executable path or name (looked up on PATH); default the adapter's binary name. */
  binary?: string;
  /** Parent of the per-agent workspaces (`workspaces/<agent>/`). */
  workspacesRoot: string;
  /** Looks up a secret by variable name; the agent's key is the only secret a child receives. */
  secret: (name: string) => string | undefined;
  /** The daemon's environment, read only through the allow-list. */
  parentEnv: Readonly<Record<string, string | undefined>>;
  /** Starts warren's hub MCP server for the agent; without it the daemon posts the CLI's answer. */
  hubMcp?: HubMcpLauncher;
  postingTools?: readonly string[];
  /** Shared by all CLI executors: `executors.cli.max_concurrent`. */
  slots: Semaphore;
  graceMs?: number;
  /** No output for this long kills the run (goose goes quiet during long tool arguments: be generous). */
  idleMs?: number;
  maxLineBytes?: number;
  /** The users CLIs run as (`executors.cli.run_as`, see run-as.ts); undefined: the daemon's user. */
  runAs?: CliUsers;
}

/** Where npm installs the CLIs warren pins (claude-code, opencode). */
const PINNED_BIN_DIR = resolve(import.meta.dirname, '..', '..', 'node_modules', '.bin');

export class CliExecutor implements Executor {
  readonly #opts: CliExecutorOptions;
  #resolvedBinary: string | null | undefined;
  /** Why the run_as user cannot run the binary ('' when it can), checked once. */
  #binaryAccess: string | undefined;
  /** Folders the run_as user was seen to reach (the check spawns a process: once per folder). */
  readonly #reachable = new Set<string>();

  constructor(opts: CliExecutorOptions) {
    this.#opts = opts;
  }

  get type(): CliAdapter['type'] {
    return this.#opts.adapter.type;
  }

  /** The executable's absolute path, or undefined when it is not installed (checked once). */
  binaryPath(): string | undefined {
    if (this.#resolvedBinary === undefined) {
      // PATH first, then the CLIs pinned as warren's own dependencies (node_modules/.bin), which npm scripts
      // put on PATH but a plain `node bin/warren.js` does not.
      const path = [this.#opts.parentEnv.PATH, PINNED_BIN_DIR].filter(Boolean).join(delimiter);
      this.#resolvedBinary = findExecutable(this.#opts.binary ?? this.#opts.adapter.binary, path) ?? null;
    }
    return this.#resolvedBinary ?? undefined;
  }

  /** Why this agent cannot run here (CLI missing, key missing), or undefined. Checked at load. */
  missingRequirement(def: AgentDefinition): string | undefined {
    const name = this.#opts.binary ?? this.#opts.adapter.binary;
    if (!this.binaryPath()) return `the ${this.#opts.adapter.type} CLI (${name}) is not installed here: not found${name.includes('/') ? '' : ' on PATH or in node_modules/.bin'}`;
    const blocked = this.#runAsCannotRun();
    if (blocked) return blocked;
    return missingKey(def.config, this.#opts.secret) ?? this.#opts.adapter.missingRequirement?.(def);
  }

  /**
   * A CLI installed under a folder only root may enter (/root is mode 700) cannot be started as the run_as
   * user; spawn would fail with a bare EACCES, so say which path and what to do.
   */
  #runAsCannotRun(): string | undefined {
    // Every such user is alike to the binary's folders (neither owner nor group): the base one stands for all.
    const user = this.#opts.runAs?.base;
    const path = this.binaryPath();
    if (!user || !path) return undefined;
    if (this.#binaryAccess === undefined) {
      const problem = accessProblem(user, realpathSync(path), ['-r', '-x']);
      this.#binaryAccess = problem ? `the ${this.#opts.adapter.type} CLI (${path}) cannot be run as executors.cli.run_as: ${problem}; install it where that user can read it (a world-readable path such as /usr/local or /opt) or set executors.cli.run_as: none` : '';
    }
    return this.#binaryAccess || undefined;
  }

  async run(input: ActivationInput): Promise<ExecutorResult> {
    const def = input.definition;
    const missing = this.missingRequirement(def);
    if (missing) throw new ExecutorSetupError(def.name, missing);
    const runAs = await this.#opts.runAs?.forAgent(def.name).catch((err: unknown) => {
      throw err instanceof CliUserError ? new ExecutorSetupError(def.name, err.message) : err;
    });
    const release = await this.#opts.slots.acquire(input.signal);
    // Whatever the run leaves under its user goes when it ends, however it ends (user-sweep.ts).
    const userRun = runAs ? await beginUserRun(runAs, this.#graceMs) : undefined;
    try {
      const scratch = await mkdtemp(join(tmpdir(), `warren-${def.name}-`));
      try {
        if (runAs) await chown(scratch, runAs.uid, runAs.gid);
        return await this.#run(input, scratch, runAs, userRun);
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    } finally {
      await userRun?.end();
      release();
    }
  }

  get #graceMs(): number {
    return this.#opts.graceMs ?? 5_000;
  }

  async #run(input: ActivationInput, scratch: string, runAs: CliUser | undefined, userRun: UserRun | undefined): Promise<ExecutorResult> {
    const def = input.definition;
    const dirs = await ensureWorkspace(this.#opts.workspacesRoot, def.name, runAs);
    if (runAs) {
      this.#assertReachable(def.name, runAs, dirs.workspace, dirs.workspace, 'its workspace', 'choose executors.cli.workspaces under folders others may search');
      // Each activation has a new scratch folder in the same parent: checked once per parent.
      this.#assertReachable(def.name, runAs, scratch, dirname(scratch), 'the temporary folder', "set the daemon's TMPDIR to a folder others may search");
    }
    const hub = this.#opts.hubMcp?.(def, input.id, input.memoryAudience ?? GENERAL_ONLY);
    try {
      return await this.#supervised(input, scratch, dirs, hub, runAs, userRun);
    } finally {
      hub?.release?.(); // the hub server's credentials end with the activation
    }
  }

  /** A folder the run_as user cannot use fails the activation naming the folder in the way, not with a bare EACCES. */
  #assertReachable(agent: string, user: CliUser, dir: string, key: string, what: string, fix: string): void {
    if (this.#reachable.has(key)) return;
    const problem = accessProblem(user, dir, ['-r', '-w', '-x']);
    if (problem) throw new ExecutorSetupError(agent, `${what} cannot be used as executors.cli.run_as: ${problem}; ${fix}`);
    this.#reachable.add(key);
  }

  async #supervised(input: ActivationInput, scratch: string, dirs: AgentDirs, hub: McpLaunch | undefined, runAs: CliUser | undefined, userRun: UserRun | undefined): Promise<ExecutorResult> {
    const { adapter } = this.#opts;
    const { workspace, stateDir } = dirs;
    const def = input.definition;
    const { servers, skipped } = mcpServersFor(def, hub);
    const note = (event: string, detail?: string): void => void input.events.emit({ type: 'cli_event', cli: adapter.type, event, detail });
    if (skipped.length) note('mcp_servers_skipped', `built-in servers not available to CLI agents yet: ${skipped.join(', ')}`);

    const invocation = adapter.invocation({
      activationId: input.id,
      definition: def,
      context: input.context,
      workspace,
      scratch,
      stateDir,
      // Keyless providers (a local model server) get no key, even though api_key_env has a default.
      apiKey: providerNeedsKey(def.config.brain.provider) ? this.#opts.secret(def.config.brain.api_key_env) : undefined,
      mcpServers: servers,
    });
    for (const [file, content] of Object.entries(invocation.files)) {
      await writeFile(file, content, { mode: 0o600 });
      if (runAs) await chown(file, runAs.uid, runAs.gid);
    }
    const parser = adapter.parser({ postingTools: this.#opts.postingTools ?? DEFAULT_POSTING_TOOLS, maxSteps: def.config.behavior.max_iterations });
    // TRACEPARENT (the OpenTelemetry convention for processes): a CLI that traces joins the activation's trace.
    // Another user gets a HOME, temp folder and name of its own: the daemon's are not its to read or write.
    const identity = runAs ? { HOME: dirs.home, TMPDIR: scratch, USER: runAs.name, LOGNAME: runAs.name } : {};
    const env = buildChildEnv(this.#opts.parentEnv, { allow: adapter.inheritEnv, set: { ...identity, ...invocation.env, TRACEPARENT: input.traceparent } });

    input.events.emit({ type: 'step_start', step: 1, max_steps: def.config.behavior.max_iterations });
    const exit = await supervise({
      command: this.binaryPath()!,
      args: invocation.args,
      cwd: workspace,
      env,
      uid: runAs?.uid,
      gid: runAs?.gid,
      stdin: invocation.stdin,
      deadlineMs: def.config.behavior.max_duration,
      idleMs: this.#opts.idleMs ?? 180_000,
      graceMs: this.#graceMs,
      maxLineBytes: this.#opts.maxLineBytes,
      maxOutputBytes: def.config.behavior.limits.max_cli_output_bytes,
      signal: input.signal,
      onLine: (line) => {
        parser.line(line);
        for (const n of parser.drainNotes()) note(n.event, n.detail);
      },
    });
    // Before the run is told ended: what its user left outside the group (setsid, a double fork) is gone too.
    const swept = await userRun?.end();
    if (swept?.killed.length) note('leftovers_killed', `${swept.killed.length} process(es) of ${swept.user} outlived the CLI: killed`);
    if (swept?.error) note('leftovers_unchecked', `processes of ${swept.user} could not be looked for: ${swept.error}`);
    if (swept?.survivors.length) note('leftovers_survived', `${swept.survivors.length} process(es) of ${swept.user} still there after ${this.#graceMs} ms: ${swept.survivors.join(', ')}`);
    // An answer over behavior.limits.max_answer_bytes is never posted: an `oversized` failure instead.
    const result = boundedAnswer(parser.finish(exit), def.config.behavior.limits.max_answer_bytes);
    for (const n of parser.drainNotes()) note(n.event, n.detail);
    note('exit', `${exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`}${exit.stoppedBy ? `, stopped: ${exit.stoppedBy}` : ''} after ${exit.durationMs} ms`);
    if (result.error) input.events.emit({ type: 'error', message: result.error.message });
    if (result.text) input.events.emit({ type: 'agent_response', text: result.text, partial: result.partial });
    input.events.emit({ type: 'activation_end', termination: result.termination, partial: result.partial, usage: result.usage });
    return result;
  }
}

/** Whether a program is installed, looked up on `pathVar` at most once a minute per name. */
export function programLookup(pathVar: string | undefined, now: () => number = Date.now): (name: string) => boolean {
  const seen = new Map<string, { found: boolean; at: number }>();
  return (name) => {
    const hit = seen.get(name);
    if (hit && now() - hit.at < 60_000) return hit.found;
    const found = findExecutable(name, pathVar) !== undefined;
    seen.set(name, { found, at: now() });
    return found;
  };
}

/** An executable by path, or by name on PATH; undefined when there is none. */
export function findExecutable(name: string, pathVar: string | undefined): string | undefined {
  const candidates = name.includes('/') ? [isAbsolute(name) ? name : resolve(name)] : (pathVar ?? '').split(delimiter).filter(Boolean).map((d) => join(d, name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return undefined;
}
