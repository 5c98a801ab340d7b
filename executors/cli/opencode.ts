// opencode: `opencode run --format json` (docs/executors.md §4). Everything is configured through
// OPENCODE_CONFIG_CONTENT: the provider (with the agent's endpoint), warren's MCP servers as `mcp` entries,
// restrictive `permission` rules (opencode is permissive by default: an unconfigured run executed `rm -rf`),
// and an agent whose `steps` is the turn limit. The prompt is written to stdin and stdin closed, because
// opencode reads a non-TTY stdin to EOF and hung on an open pipe.
import { join } from 'node:path';
import type { AgentDefinition } from '../../store/definition.ts';
import type { ExecutorResult } from '../executor.ts';
import type { CliAdapter, CliNote, Invocation, InvocationContext, OutputParser } from './adapter.ts';
import { isRetryableStatus } from '../../policy/retryable-status.ts';
import { describeExit, PROVIDER_CONFLICT } from './claude-code.ts';
import { isHubPostingTool, type McpServerSpec } from './mcp.ts';
import { answered, failed, num, obj, eventOfLine, stderrSummary, stoppedOutcome, str, type CliUsage } from './outcome.ts';
import { PROVIDER_KEY_VAR } from './provider-env.ts';
import type { SupervisedExit } from './supervisor.ts';

/** The opencode agent warren defines and runs with `--agent`. */
export const OPENCODE_AGENT = 'warren';
/** Provider id used for a custom OpenAI-compatible endpoint (`brain.api_base`). */
export const OPENCODE_CUSTOM_PROVIDER = 'warren';
/** The variable the custom provider's key is read from (`{env:…}` in the config, never the key itself). */
export const OPENCODE_KEY_VAR = 'WARREN_OPENCODE_API_KEY';

/** Permission rules from the agent's grants and shell settings: deny unless granted. */
export function opencodePermission(def: AgentDefinition): Record<string, unknown> {
  const { grants, shell } = def.config.capabilities;
  // The last matching rule wins: blocked patterns come after the allowed commands.
  const bash: Record<string, string> | string =
    shell.enabled && shell.allowed_commands.length ? Object.fromEntries([['*', 'deny'], ...shell.allowed_commands.map((c) => [`${c} *`, 'allow'] as const), ...shell.blocked_patterns.map((p) => [p, 'deny'] as const)]) : 'deny';
  return {
    edit: grants.includes('filesystem:write') || grants.includes('filesystem:*') ? 'allow' : 'deny',
    bash,
    webfetch: 'deny',
  };
}

function mcpEntry(s: McpServerSpec): Record<string, unknown> {
  return s.kind === 'stdio'
    ? { type: 'local', command: [s.command, ...s.args], environment: { ...s.env }, enabled: true }
    : { type: 'remote', url: s.url, headers: { ...s.headers }, enabled: true };
}

/** The model reference (`provider/model`) and the provider block, if one is needed. */
export function opencodeProvider(def: AgentDefinition): { model: string; provider?: Record<string, unknown> } {
  const { brain } = def.config;
  if (brain.api_base && (brain.provider === 'openai' || brain.provider === 'deepseek' || brain.provider === 'local' || brain.provider === 'ollama')) {
    return {
      model: `${OPENCODE_CUSTOM_PROVIDER}/${brain.model}`,
      provider: {
        [OPENCODE_CUSTOM_PROVIDER]: {
          npm: '@ai-sdk/openai-compatible',
          name: 'warren endpoint',
          options: { baseURL: brain.api_base, apiKey: `{env:${OPENCODE_KEY_VAR}}` },
          models: { [brain.model]: { name: brain.model } },
        },
      },
    };
  }
  const id = brain.provider === 'local' ? 'ollama' : brain.provider;
  return brain.api_base ? { model: `${id}/${brain.model}`, provider: { [id]: { options: { baseURL: brain.api_base } } } } : { model: `${id}/${brain.model}` };
}

export function opencodeConfig(ctx: InvocationContext): Record<string, unknown> {
  const def = ctx.definition;
  const { model, provider } = opencodeProvider(def);
  return {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    model,
    ...(provider ? { provider } : {}),
    mcp: Object.fromEntries(ctx.mcpServers.map((s) => [s.name, mcpEntry(s)])),
    permission: opencodePermission(def),
    agent: { [OPENCODE_AGENT]: { mode: 'primary', description: `warren agent ${def.name}`, steps: def.config.behavior.max_iterations, permission: opencodePermission(def) } },
  };
}

export function opencodeInvocation(ctx: InvocationContext): Invocation {
  const { brain } = ctx.definition.config;
  const { model } = opencodeProvider(ctx.definition);
  const keyVar = PROVIDER_KEY_VAR[brain.provider];
  const custom = model.startsWith(`${OPENCODE_CUSTOM_PROVIDER}/`);
  const xdg = join(ctx.stateDir, 'opencode');
  return {
    args: ['run', '--format', 'json', '-m', model, '--agent', OPENCODE_AGENT],
    // opencode has no system-prompt flag: the system part leads the message, the task follows.
    stdin: `${ctx.context.system}\n\n---\n\n${ctx.context.task}`,
    env: {
      OPENCODE_CONFIG_CONTENT: JSON.stringify(opencodeConfig(ctx)),
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_CLAUDE_CODE: '1', // else it reads the host's .claude/ prompts and skills
      OPENCODE_CONFIG_DIR: join(xdg, 'config-dir'),
      // Sessions, auth.json and caches per agent, never the host user's.
      XDG_CONFIG_HOME: join(xdg, 'config'),
      XDG_DATA_HOME: join(xdg, 'data'),
      XDG_STATE_HOME: join(xdg, 'state'),
      XDG_CACHE_HOME: join(xdg, 'cache'),
      ...(custom ? { [OPENCODE_KEY_VAR]: ctx.apiKey ?? 'none' } : keyVar ? { [keyVar]: ctx.apiKey } : {}),
    },
    files: {},
  };
}

export class OpencodeJsonParser implements OutputParser {
  readonly #postingTools: readonly string[];
  #sawJson = false;
  #stepText = '';
  #lastText = '';
  #steps = 0;
  #usage: CliUsage = { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
  #errors: Array<{ message: string; status?: number; retryable?: boolean }> = [];
  #posted = false;
  #lastReason: string | undefined;
  #toolSteps = 0;
  #notes: CliNote[] = [];
  readonly #maxSteps: number;

  constructor(opts: { postingTools: readonly string[]; maxSteps: number }) {
    this.#postingTools = opts.postingTools;
    this.#maxSteps = opts.maxSteps;
  }

  line(line: string): void {
    const ev = eventOfLine(line, this.#notes);
    if (!ev) return;
    this.#sawJson = true;
    const part = obj(ev.part);
    switch (ev.type) {
      case 'step_start':
        this.#stepText = '';
        return;
      case 'text':
        this.#stepText += str(part?.text) ?? '';
        return;
      case 'tool_use': {
        // Emitted only once the tool finished, with its final state.
        const name = str(part?.tool) ?? '';
        const state = obj(part?.state);
        this.#notes.push({ event: 'tool_call', detail: `${name}: ${str(state?.status) ?? '?'}` });
        if (state?.status === 'completed' && isHubPostingTool(name, this.#postingTools)) this.#posted = true;
        return;
      }
      case 'step_finish': {
        this.#steps++;
        if (this.#stepText.trim()) this.#lastText = this.#stepText;
        this.#lastReason = str(part?.reason);
        if (this.#lastReason === 'tool-calls') this.#toolSteps++;
        const tokens = obj(part?.tokens);
        const cache = obj(tokens?.cache);
        const cost = num(part?.cost);
        this.#usage = {
          inputTokens: this.#usage.inputTokens + num(tokens?.input) + num(cache?.read) + num(cache?.write),
          outputTokens: this.#usage.outputTokens + num(tokens?.output) + num(tokens?.reasoning),
          cachedTokens: this.#usage.cachedTokens + num(cache?.read),
          // opencode prices from its model table; a custom provider without pricing reports 0.
          costUsd: (this.#usage.costUsd ?? 0) + cost,
          costIsEstimate: true,
        };
        return;
      }
      case 'error': {
        const e = obj(ev.error);
        const data = obj(e?.data);
        const status = num(data?.statusCode) || undefined;
        this.#errors.push({ message: `${str(e?.name) ?? 'Error'}: ${str(data?.message) ?? JSON.stringify(e ?? ev)}`, status, retryable: typeof data?.isRetryable === 'boolean' ? data.isRetryable : undefined });
        this.#notes.push({ event: 'error', detail: this.#errors.at(-1)?.message.slice(0, 300) });
        return;
      }
      default:
        return; // `done` (newer versions) and other types: nothing to decide on
    }
  }

  drainNotes(): CliNote[] {
    const n = this.#notes;
    this.#notes = [];
    return n;
  }

  finish(exit: SupervisedExit): ExecutorResult {
    const stopped = stoppedOutcome(exit, this.#usage, this.#steps, this.#posted);
    if (stopped) return stopped;
    if (this.#errors.length) {
      const last = this.#errors.at(-1);
      // As the event says (isRetryable), but never when its status says a retry meets the same refusal.
      const retryable = (last?.retryable ?? true) && isRetryableStatus(last?.status, PROVIDER_CONFLICT);
      return failed(`opencode error${last?.status ? ` ${last.status}` : ''}: ${this.#errors.map((e) => e.message).join('; ')}`, retryable, this.#usage, this.#steps);
    }
    if (exit.code !== 0) {
      const setup = !this.#sawJson;
      return failed(`opencode exited ${describeExit(exit)}${setup ? ' before any output (setup failure)' : ''}: ${stderrSummary(exit.stderrTail) || 'no stderr'}`, !setup, this.#usage, this.#steps);
    }
    if (this.#steps === 0 && !this.#posted) return failed(`opencode exited 0 without finishing a step: ${stderrSummary(exit.stderrTail) || 'no stderr'}`, true, this.#usage, 0);
    // On its last allowed step opencode injects "MAXIMUM STEPS REACHED … respond with text only" (observed in
    // 1.18.33). A run that reached the limit while still calling tools was cut short, and that forced answer
    // is not the agent's reply.
    if (!this.#posted && ((this.#steps >= this.#maxSteps && this.#toolSteps > 0) || this.#lastReason === 'tool-calls')) {
      return { text: '', posted: false, termination: 'max_steps', partial: true, usage: this.#usage, steps: this.#steps, error: { message: `opencode stopped at its steps limit (${this.#maxSteps})`, retryable: false } };
    }
    return answered(this.#lastText, this.#posted, this.#usage, this.#steps);
  }
}

export const opencodeAdapter = (): CliAdapter => ({
  type: 'opencode',
  binary: 'opencode',
  invocation: opencodeInvocation,
  parser: (p) => new OpencodeJsonParser(p),
});
