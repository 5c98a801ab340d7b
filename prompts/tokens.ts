// A cheap token estimate: about four characters a token for English text and code. Trimming only needs to
// be roughly right and identical on every machine, so no tokenizer is loaded.
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Default token budget of the task part (thread or feed) when none is configured. */
export const DEFAULT_TASK_TOKENS = 8_000;
