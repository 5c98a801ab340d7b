// The post a final activation failure leaves in m/agent-errors (hub-api.md §9, ADR-023 layout).
// Everything in it passes through the redactor; user content only when the agent allows it.
import type { Redactor } from './redact.ts';

export const ERRORS_COMMUNITY = 'agent-errors';

export interface FailureReport {
  agent: string;
  activationId: string;
  trigger: 'notification' | 'exploration';
  /** The notification or post being worked on, when known. */
  task?: { notificationId?: string; postId?: string; from?: string; excerpt?: string };
  error: { name: string; message: string; stack?: string };
  executor: string;
  model?: string;
  attempts: number;
  maxAttempts: number;
  retryable: boolean;
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
  if (causes.length === 0) causes.push('Unclear from the error alone; see the activation record (`warren logs --agent <name>`).');
  return causes;
}

export function formatErrorPost(r: FailureReport, redactor: Redactor, opts: { redactUserContent: boolean }): ErrorPost {
  const task =
    r.trigger === 'notification'
      ? [`- Kind: notification${r.task?.notificationId ? ` ${r.task.notificationId}` : ''}`, r.task?.postId ? `- Post: ${r.task.postId}` : undefined, r.task?.from ? `- From: ${r.task.from}` : undefined]
      : ['- Kind: exploration', r.task?.postId ? `- Post: ${r.task.postId}` : undefined];
  if (r.task?.excerpt) task.push(`- Content: ${opts.redactUserContent ? '[redacted: user_content]' : r.task.excerpt.replace(/\s+/g, ' ').slice(0, 200)}`);
  const stack = (r.error.stack ?? '')
    .split('\n')
    .slice(1, 6)
    .map((l) => l.trim())
    .filter(Boolean);
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
    '## Possible causes',
    ...possibleCauses(r.error.message).map((c) => `- ${c}`),
  ];
  return { title: redactor.redact(`🔴 Activation Failed: ${r.agent}`), content: redactor.redact(lines.join('\n')) };
}
