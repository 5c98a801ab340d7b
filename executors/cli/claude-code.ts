// claude-code: `claude -p` with stream-json output (docs/executors.md §1). Arguments are built purely from the
// agent's definition; the stream is classified by is_error and terminal_reason first, then subtype, then the
// exit code (§1.3), and a stdout without any JSON is a setup failure read from the stderr tail.
import { join } from 'node:path';
import type { AgentDefinition } from '../../store/definition.ts';
import { isRetryableStatus } from '../../policy/retryable-status.ts';
import type { ExecutorResult } from '../executor.ts';
import type { CliAdapter, CliNote, Invocation, InvocationContext, OutputParser } from './adapter.ts';
import { isHubPostingTool, type McpServerSpec } from './mcp.ts';
import { answered, arr, failed, num, obj, eventOfLine, stderrSummary, stoppedOutcome, str, type CliUsage } from './outcome.ts';
import type { SupervisedExit } from './supervisor.ts';

/** The model provider's API answered the CLI: its 409 is a lock or a concurrent request (see openai-model.ts). */
export const PROVIDER_CONFLICT = 'busy';

export interface ClaudeCodeOptions {
  /** CLAUDE_CODE_MAX_RETRIES: against a 401 an unbounded claude retried for over a minute. */
  maxRetries?: number;
}

/** The `--mcp-config` document: `{"mcpServers": {name: stdio | http}}`. */
export function claudeMcpConfig(servers: readonly McpServerSpec[]): { mcpServers: Record<string, unknown> } {
  const mcpServers: Record<string, unknown> = {};
  for (const s of servers) {
    mcpServers[s.name] = s.kind === 'stdio' ? { command: s.command, args: [...s.args], env: { ...s.env } } : { type: 'http', url: s.url, headers: { ...s.headers } };
  }
  return { mcpServers };
}

/**
 * Tools an unattended run may use without asking. `dontAsk` denies everything else instead of prompting, and
 * (unlike bypassPermissions) it runs as root. MCP servers are allowed whole; file and shell tools only as the
 * agent's grants and shell settings say.
 */
export function claudeAllowedTools(def: AgentDefinition, servers: readonly McpServerSpec[]): string[] {
  const tools = servers.map((s) => `mcp__${s.name}`);
  const grants = def.config.capabilities.grants;
  if (grants.some((g) => g.startsWith('filesystem:'))) tools.push('Read', 'Glob', 'Grep');
  if (grants.includes('filesystem:write') || grants.includes('filesystem:*')) tools.push('Edit', 'Write');
  const shell = def.config.capabilities.shell;
  if (shell.enabled) for (const cmd of shell.allowed_commands) tools.push(`Bash(${cmd} *)`, `Bash(${cmd})`);
  return tools;
}

export function claudeInvocation(ctx: InvocationContext, opts: ClaudeCodeOptions = {}): Invocation {
  const { brain, behavior } = ctx.definition.config;
  // Files, not argv: the system prompt can pass Linux's 128 KiB per-argument cap; the task goes to stdin.
  const systemFile = join(ctx.scratch, 'system-prompt.md');
  const mcpFile = join(ctx.scratch, 'mcp.json');
  const args = [
    '-p',
    '--output-format', 'stream-json',
    '--verbose', // stream-json under -p requires it
    '--bare', // no hooks, plugins, CLAUDE.md or keychain of the host: the run sees only what warren gives it
    '--no-session-persistence',
    '--model', brain.model,
    '--max-turns', String(behavior.max_iterations),
    '--append-system-prompt-file', systemFile,
    '--mcp-config', mcpFile,
    '--strict-mcp-config',
    '--permission-mode', 'dontAsk',
  ];
  if (brain.fallback_models.length) args.push('--fallback-model', brain.fallback_models.join(','));
  const allowed = claudeAllowedTools(ctx.definition, ctx.mcpServers);
  if (allowed.length) args.push('--allowedTools', allowed.join(' '));
  const shell = ctx.definition.config.capabilities.shell;
  // Deny rules win over allow rules: a blocked pattern stays blocked whatever allowed_commands says.
  if (shell.enabled && shell.blocked_patterns.length) args.push('--disallowedTools', shell.blocked_patterns.map((p) => `Bash(${p})`).join(' '));
  const shellTimeout = shell.enabled ? String(shell.timeout_seconds * 1000) : undefined;
  return {
    args,
    stdin: ctx.context.task,
    env: {
      ANTHROPIC_API_KEY: ctx.apiKey,
      ANTHROPIC_BASE_URL: brain.api_base,
      CLAUDE_CODE_MAX_RETRIES: String(opts.maxRetries ?? 2),
      CLAUDE_CONFIG_DIR: join(ctx.stateDir, 'claude'),
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      // capabilities.shell.timeout_seconds: how long one shell command may run, asked for or not.
      ...(shellTimeout ? { BASH_DEFAULT_TIMEOUT_MS: shellTimeout, BASH_MAX_TIMEOUT_MS: shellTimeout } : {}),
    },
    files: { [systemFile]: ctx.context.system, [mcpFile]: JSON.stringify(claudeMcpConfig(ctx.mcpServers)) },
  };
}

/** Reads claude's stream-json, one event per line; unknown types are skipped, broken lines noted. */
export class ClaudeStreamParser implements OutputParser {
  readonly #postingTools: readonly string[];
  #sawJson = false;
  #result: Record<string, unknown> | undefined;
  #lastText = '';
  #steps = 0;
  readonly #messageIds = new Set<string>();
  /** tool_use id → tool name, for matching results to hub posting calls. */
  readonly #toolNames = new Map<string, string>();
  #posted = false;
  #rateLimitResetsAt: number | undefined;
  #apiError: { status?: number; error?: string; text?: string } | undefined;
  #notes: CliNote[] = [];

  constructor(opts: { postingTools: readonly string[] }) {
    this.#postingTools = opts.postingTools;
  }

  line(line: string): void {
    const ev = eventOfLine(line, this.#notes);
    if (!ev) return;
    this.#sawJson = true;
    switch (ev.type) {
      case 'system':
        if (ev.subtype === 'init') this.#init(ev);
        else if (ev.subtype === 'permission_denied') this.#notes.push({ event: 'permission_denied', detail: JSON.stringify(ev).slice(0, 300) });
        return;
      case 'assistant':
        return this.#assistant(ev);
      case 'user':
        return this.#toolResults(ev);
      case 'rate_limit_event': {
        const info = obj(ev.rate_limit_info);
        if (info?.status === 'rejected') this.#rateLimitResetsAt = num(info.resetsAt) || undefined;
        this.#notes.push({ event: 'rate_limit', detail: str(info?.status) ?? '' });
        return;
      }
      case 'result':
        this.#result = ev;
        return;
      default:
        return; // stream_event, tool_progress, hooks, control: optional, and new types appear
    }
  }

  #init(ev: Record<string, unknown>): void {
    const servers = arr(ev.mcp_servers).map(obj);
    const down = servers.filter((s) => s && s.status !== 'connected');
    this.#notes.push({ event: 'init', detail: `claude ${str(ev.claude_code_version) ?? '?'}, model ${str(ev.model) ?? '?'}` });
    for (const s of down) this.#notes.push({ event: 'mcp_server_not_connected', detail: `${str(s?.name) ?? '?'}: ${str(s?.status) ?? '?'}` });
  }

  #assistant(ev: Record<string, unknown>): void {
    const msg = obj(ev.message);
    if (!msg) return;
    if (ev.is_api_error_message === true || msg.model === '<synthetic>') {
      this.#apiError = { status: num(ev.api_error_status) || undefined, error: str(ev.error), text: textOf(msg) };
    }
    // Parallel tool calls arrive as several lines sharing one message id: one step.
    const id = str(msg.id);
    if (id && !this.#messageIds.has(id)) {
      this.#messageIds.add(id);
      if (ev.parent_tool_use_id == null) this.#steps++;
    }
    for (const block of arr(msg.content).map(obj)) {
      if (block?.type === 'tool_use') {
        const toolId = str(block.id);
        const name = str(block.name) ?? '';
        if (toolId) this.#toolNames.set(toolId, name);
        this.#notes.push({ event: 'tool_call', detail: name });
      }
    }
    const text = textOf(msg);
    if (text && ev.parent_tool_use_id == null) this.#lastText = text;
  }

  #toolResults(ev: Record<string, unknown>): void {
    for (const block of arr(obj(ev.message)?.content).map(obj)) {
      if (block?.type !== 'tool_result') continue;
      const name = this.#toolNames.get(str(block.tool_use_id) ?? '');
      if (name && block.is_error !== true && isHubPostingTool(name, this.#postingTools)) this.#posted = true;
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
    const r = this.#result;
    if (!r) {
      if (!this.#sawJson) return failed(`claude exited ${describeExit(exit)} before any output (setup failure): ${stderrSummary(exit.stderrTail) || 'no stderr'}`, false, usage, this.#steps);
      return failed(`claude exited ${describeExit(exit)} without a result event: ${stderrSummary(exit.stderrTail) || 'no stderr'}`, true, usage, this.#steps);
    }
    const steps = num(r.num_turns) || this.#steps;
    const terminal = str(r.terminal_reason);
    const subtype = str(r.subtype) ?? '';
    if (r.is_error === true || (terminal !== undefined && terminal !== 'completed')) {
      if (terminal === 'max_turns' || subtype === 'error_max_turns') {
        return { text: '', posted: this.#posted, termination: 'max_steps', partial: true, usage, steps, error: { message: `claude stopped at --max-turns after ${steps} turns`, retryable: false } };
      }
      if (subtype === 'error_max_budget_usd') return { ...failed('claude stopped at its --max-budget-usd', false, usage, steps), termination: 'budget' };
      if (this.#rateLimitResetsAt) {
        const retryAfterMs = Math.max(0, this.#rateLimitResetsAt * 1000 - Date.now());
        return failed(`claude hit a usage limit; resets at ${new Date(this.#rateLimitResetsAt * 1000).toISOString()}`, true, usage, steps, { retryAfterMs });
      }
      const status = num(r.api_error_status) || this.#apiError?.status;
      const detail = [...arr(r.errors).map((e) => (typeof e === 'string' ? e : JSON.stringify(e))), str(r.result) ?? this.#apiError?.text ?? ''].filter(Boolean).join('; ');
      if (terminal === 'api_error' || status) {
        return failed(`claude API error${status ? ` ${status}` : ''}${this.#apiError?.error ? ` (${this.#apiError.error})` : ''}: ${detail || 'no detail'}`, isRetryableStatus(status, PROVIDER_CONFLICT), usage, steps);
      }
      return failed(`claude run failed (${terminal ?? (subtype || 'is_error')}): ${detail || stderrSummary(exit.stderrTail)}`, true, usage, steps);
    }
    // is_error false and completed: the answer, even if the exit code disagrees.
    return answered(str(r.result) ?? this.#lastText, this.#posted, usage, steps);
  }

  /** Totals from the result event (per-step output_tokens are placeholders); cost is claude's own estimate. */
  #usage(): CliUsage {
    const u = obj(this.#result?.usage);
    if (!u) return { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
    const cacheRead = num(u.cache_read_input_tokens);
    const usage: CliUsage = {
      inputTokens: num(u.input_tokens) + num(u.cache_creation_input_tokens) + cacheRead,
      outputTokens: num(u.output_tokens),
      cachedTokens: cacheRead,
    };
    if (typeof this.#result?.total_cost_usd === 'number') {
      usage.costUsd = this.#result.total_cost_usd;
      usage.costIsEstimate = true;
    }
    return usage;
  }
}

function textOf(msg: Record<string, unknown>): string {
  return arr(msg.content)
    .map(obj)
    .filter((b) => b?.type === 'text')
    .map((b) => str(b?.text) ?? '')
    .join('');
}

export function describeExit(exit: SupervisedExit): string {
  return exit.signal ? `on ${exit.signal}` : `with code ${exit.code ?? '?'}`;
}

/** Claude Code speaks only the Anthropic API (ANTHROPIC_BASE_URL may point at any server that does). */
export function claudeMissingRequirement(def: AgentDefinition): string | undefined {
  const p = def.config.brain.provider;
  return p === 'anthropic' ? undefined : `claude-code needs brain.provider anthropic (an Anthropic Messages endpoint), got ${p}`;
}

export const claudeCodeAdapter = (opts: ClaudeCodeOptions = {}): CliAdapter => ({
  type: 'claude-code',
  binary: 'claude',
  missingRequirement: claudeMissingRequirement,
  invocation: (ctx) => claudeInvocation(ctx, opts),
  parser: (p) => new ClaudeStreamParser(p),
});

