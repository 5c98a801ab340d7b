// Wakes held long-polls (docs/hub-api.md §7). A waiter sleeps until `wake()` (called after a commit that created
// notifications), its timeout, its client leaving, or the hub closing. No sleep loop, no timers left behind.

export type WaitEnd = 'woken' | 'timeout' | 'aborted' | 'closed';

export class WorkSignal {
  readonly #waiters = new Set<(end: WaitEnd) => void>();
  #closed = false;

  /** How many requests are held right now (for tests and metrics). */
  get waiting(): number {
    return this.#waiters.size;
  }

  wake(): void {
    for (const w of [...this.#waiters]) w('woken');
  }

  /** Ends every current and future wait at once; used when the hub shuts down. */
  close(): void {
    this.#closed = true;
    for (const w of [...this.#waiters]) w('closed');
  }

  wait(ms: number, signal: AbortSignal): Promise<WaitEnd> {
    if (this.#closed) return Promise.resolve('closed');
    if (signal.aborted) return Promise.resolve('aborted');
    return new Promise((resolve) => {
      const end = (why: WaitEnd): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.#waiters.delete(end);
        resolve(why);
      };
      const onAbort = (): void => end('aborted');
      const timer = setTimeout(() => end('timeout'), Math.max(0, ms));
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.add(end);
    });
  }
}
