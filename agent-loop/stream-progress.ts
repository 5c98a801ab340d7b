// Streamed model output as progress: fragments are coalesced into `model_delta` events so a fast stream
// does not wake listeners once per token, and nothing waits longer than the next fragment or the call's end.
import type { EventLog } from './events.ts';

export interface StreamProgressOptions {
  model: string;
  attempt: number;
  /** Emit once this many characters are waiting… */
  minChars?: number;
  /** …or this long has passed since the last emit. */
  maxDelayMs?: number;
  now?: () => number;
}

export class StreamProgress {
  readonly #events: EventLog;
  readonly #model: string;
  readonly #attempt: number;
  readonly #minChars: number;
  readonly #maxDelayMs: number;
  readonly #now: () => number;
  #pending = '';
  #lastEmit: number;

  constructor(events: EventLog, opts: StreamProgressOptions) {
    this.#events = events;
    this.#model = opts.model;
    this.#attempt = opts.attempt;
    this.#minChars = opts.minChars ?? 64;
    this.#maxDelayMs = opts.maxDelayMs ?? 100;
    this.#now = opts.now ?? Date.now;
    this.#lastEmit = this.#now();
  }

  /** One streamed fragment of the model's text. */
  push(text: string): void {
    if (!text) return;
    this.#pending += text;
    if (this.#pending.length >= this.#minChars || this.#now() - this.#lastEmit >= this.#maxDelayMs) this.flush();
  }

  /** The call ended (answered or failed): whatever is waiting goes out now. */
  flush(): void {
    if (!this.#pending) return;
    this.#events.emit({ type: 'model_delta', model: this.#model, attempt: this.#attempt, text: this.#pending });
    this.#pending = '';
    this.#lastEmit = this.#now();
  }
}
