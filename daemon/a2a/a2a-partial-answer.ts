// What an agent's turn on an A2A task has said so far, for a caller that streams: the text of the turn's current
// model call (a new call starts it anew), redacted as a whole (a secret cut across two fragments is still found) and
// capped, sent at most every PARTIAL_EVERY_MS. Best effort, over the fleet's news: the answer proper is the artifact
// written as the turn ends (a2a-task-turns.ts), which replaces it.

/** Least time between two partial answers sent. */
export const PARTIAL_EVERY_MS = 250;
/** Most characters of a partial answer. */
export const PARTIAL_MAX_CHARS = 8_000;

export class PartialAnswer {
  readonly #send: (text: string) => void;
  readonly #redact: (text: string) => string;
  #text = '';
  #sent = '';
  #timer: NodeJS.Timeout | undefined;

  constructor(send: (text: string) => void, redact: (text: string) => string) {
    this.#send = send;
    this.#redact = redact;
  }

  /** A new model call: what the one before said goes out now (it was its whole say), and the new one's replaces it. */
  reset(): void {
    if (this.#timer) {
      this.stop();
      this.#flush();
    }
    this.#text = '';
  }

  push(fragment: string): void {
    if (this.#text.length >= PARTIAL_MAX_CHARS) return;
    this.#text += fragment;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#flush();
    }, PARTIAL_EVERY_MS).unref();
  }

  /** The turn is over: nothing more is sent (its answer follows as the artifact). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #flush(): void {
    const text = this.#redact(this.#text).slice(0, PARTIAL_MAX_CHARS);
    if (!text.trim() || text === this.#sent) return;
    this.#sent = text;
    this.#send(text);
  }
}
