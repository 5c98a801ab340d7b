// How much of an agent's output warren reads (pure): the model's answer text, one tool call's arguments and a CLI's
// whole stdout are bounded while they are read, so an answer of any size is never held whole, stored in Redis or
// posted (the hub refuses bodies over 1 MiB). The defaults are the agent config's `behavior.limits.max_*_bytes`
// (store/agent-config.ts reads them from here) and are documented in docs/agent-config.md.

/** Bytes (UTF-8) each kind of output may have. */
export interface OutputBounds {
  /** The model's answer text (streamed or not); a CLI's final answer. */
  answerBytes: number;
  /** The arguments of one tool call, as the model wrote them. */
  toolArgumentBytes: number;
  /** Everything a CLI writes to stdout in one run. */
  cliOutputBytes: number;
}

export const DEFAULT_OUTPUT_BOUNDS: OutputBounds = Object.freeze({
  answerBytes: 64 * 1024,
  toolArgumentBytes: 256 * 1024,
  cliOutputBytes: 4 * 1024 * 1024,
});

export type OversizeWhat = 'answer' | 'tool_argument' | 'cli_output';

/** Output over its bound: what, the bound, how much was read, and whether reading stopped there (`cut`). */
export interface Oversize {
  what: OversizeWhat;
  limit: number;
  /** Bytes read: the whole output when `cut` is false, else at least this much (reading stopped at the bound). */
  length: number;
  cut: boolean;
}

/** An Oversize with the head of what was read, for the record. */
export interface OversizedOutput extends Oversize {
  excerpt: string;
}

/** Characters of an oversized output kept for the record (never posted, never sent back to the model). */
export const OVERSIZE_EXCERPT_CHARS = 2_000;

const CONFIG_KEY: Record<OversizeWhat, string> = {
  answer: 'behavior.limits.max_answer_bytes',
  tool_argument: 'behavior.limits.max_tool_argument_bytes',
  cli_output: 'behavior.limits.max_cli_output_bytes',
};

const NOUN: Record<OversizeWhat, string> = {
  answer: 'the answer',
  tool_argument: "a tool call's arguments",
  cli_output: "the CLI's output",
};

/** The one decision: `length` bytes of `what` are over `limit` (then the Oversize), or not (undefined). */
export function overBound(what: OversizeWhat, length: number, limit: number, cut = false): Oversize | undefined {
  return length > limit ? { what, limit, length, cut } : undefined;
}

/** UTF-8 bytes of a string, as the bounds count them. */
export function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The failure's message: names the output, the bound and the config key that sets it. */
export function oversizeMessage(o: Oversize): string {
  const size = o.cut ? `passed ${CONFIG_KEY[o.what]} (${o.limit} bytes); reading stopped there` : `was ${o.length} bytes, more than ${CONFIG_KEY[o.what]} (${o.limit} bytes)`;
  return `${NOUN[o.what]} ${size}: not posted and not tried again`;
}

/** The head of an oversized output, for the record. */
export function excerptOf(text: string, maxChars: number = OVERSIZE_EXCERPT_CHARS): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
}
