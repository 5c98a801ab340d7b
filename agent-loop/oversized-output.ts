// Output over its bound (policy/output-bounds.ts) as the loop meets it: a typed, never-retried model failure, the
// meter a streamed answer is read through (it throws the moment a bound is passed, so the rest is never read), and
// the same check for an answer that came in whole.
import { excerptOf, overBound, oversizeMessage, utf8Bytes, type OutputBounds, type OversizedOutput, type Oversize } from '../policy/output-bounds.ts';
import type { TokenUsage } from './messages.ts';
import { ModelError, type ModelResponse } from './model.ts';
import type { LedgerEntry } from './usage-ledger.ts';

/** What a model call may return: its answer text and each tool call's arguments. */
export type ModelOutputBounds = Pick<OutputBounds, 'answerBytes' | 'toolArgumentBytes'>;

/** The model wrote more than a bound allows. Not retryable: the same request would write the same wall again. */
export class OversizedOutputError extends ModelError {
  override readonly name = 'OversizedOutputError';
  readonly output: OversizedOutput;
  /** What the cut call is estimated to have cost, set by the loop that made it (the provider was paid for it). */
  charge: LedgerEntry | undefined;
  constructor(oversize: Oversize, text: string) {
    super(oversizeMessage(oversize), { retryable: false });
    this.output = { ...oversize, excerpt: excerptOf(text) };
  }
}

/** Counts a streamed answer as it is read; a piece that passes a bound throws OversizedOutputError. */
export class OutputMeter {
  readonly #bounds: ModelOutputBounds;
  #answerBytes = 0;
  readonly #argumentBytes = new Map<number, number>();

  constructor(bounds: ModelOutputBounds) {
    this.#bounds = bounds;
  }

  /** One more piece of the answer; `soFar` is the text read until now (for the excerpt). */
  answer(piece: string, soFar: () => string): void {
    this.#answerBytes += utf8Bytes(piece);
    const over = overBound('answer', this.#answerBytes, this.#bounds.answerBytes, true);
    if (over) throw new OversizedOutputError(over, soFar());
  }

  /** One more piece of tool call `index`'s arguments. */
  toolArgument(index: number, piece: string, soFar: () => string): void {
    const bytes = (this.#argumentBytes.get(index) ?? 0) + utf8Bytes(piece);
    this.#argumentBytes.set(index, bytes);
    const over = overBound('tool_argument', bytes, this.#bounds.toolArgumentBytes, true);
    if (over) throw new OversizedOutputError(over, soFar());
  }
}

/** The error for a whole response over a bound (a non-streamed call, any ChatModel), or undefined. */
export function oversizeOfResponse(res: ModelResponse, bounds: ModelOutputBounds): OversizedOutputError | undefined {
  const content = res.content ?? '';
  const answer = overBound('answer', utf8Bytes(content), bounds.answerBytes);
  if (answer) return new OversizedOutputError(answer, content);
  for (const c of res.toolCalls) {
    const raw = c.rawArguments ?? JSON.stringify(c.arguments);
    const over = overBound('tool_argument', utf8Bytes(raw), bounds.toolArgumentBytes);
    if (over) return new OversizedOutputError(over, raw);
  }
  return undefined;
}

/** The tokens a cut call is estimated to have cost: its prompt, and what was read of its output at 4 bytes a token. */
export function oversizedUsage(err: OversizedOutputError, promptTokens: number): TokenUsage {
  return { inputTokens: promptTokens, outputTokens: Math.ceil(err.output.length / 4), cachedTokens: 0 };
}
