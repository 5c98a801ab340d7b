// Keeps definitions current: reloads when the store says something changed or when asked (`warren reload`,
// SIGHUP), one reload at a time, and retries with backoff while the store is unreachable. Whoever applies
// the definitions keeps the last good ones meanwhile; this class only decides when to try again.
import { backoffDelayMs } from '../policy/exponential-backoff.ts';

export interface ReloaderLogger {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ReloaderOptions {
  /** Loads and applies; resolves false when the store was unreachable (last good definitions kept). */
  reload: () => Promise<boolean>;
  /** Subscribes to store changes (with how one was noticed, when that is worth saying); returns the unsubscribe function. */
  watch?: (onChange: (noticed?: string) => void) => () => void;
  logger: ReloaderLogger;
  initialRetryMs?: number;
  maxRetryMs?: number;
}

/**
 * Delay before retry number `failures` (1-based; 0 counts as the first): doubling from `initialMs`, capped at
 * `maxMs`. No jitter: one reloader per daemon, and its store is not a crowd's.
 */
export function retryDelay(failures: number, initialMs: number, maxMs: number): number {
  return backoffDelayMs({ baseMs: initialMs, factor: 2, capMs: maxMs, jitter: 'none' }, Math.max(1, failures));
}

export class Reloader {
  readonly #opts: ReloaderOptions;
  #running: Promise<void> | undefined;
  #again = false;
  #failures = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #unwatch: (() => void) | undefined;
  #stopped = false;

  constructor(opts: ReloaderOptions) {
    this.#opts = opts;
  }

  /** Starts watching the store. */
  start(): void {
    this.#unwatch = this.#opts.watch?.((noticed) => {
      if (noticed) this.#opts.logger.info({ noticed }, 'definitions changed on disk; reloading');
      void this.trigger('store changed');
    });
  }

  /**
   * Reloads now; a request that arrives while a reload runs queues exactly one more, so the last change is
   * never missed and bursts of events do not pile up.
   */
  trigger(why: string): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#loop(why).finally(() => (this.#running = undefined));
    return this.#running;
  }

  stop(): void {
    this.#stopped = true;
    this.#unwatch?.();
    clearTimeout(this.#retryTimer);
  }

  async #loop(why: string): Promise<void> {
    let reason = why;
    do {
      this.#again = false;
      clearTimeout(this.#retryTimer);
      let ok: boolean;
      try {
        ok = await this.#opts.reload();
      } catch (err) {
        // A bug in applying definitions must not kill the watcher; it is retried like an outage.
        this.#opts.logger.error({ err, why: reason }, 'reloading definitions failed');
        ok = false;
      }
      if (ok) {
        this.#failures = 0;
      } else if (!this.#stopped) {
        this.#failures++;
        const delay = retryDelay(this.#failures, this.#opts.initialRetryMs ?? 1_000, this.#opts.maxRetryMs ?? 60_000);
        this.#opts.logger.info({ retryInMs: delay, failures: this.#failures }, 'definitions store unavailable; keeping the last good definitions');
        this.#retryTimer = setTimeout(() => void this.trigger('retry'), delay);
        this.#retryTimer.unref();
      }
      reason = 'queued';
    } while (this.#again && !this.#stopped);
  }
}
