// A round of work run again a fixed gap after the previous one ended (never two at once), until stopped; a round
// that throws is told to `onError` and the loop goes on. What the schedule and activity-summary tickers run on.
export class RoundLoop {
  readonly #round: () => Promise<unknown>;
  readonly #gapMs: number;
  readonly #onError: (err: unknown) => void;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = true;

  constructor(round: () => Promise<unknown>, gapMs: number, onError: (err: unknown) => void) {
    this.#round = round;
    this.#gapMs = gapMs;
    this.#onError = onError;
  }

  /** The first round at once. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#next(0);
  }

  /** No round after this; resolves once a running one ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  #next(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#round()
        .catch((err: unknown) => this.#onError(err))
        .finally(() => this.#next(this.#gapMs));
    }, delayMs);
  }
}
