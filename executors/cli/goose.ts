// goose: `goose run` with stream-json output (docs/executors.md §2; source only, live behaviour unverified). The
// prompt goes through stdin (`-i -`), the user's profile is dropped (`--no-profile`) and only warren's MCP
// servers are loaded as extensions, because GOOSE_MODE=auto ignores per-tool NeverAllow: what goose may do is
// decided by which extensions it gets. Any `error` event fails the run, even when `complete` follows.
import { join } from 'node:path';
import type { AgentConfig } from '../../store/agent-config.ts';
import type { ExecutorResult } from '../executor.ts';
import type { CliAdapter, CliNote, Invocation, InvocationContext, OutputParser } from './adapter.ts';
import { describeExit } from './claude-code.ts';
import { isHubPostingTool, type McpServerSpec } from './mcp.ts';
import { answered, arr, failed, num, obj, eventOfLine, stderrSummary, stoppedOutcome, str, type CliUsage } from './outcome.ts';
import { PROVIDER_KEY_VAR } from './provider-env.ts';
import type { SupervisedExit } from './supervisor.ts';

/** A system prompt longer than this goes into the stdin prompt instead of `--system` (argv cap 128 KiB). */
export const GOOSE_SYSTEM_ARG_LIMIT = 100 * 1024;

const GOOSE_PROVIDER: Readonly<Record<AgentConfig['brain']['provider'], string>> = {
  anthropic: 'anthropic',
  openai: 'openai',
  google: 'google',
  ollama: 'ollama',
  local: 'ollama',
  // goose has no DeepSeek provider of its own; DeepSeek speaks the OpenAI protocol.
  deepseek: 'openai',
  scripted: 'openai',
};

/** Quotes one token for goose's shell-style splitting of `--with-extension` values. */
export function shellQuote(token: string): string {
  return /^[\w@%+=:,./-]+$/.test(token) ? token : `'${token.replace(/'/g, `'\\''`)}'`;
}

/** Runs a command with variables from a file (executors/cli/with-env-file.js), on the Node running warren. */
export const WITH_ENV_FILE = join(import.meta.dirname, 'with-env-file.js');

/**
 * `--with-extension` takes one command string. goose would take leading `KEY=VAL` tokens as the server's
 * environment, but that puts secrets (the hub key) in argv, readable with ps: a server with variables is
 * started through with-env-file.js instead, its variables in a private file of the activation.
 */
export function gooseExtensionArgs(servers: readonly McpServerSpec[], scratch: string, node: string = process.execPath): { args: string[]; files: Record<string, string> } {
  const args: string[] = [];
  const files: Record<string, string> = {};
  for (const s of servers) {
    if (s.kind === 'stdio') {
      let argv = [s.command, ...s.args];
      if (Object.keys(s.env).length) {
        const envFile = join(scratch, `mcp-env-${s.name}.json`);
        files[envFile] = JSON.stringify(s.env);
        argv = [node, WITH_ENV_FILE, envFile, '--', ...argv];
      }
      args.push('--with-extension', argv.map(shellQuote).join(' '));
    } else {
      // Headers cannot be passed on this flag; servers that need them must be configured another way.
      args.push('--with-streamable-http-extension', s.url);
    }
  }
  return { args, files };
}

export function gooseInvocation(ctx: InvocationContext): Invocation {
  const { brain, behavior } = ctx.definition.config;
  const provider = GOOSE_PROVIDER[brain.provider];
  const systemInArgv = ctx.context.system.length <= GOOSE_SYSTEM_ARG_LIMIT;
  const args = [
    'run',
    '-i', '-', // instructions from stdin, which is then closed
    '--quiet',
    '--output-format', 'stream-json',
    '--no-profile',
    '--name', ctx.activationId, // goose's stream carries no session id; the name ties the session to the activation
    '--max-turns', String(behavior.max_iterations),
    '--provider', provider,
    '--model', brain.model,
  ];
  if (systemInArgv && ctx.context.system) args.push('--system', ctx.context.system);
  const extensions = gooseExtensionArgs(ctx.mcpServers, ctx.scratch);
  args.push(...extensions.args);
  const stdin = systemInArgv ? ctx.context.task : `${ctx.context.system}\n\n---\n\n${ctx.context.task}`;
  const keyVar = PROVIDER_KEY_VAR[brain.provider];
  return {
    args,
    stdin,
    env: {
      GOOSE_MODE: 'auto', // approval modes fail when nobody is there to approve
      GOOSE_DISABLE_KEYRING: '1',
      GOOSE_PATH_ROOT: join(ctx.stateDir, 'goose'),
      GOOSE_PROVIDER__HOST: brain.api_base,
      GOOSE_PROVIDER__API_KEY: ctx.apiKey,
      ...(keyVar ? { [keyVar]: ctx.apiKey } : {}),
    },
    files: extensions.files,
  };
}

export class GooseStreamParser implements OutputParser {
  readonly #postingTools: readonly string[];
  #sawJson = false;
  #errors: string[] = [];
  #complete: Record<string, unknown> | undefined;
  #steps = 0;
  #lastAssistantId: string | undefined;
  readonly #texts = new Map<string, string>();
  readonly #toolNames = new Map<string, string>();
  #posted = false;
  #notes: CliNote[] = [];

  constructor(opts: { postingTools: readonly string[] }) {
    this.#postingTools = opts.postingTools;
  }

  line(line: string): void {
    const ev = eventOfLine(line, this.#notes);
    if (!ev) return;
    this.#sawJson = true;
    if (ev.type === 'message') this.#message(obj(ev.message));
    else if (ev.type === 'error') {
      const e = ev.error;
      this.#errors.push(typeof e === 'string' ? e : JSON.stringify(e));
      this.#notes.push({ event: 'error', detail: this.#errors.at(-1)?.slice(0, 300) });
    } else if (ev.type === 'complete') this.#complete = ev;
    else if (ev.type === 'notification') this.#notes.push({ event: 'notification', detail: str(ev.extension_id) });
  }

  #message(msg: Record<string, unknown> | undefined): void {
    if (!msg) return;
    const id = str(msg.id) ?? `anon-${this.#steps}`;
    for (const c of arr(msg.content).map(obj)) {
      if (!c) continue;
      if (c.type === 'text' && msg.role === 'assistant') {
        this.#texts.set(id, (this.#texts.get(id) ?? '') + (str(c.text) ?? ''));
      } else if (c.type === 'toolRequest') {
        const call = obj(obj(c.toolCall)?.value) ?? obj(c.toolCall);
        const name = str(call?.name) ?? '';
        this.#toolNames.set(str(c.id) ?? '', name);
        this.#notes.push({ event: 'tool_call', detail: name });
      } else if (c.type === 'toolResponse') {
        const result = obj(c.toolResult);
        const ok = result?.status === undefined ? result?.isError !== true : result.status === 'success';
        const name = this.#toolNames.get(str(c.id) ?? '');
        if (ok && name && isHubPostingTool(name, this.#postingTools)) this.#posted = true;
      }
    }
    if (msg.role === 'assistant' && id !== this.#lastAssistantId) {
      this.#lastAssistantId = id;
      this.#steps++;
    }
  }

  drainNotes(): CliNote[] {
    const n = this.#notes;
    this.#notes = [];
    return n;
  }

  finish(exit: SupervisedExit): ExecutorResult {
    const usage = this.#usage();
    const stopped = stoppedOutcome(exit, usage, this.#steps, this.#posted);
    if (stopped) return stopped;
    if (!this.#sawJson) return failed(`goose exited ${describeExit(exit)} before any output (setup failure): ${stderrSummary(exit.stderrTail) || 'no stderr'}`, false, usage, 0);
    if (this.#errors.length) {
      const message = this.#errors.join('; ');
      return failed(`goose reported an error: ${message}`, !/\b(401|403|unauthori[sz]ed|authentication|invalid api key)\b/i.test(message), usage, this.#steps);
    }
    if (!this.#complete) return failed(`goose exited ${describeExit(exit)} without a complete event: ${stderrSummary(exit.stderrTail) || 'no stderr'}`, true, usage, this.#steps);
    if (exit.code !== 0) return failed(`goose exited ${describeExit(exit)} after complete: ${stderrSummary(exit.stderrTail) || 'no stderr'}`, true, usage, this.#steps);
    return answered(this.#lastAssistantId ? (this.#texts.get(this.#lastAssistantId) ?? '') : '', this.#posted, usage, this.#steps);
  }

  /** Goose reports tokens only, never cost; input and output are optional, the total is not. */
  #usage(): CliUsage {
    const c = this.#complete;
    if (!c) return { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
    const input = num(c.input_tokens);
    const output = num(c.output_tokens);
    // Without the split, the total counts as input: budgets see the tokens either way.
    return input + output > 0 ? { inputTokens: input, outputTokens: output, cachedTokens: 0 } : { inputTokens: num(c.total_tokens), outputTokens: 0, cachedTokens: 0 };
  }
}

export const gooseAdapter = (): CliAdapter => ({
  type: 'goose',
  binary: 'goose',
  invocation: gooseInvocation,
  parser: (p) => new GooseStreamParser(p),
});
