// aider: one `--message-file` run (docs/executors.md §3; source only, live behaviour unverified). Aider has no
// system-prompt flag (the prompt goes in as a `--read` file), no MCP (warren posts its answer), no structured
// output (plain text plus a "Tokens: … Cost: …" line) and exits 0 whatever the model did, so model failures
// are read from its output.
import { join } from 'node:path';
import type { AgentConfig } from '../../store/agent-config.ts';
import type { ExecutorResult } from '../executor.ts';
import type { CliAdapter, CliNote, Invocation, InvocationContext, OutputParser } from './adapter.ts';
import { describeExit } from './claude-code.ts';
import { answered, failed, stderrSummary, stoppedOutcome, type CliUsage } from './outcome.ts';
import { PROVIDER_KEY_VAR } from './provider-env.ts';
import type { SupervisedExit } from './supervisor.ts';

/** litellm model names: providers other than OpenAI and Anthropic need their prefix. */
export function aiderModel(brain: Pick<AgentConfig['brain'], 'provider' | 'model' | 'api_base'>): string {
  const m = brain.model;
  if (m.includes('/')) return m;
  if (brain.provider === 'ollama' || brain.provider === 'local') return `ollama_chat/${m}`;
  if (brain.provider === 'deepseek') return `deepseek/${m}`;
  if (brain.provider === 'google') return `gemini/${m}`;
  // A custom OpenAI-compatible endpoint needs the explicit `openai/` route in litellm.
  if (brain.provider === 'openai' && brain.api_base) return `openai/${m}`;
  return m;
}

export function aiderInvocation(ctx: InvocationContext): Invocation {
  const { brain } = ctx.definition.config;
  const taskFile = join(ctx.scratch, 'task.md');
  const systemFile = join(ctx.scratch, 'system-prompt.md');
  // Empty files stand in for the repository's .env and .aider.conf.yml, which would otherwise be read.
  const envFile = join(ctx.scratch, 'aider.env');
  const confFile = join(ctx.scratch, 'aider.conf.yml');
  const args = [
    '--message-file', taskFile,
    '--read', systemFile,
    '--model', aiderModel(brain),
    '--yes-always',
    '--no-auto-commits',
    '--no-dirty-commits',
    '--no-stream',
    '--no-pretty',
    '--no-fancy-input',
    '--no-check-update',
    '--analytics-disable',
    '--no-suggest-shell-commands',
    '--no-gitignore',
    '--env-file', envFile,
    '--config', confFile,
    // History files live in the agent's state folder, not in its workspace.
    '--chat-history-file', join(ctx.stateDir, 'aider.chat.history.md'),
    '--input-history-file', join(ctx.stateDir, 'aider.input.history'),
  ];
  const keyVar = PROVIDER_KEY_VAR[brain.provider];
  return {
    args,
    env: {
      ...(keyVar ? { [keyVar]: ctx.apiKey } : {}),
      AIDER_OPENAI_API_BASE: brain.provider === 'openai' ? brain.api_base : undefined,
      OLLAMA_API_BASE: brain.provider === 'ollama' || brain.provider === 'local' ? brain.api_base : undefined,
    },
    files: { [taskFile]: ctx.context.task, [systemFile]: ctx.context.system, [envFile]: '', [confFile]: '' },
  };
}

/** `12`, `2.3k`, `1.2M` → a number of tokens. */
export function parseTokenCount(text: string): number {
  const m = /^([\d.]+)\s*([kKmM]?)$/.exec(text.trim());
  if (!m) return 0;
  const n = Number(m[1]);
  const scale = m[2]?.toLowerCase() === 'k' ? 1_000 : m[2]?.toLowerCase() === 'm' ? 1_000_000 : 1;
  return Number.isFinite(n) ? Math.round(n * scale) : 0;
}

/** The usage line, e.g. `Tokens: 2.3k sent, 1.1k cache hit, 150 received. Cost: $0.01 message, $0.05 session.` */
export function parseAiderUsage(line: string): { sent: number; received: number; cacheHit: number; costUsd?: number } | undefined {
  const m = /^Tokens:\s*(.+?)\.(?=\s|$)(?:\s*Cost:\s*\$([\d.]+)\s*message)?/.exec(line.trim());
  if (!m?.[1]) return undefined;
  const part = (label: string): number => {
    const p = new RegExp(`([\\d.]+\\s*[kKmM]?)\\s+${label}`).exec(m[1] ?? '');
    return p?.[1] ? parseTokenCount(p[1]) : 0;
  };
  return { sent: part('sent'), received: part('received'), cacheHit: part('cache hit'), ...(m[2] ? { costUsd: Number(m[2]) } : {}) };
}

/** Output lines that are aider talking about itself, not the model's answer. */
const CHATTER = [/^Aider v\d/, /^(Main |Weak |Editor )?[Mm]odel:/, /^Git repo:/, /^Repo-map:/, /^Use \/help/, /^Added .* to the chat/, /^Warning:/, /^Tokens:/, /^Cost:/, /^https:\/\/aider\.chat/, /^Applied edit to/, /^Commit [0-9a-f]{7}/, /^No git repo/, /^Creating empty file/, /^Retrying in /, /^Detected dumb terminal/, /^You can skip this check/, /^Scanning repo/, /^Readonly:/, /^Cur working dir:/, /^Git working dir:/];

/** Model failures as aider prints them (litellm exception names, aider's own explanations). */
const MODEL_ERROR = /(litellm\.\w*Error|\b\w+(Authentication|RateLimit|APIConnection|ServiceUnavailable|NotFound|BadRequest|InternalServer|Timeout|ContextWindowExceeded)Error\b|The API provider is not able to authenticate you|Unable to (list|find) model|\bAPI ?Error\b)/;
const PERMANENT_ERROR = /(Authentication|NotFound|BadRequest|ContextWindowExceeded|not able to authenticate|Unable to (list|find) model|\b401\b|\b403\b)/;

export class AiderTextParser implements OutputParser {
  readonly #lines: string[] = [];
  /** Model errors not yet followed by a usage line (a usage line means a later attempt succeeded). */
  #pendingErrors: string[] = [];
  #usage: CliUsage = { inputTokens: 0, outputTokens: 0, cachedTokens: 0 };
  #steps = 0;
  #notes: CliNote[] = [];

  line(line: string): void {
    const usage = parseAiderUsage(line);
    if (usage) {
      this.#steps++;
      this.#pendingErrors = [];
      this.#usage = {
        inputTokens: this.#usage.inputTokens + usage.sent,
        outputTokens: this.#usage.outputTokens + usage.received,
        cachedTokens: this.#usage.cachedTokens + usage.cacheHit,
        ...(usage.costUsd !== undefined ? { costUsd: (this.#usage.costUsd ?? 0) + usage.costUsd, costIsEstimate: true } : {}),
      };
      return;
    }
    if (MODEL_ERROR.test(line)) {
      this.#pendingErrors.push(line.trim());
      this.#notes.push({ event: 'model_error', detail: line.slice(0, 300) });
      return;
    }
    this.#lines.push(line);
  }

  drainNotes(): CliNote[] {
    const n = this.#notes;
    this.#notes = [];
    return n;
  }

  finish(exit: SupervisedExit): ExecutorResult {
    const stopped = stoppedOutcome(exit, this.#usage, this.#steps);
    if (stopped) return stopped;
    if (exit.code !== 0) return failed(`aider exited ${describeExit(exit)} (startup error): ${stderrSummary(exit.stderrTail) || stderrSummary(this.#lines.join('\n')) || 'no output'}`, false, this.#usage, 0);
    // Exit 0 is not trusted alone: aider exits 0 after --message whatever the model did.
    if (this.#pendingErrors.length) {
      const message = this.#pendingErrors.join('; ');
      return failed(`aider's model call failed: ${message}`, !PERMANENT_ERROR.test(message), this.#usage, this.#steps);
    }
    const answer = this.#lines.filter((l) => !CHATTER.some((re) => re.test(l.trim()))).join('\n').trim();
    if (this.#steps === 0 && !answer) return failed(`aider produced no answer and no usage line: ${stderrSummary(exit.stderrTail) || 'no output'}`, true, this.#usage, 0);
    return answered(answer, false, this.#usage, this.#steps);
  }
}

export const aiderAdapter = (): CliAdapter => ({
  type: 'aider',
  binary: 'aider',
  // aider is a Python program: a virtualenv found through these keeps working in the child.
  inheritEnv: ['VIRTUAL_ENV', 'PYTHONPATH'],
  invocation: aiderInvocation,
  parser: () => new AiderTextParser(),
});
