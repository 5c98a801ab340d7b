// Idempotent POSTs (docs/hub-api.md §11). A repeated Idempotency-Key with the same body replays the first 2xx
// answer and creates nothing; with another body it is refused (422); while the first is still running it is
// refused (409); failures are not remembered, so a retry can succeed. Keys are scoped to the caller (the
// acting agent, or the admin), the method and the path.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { HttpError } from './http-error.ts';
import { sha256 } from './keys.ts';
import { seal, unseal } from './sealing.ts';

export const KEEP_REPLIES_MS = 24 * 3600 * 1000;
const PRUNE_EVERY_MS = 60_000;
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

export interface StoredReply {
  status: number;
  body: unknown;
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` count as the same body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function validIdempotencyKey(key: string): boolean {
  return VALID_KEY.test(key);
}

/** What the pipeline does with an idempotent request. */
export type IdempotencyTicket =
  | { kind: 'replay'; reply: StoredReply }
  | { kind: 'fresh'; /** Store a 2xx answer (call inside the request's transaction). */ remember(reply: StoredReply): void; /** Always call when done. */ release(): void };

export class IdempotencyLedger {
  readonly #inFlight = new Set<string>();
  readonly #find: StatementSync;
  readonly #insert: StatementSync;
  readonly #prune: StatementSync;
  readonly #now: () => number;
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(db: DatabaseSync, now: () => number = Date.now) {
    this.#now = now;
    this.#find = db.prepare('SELECT fingerprint, status, body, sealed FROM idempotent_replies WHERE lookup = ? AND created_at >= ?');
    this.#insert = db.prepare('INSERT OR REPLACE INTO idempotent_replies (lookup, fingerprint, status, body, sealed, created_at) VALUES (?, ?, ?, ?, ?, ?)');
    this.#prune = db.prepare('DELETE FROM idempotent_replies WHERE created_at < ?');
  }

  /**
   * `scope` names the caller, method and path; `body` is the parsed request body. `seal`: store the reply
   * encrypted (see sealing.ts); a route whose answer never holds a secret may store it as it is.
   */
  begin(scope: string, key: string, body: unknown, opts: { seal: boolean } = { seal: true }): IdempotencyTicket {
    if (!validIdempotencyKey(key)) throw new HttpError(422, 'Idempotency-Key must be 1–255 printable characters');
    // The row is found by a digest; the reply is sealed with the raw key+scope, which is never stored.
    const secret = `${scope}\n${key}`;
    const lookup = sha256(secret);
    const fingerprint = sha256(canonicalJson(body ?? null));
    const seen = this.#find.get(lookup, this.#now() - KEEP_REPLIES_MS) as { fingerprint: string; status: number; body: string; sealed: number } | undefined;
    if (seen) {
      if (seen.fingerprint !== fingerprint) throw new HttpError(422, 'Idempotency-Key reused with a different request body');
      const plain = seen.sealed ? unseal(seen.body, secret) : seen.body;
      if (plain === undefined) throw new Error('stored idempotent reply could not be opened');
      return { kind: 'replay', reply: { status: seen.status, body: JSON.parse(plain) as unknown } };
    }
    if (this.#inFlight.has(lookup)) throw new HttpError(409, 'a request with this Idempotency-Key is still in flight');
    this.#inFlight.add(lookup);
    return {
      kind: 'fresh',
      remember: (reply) => {
        if (reply.status < 200 || reply.status > 299) return;
        const now = this.#now();
        // Expired replies are never answered (find looks within KEEP_REPLIES_MS), so deleting them once a
        // minute is enough: not a DELETE with every write.
        if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
          this.#prune.run(now - KEEP_REPLIES_MS);
          this.#prunedAt = now;
        }
        const text = JSON.stringify(reply.body);
        this.#insert.run(lookup, fingerprint, reply.status, opts.seal ? seal(text, secret) : text, opts.seal ? 1 : 0, now);
      },
      release: () => void this.#inFlight.delete(lookup),
    };
  }
}
