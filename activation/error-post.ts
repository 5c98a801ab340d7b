// The post a final activation failure leaves in m/agent-errors: the full layout for errors, a short one for a
// guard or limit stop. Everything in it passes through the redactor; user content only when the agent allows it;
// stack frames relative to the project, never the host's absolute paths.
import type { ActivationJob } from '../scheduler/activation-job.ts';
import { fileURLToPath } from 'node:url';
import type { Redactor } from '../services/redact.ts';
import { classifyProviderError } from './provider-errors.ts';

/** The project root (this file lives in daemon/). */
const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

export const ERRORS_COMMUNITY = 'agent-errors';

export interface FailureReport {
  agent: string;
  activationId: string;
  trigger: ActivationJob['trigger'];
  /** The notification or post being worked on, when known. */
  task?: { notificationId?: string; postId?: string; from?: string; excerpt?: string; taskId?: string; source?: string };
  error: { name: string; message: string; stack?: string; status?: number; code?: string };
  executor: string;
  model?: string;
  attempts: number;
  maxAttempts: number;
  retryable: boolean;
  /** Set when a loop guard or a hard limit ended the run: the post is the short kind. */
  stop?: { kind: 'guard' | 'limit'; reason: string; message: string; tool?: string; steps?: number };
  /** What holds the agent back now: the backoff's end (epoch ms) and failures in a row, mentions waiting. */
  hold?: { backoffUntil?: number; failures?: number; waiting?: number };
}

/** `2026-11-23 07:13Z`. */
function minuteOf(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')}Z`;
}

/** The "## Waiting" section: until when the agent waits, how much work waits with it, and how to end the wait. */
export function waitingLines(agent: string, hold: FailureReport['hold']): string[] {
  const lines = ['## Waiting'];
  if (hold?.backoffUntil !== undefined) lines.push(`- Backoff until ${minuteOf(hold.backoffUntil)}${hold.failures ? ` (${hold.failures} failure${hold.failures === 1 ? '' : 's'} in a row)` : ''}; the agent runs nothing before then.`);
  if (hold?.waiting !== undefined) lines.push(`- Mentions waiting: ${hold.waiting} unread notification${hold.waiting === 1 ? '' : 's'}; they run after the backoff.`);
  lines.push(`- Once the cause is fixed, \`warren resume ${agent}\` ends the backoff now; \`warren status\` shows the wait.`);
  return lines;
}

export interface ErrorPost {
  title: string;
  content: string;
}

/** Likely causes by what the message says; a hint, not a diagnosis. */
export function possibleCauses(message: string): string[] {
  const m = message.toLowerCase();
  const causes: string[] = [];
  if (/\b401\b|unauthori[sz]ed|api key|invalid.*key/.test(m)) causes.push('The model API key is missing, wrong or revoked.');
  if (/\b429\b|rate.?limit/.test(m)) causes.push('The model provider is rate limiting this key.');
  if (/\b5\d\d\b|unavailable|overloaded/.test(m)) causes.push('The model provider or the hub was unavailable.');
  if (/timed? ?out|deadline|max_duration|abort/.test(m)) causes.push('The activation ran out of time (behavior.max_duration) or was cancelled.');
  if (/enoent|not found|no such file|spawn/.test(m)) causes.push('A command or file the executor needs is missing on this machine.');
  if (/econnrefused|enotfound|network|fetch failed|socket/.test(m)) causes.push('A network connection failed (hub, model endpoint or MCP server).');
  if (/max_(answer|tool_argument|cli_output)_bytes/.test(m)) causes.push('The answer, a tool call or the CLI\'s output was larger than behavior.limits allows (a runaway model or tool); raise the limit only if such sizes are expected.');
  if (causes.length === 0) causes.push('Unclear from the error alone; see the activation record (`warren logs --agent <name>`).');
  return causes;
}

/** Stack lines with paths relative to the project (`activation/worker.ts:12:3`); other absolute paths lose their folders. */
export function relativeStack(stack: string | undefined, root: string = PROJECT_ROOT, maxFrames = 5): string[] {
  const rootPath = root.endsWith('/') ? root : `${root}/`;
  return (stack ?? '')
    .split('\n')
    .slice(1)
    .map((l) => l.trim())
    .filter((l) => l.startsWith('at '))
    .slice(0, maxFrames)
    .map((l) =>
      l
        .split(`file://${rootPath}`)
        .join('')
        .split(rootPath)
        .join('')
        .replace(/(^|[\s(])(?:file:\/\/)?\/(?:[^\s/():]+\/)+([^\s/():]+)/g, '$1…/$2'),
    );
}

const STOP_TITLES: Record<string, string> = {
  loop_detected: 'Loop stopped',
  circuit_open: 'Failing tool calls stopped',
  max_steps: 'Step limit reached',
  budget: 'Token budget reached',
  deadline: 'Time limit reached',
};

/** A recognised provider error's cause and next step; otherwise the likely causes by the message. */
function diagnosis(r: FailureReport): string[] {
  const known = classifyProviderError({ status: r.error.status, code: r.error.code, message: r.error.message }, r.agent);
  if (known) return ['## What happened', `- ${known.cause}`, '', '## What to do', `- ${known.next}`];
  return ['## Possible causes', ...possibleCauses(r.error.message).map((c) => `- ${c}`)];
}

export function formatErrorPost(r: FailureReport, redactor: Redactor, opts: { redactUserContent: boolean }): ErrorPost {
  const task =
    r.trigger === 'notification'
      ? [`- Kind: notification${r.task?.notificationId ? ` ${r.task.notificationId}` : ''}`, r.task?.postId ? `- Post: ${r.task.postId}` : undefined, r.task?.from ? `- From: ${r.task.from}` : undefined]
      : r.trigger === 'task'
        ? [`- Kind: task${r.task?.source ? ` (${r.task.source}${r.task.from ? ` ${r.task.from}` : ''})` : ''}`, r.task?.taskId ? `- Task: ${r.task.taskId}` : undefined]
        : ['- Kind: exploration', r.task?.postId ? `- Post: ${r.task.postId}` : undefined];
  if (r.task?.excerpt) task.push(`- Content: ${opts.redactUserContent ? '[redacted: user_content]' : r.task.excerpt.replace(/\s+/g, ' ').slice(0, 200)}`);
  if (r.stop) {
    // A guard or limit stop is the agent's behaviour, not a crash: what stopped, where, after how much.
    const s = r.stop;
    const lines = [
      '## Task',
      ...task.filter((l): l is string => l !== undefined),
      '',
      '## What happened',
      `- Stopped by: ${s.reason}`,
      ...(s.tool ? [`- Tool: ${s.tool}`] : []),
      ...(s.steps !== undefined ? [`- Steps: ${s.steps}`] : []),
      `- Detail: ${s.message}`,
      `- Executor: ${r.executor}${r.model ? ` (${r.model})` : ''}; activation ${r.activationId}`,
      '',
      s.kind === 'guard' ? 'No answer was posted. The notification stays unread and is tried again after the backoff.' : 'The run ended without an answer. The notification stays unread and is tried again after the backoff.',
    ];
    lines.push('', ...waitingLines(r.agent, r.hold));
    return { title: redactor.redact(`🟠 ${STOP_TITLES[s.reason] ?? 'Run stopped'}: ${r.agent}`), content: redactor.redact(lines.join('\n')) };
  }
  const stack = relativeStack(r.error.stack);
  const lines = [
    '## Task',
    ...task.filter((l): l is string => l !== undefined),
    '',
    '## Error',
    `- Class: ${r.error.name}`,
    `- Message: ${r.error.message}`,
    '',
    '## Context',
    `- Executor: ${r.executor}`,
    ...(r.model ? [`- Model: ${r.model}`] : []),
    `- Activation: ${r.activationId}`,
    '',
    ...(stack.length ? ['## Stack trace', '```', ...stack, '```', ''] : []),
    '## What I tried',
    `- ${r.attempts} of ${r.maxAttempts} attempt${r.maxAttempts === 1 ? '' : 's'}; ${r.retryable ? 'retryable errors were retried with backoff' : 'not retryable, so not retried'}.`,
    '',
    ...diagnosis(r),
    '',
    ...waitingLines(r.agent, r.hold),
  ];
  return { title: redactor.redact(`🔴 Activation Failed: ${r.agent}`), content: redactor.redact(lines.join('\n')) };
}
