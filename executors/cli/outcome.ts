// Pure pieces of turning a CLI run into an ExecutorResult, shared by the four parsers.
import { ZERO_USAGE } from '../../agent-loop/messages.ts';
import { isNoActionSentinel } from '../../agent-loop/termination.ts';
import type { ExecutorResult } from '../executor.ts';
import { excerptOf, overBound, oversizeMessage, utf8Bytes, type Oversize } from '../../policy/output-bounds.ts';
import type { CliNote } from './adapter.ts';
import type { SupervisedExit } from './supervisor.ts';

export type CliUsage = ExecutorResult['usage'];

export const NO_USAGE: CliUsage = { ...ZERO_USAGE };

/**
 * When the supervisor stopped the process (or could not start it), that decides the outcome whatever the
 * output said. Undefined when the process ended by itself.
 *
 * A CLI killed at the deadline is a failure (reported, retried within the backoff), not a silent "no answer":
 * the pipeline would otherwise mark the notification read. Except when the CLI had already posted through the
 * hub: then the answer is there, and a retry would post it twice.
 */
export function stoppedOutcome(exit: SupervisedExit, usage: CliUsage, steps: number, posted = false): ExecutorResult | undefined {
  const base = { text: '', posted: false, partial: true, usage, steps };
  if (exit.spawnError) return { ...base, termination: 'error', error: { message: `could not start the CLI: ${exit.spawnError}`, retryable: false } };
  if (posted && (exit.stoppedBy === 'aborted' || exit.stoppedBy === 'deadline' || exit.stoppedBy === 'idle' || exit.stoppedBy === 'output_too_large')) return { ...base, posted: true, termination: 'deadline' };
  switch (exit.stoppedBy) {
    case undefined:
      return undefined;
    case 'aborted':
      // A max_duration timeout reaches the executor as an aborted signal; it is a deadline, not a cancel.
      if (/TimeoutError|timed out|timeout/i.test(exit.detail ?? '')) return { ...base, termination: 'error', error: { message: 'killed at the activation deadline (behavior.max_duration)', retryable: true } };
      return { ...base, termination: 'aborted', error: { message: `aborted: ${exit.detail ?? ''}`.trim(), retryable: true } };
    case 'deadline':
      return { ...base, termination: 'error', error: { message: `killed at the activation deadline (behavior.max_duration): ${exit.detail ?? ''}`, retryable: true } };
    case 'idle':
      return { ...base, termination: 'error', error: { message: `killed by the idle watchdog: ${exit.detail ?? ''}`, retryable: true } };
    case 'line_too_long':
    case 'parser_error':
      return { ...base, termination: 'error', error: { message: `output rejected: ${exit.detail ?? exit.stoppedBy}`, retryable: false } };
    case 'output_too_large':
      return oversizedResult({ what: 'cli_output', limit: exit.maxOutputBytes ?? exit.stdoutBytes, length: exit.stdoutBytes, cut: true }, exit.stdoutHead, usage, steps);
  }
}

/**
 * A run whose answer passed behavior.limits.max_answer_bytes is an `oversized` failure instead (never posted);
 * any other result is kept as it is.
 */
export function boundedAnswer(result: ExecutorResult, maxAnswerBytes: number): ExecutorResult {
  if (result.termination !== 'final' || result.posted) return result;
  const over = overBound('answer', utf8Bytes(result.text), maxAnswerBytes);
  return over ? oversizedResult(over, result.text, result.usage, result.steps) : result;
}

function oversizedResult(over: Oversize, text: string, usage: CliUsage, steps: number): ExecutorResult {
  return { text: '', posted: false, termination: 'error', partial: true, usage, steps, error: { message: oversizeMessage(over), retryable: false, name: 'OversizedOutput', oversized: { ...over, excerpt: excerptOf(text) } } };
}

/** The end of a successful run: posted through the hub, a no-action sentinel, or text for the daemon to post. */
export function answered(text: string, posted: boolean, usage: CliUsage, steps: number): ExecutorResult {
  if (posted) return { text: '', posted: true, termination: 'final', partial: false, usage, steps };
  if (isNoActionSentinel(text)) return { text: '', posted: false, termination: 'no_action', partial: false, usage, steps };
  return { text: text.trim(), posted: false, termination: 'final', partial: false, usage, steps };
}

export function failed(message: string, retryable: boolean, usage: CliUsage, steps: number, extra: { retryAfterMs?: number } = {}): ExecutorResult {
  return { text: '', posted: false, termination: 'error', partial: true, usage, steps, error: { message, retryable, ...extra } };
}

/** The last non-empty lines of the stderr tail, for an error message. */
export function stderrSummary(tail: string, maxChars = 600): string {
  const t = tail.trim();
  return t.length > maxChars ? `…${t.slice(-maxChars)}` : t;
}

/** Parses one line as a JSON object; anything else (banners, warnings, garbage) is undefined. */
export function parseJsonObject(line: string): Record<string, unknown> | undefined {
  const t = line.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** One stdout line as a JSON event; a line that is not one (a banner, a warning) is noted and skipped. */
export function eventOfLine(line: string, notes: CliNote[]): Record<string, unknown> | undefined {
  const ev = parseJsonObject(line);
  if (!ev && line.trim()) notes.push({ event: 'unparsed_line', detail: line.slice(0, 200) });
  return ev;
}

export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function obj(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}
