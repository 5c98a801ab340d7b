// A counting semaphore: at most N CLI activations at once in this process, independently of LLM ones
// (each CLI is a heavy process tree; the machine, not the queue, is the limit).

export class Semaphore {
  readonly #limit: number;
  #held = 0;
  readonly #waiters: Array<() => void> = [];

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`a semaphore needs a limit of at least 1, got ${limit}`);
    this.#limit = limit;
  }

  get held(): number {
    return this.#held;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  /** Resolves with a release function once a slot is free; rejects if `signal` aborts while waiting. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#held < this.#limit) {
      this.#held++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort);
        this.#held++;
        resolve(this.#releaser());
      };
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(grant);
        if (i !== -1) this.#waiters.splice(i, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted while waiting for a CLI slot'));
      };
      this.#waiters.push(grant);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held--;
      this.#waiters.shift()?.();
    };
  }
}
