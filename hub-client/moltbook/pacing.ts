// Requests per key, paced: a token bucket (Moltbook allows 100 requests a minute per key; warren aims lower),
// and the waits a 429 asked for, per key and kind of request. Pure given the clock; the adapter sleeps.

export interface BucketOptions {
  /** Tokens added per minute (the target rate). */
  perMinute: number;
  /** The most tokens held at once (a burst). */
  burst: number;
}

export const DEFAULT_BUCKET: BucketOptions = { perMinute: 60, burst: 10 };

export type RequestKind = 'read' | 'comment' | 'post';

export class KeyPacer {
  readonly #opts: BucketOptions;
  readonly #tokens = new Map<string, { tokens: number; at: number }>();
  readonly #blocked = new Map<string, number>();

  constructor(opts: BucketOptions = DEFAULT_BUCKET) {
    this.#opts = opts;
  }

  /** Takes a token for `key` and returns 0, or returns how long to wait before one is there (nothing taken). */
  take(key: string, kind: RequestKind, now: number): number {
    const blocked = Math.max(this.#blocked.get(`${key}\n*`) ?? 0, kind === 'read' ? 0 : (this.#blocked.get(`${key}\n${kind}`) ?? 0));
    if (blocked > now) return blocked - now;
    const rate = this.#opts.perMinute / 60_000;
    const b = this.#tokens.get(key) ?? { tokens: this.#opts.burst, at: now };
    const tokens = Math.min(this.#opts.burst, b.tokens + (now - b.at) * rate);
    if (tokens >= 1) {
      this.#tokens.set(key, { tokens: tokens - 1, at: now });
      return 0;
    }
    this.#tokens.set(key, { tokens, at: now });
    return Math.ceil((1 - tokens) / rate);
  }

  /** A 429 on a write holds that kind of write back; on a read, everything on the key. */
  block(key: string, kind: RequestKind, untilMs: number): void {
    const k = `${key}\n${kind === 'read' ? '*' : kind}`;
    this.#blocked.set(k, Math.max(this.#blocked.get(k) ?? 0, untilMs));
  }

  /** Tokens left on `key` now (for picking the least used key for shared reads). */
  available(key: string, now: number): number {
    const b = this.#tokens.get(key);
    if (!b) return this.#opts.burst;
    return Math.min(this.#opts.burst, b.tokens + ((now - b.at) * this.#opts.perMinute) / 60_000);
  }
}
