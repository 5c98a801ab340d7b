// Idempotent POSTs (hub-api.md §11): a repeated Idempotency-Key with the same body replays the first
// 2xx answer and creates nothing; with another body it is refused; failures are not remembered.
import type { DatabaseSync } from 'node:sqlite';
import { HttpError } from './http-error.ts';
import { sha256 } from './keys.ts';
import type { Reply } from './router.ts';

const KEEP_MS = 24 * 3600 * 1000;

export class IdempotencyStore {
  readonly #db: DatabaseSync;

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  async run(scope: string, key: string, rawBody: string, handler: () => Reply | Promise<Reply>): Promise<Reply> {
    if (key.length < 1 || key.length > 255 || !/^[\x21-\x7e]+$/.test(key)) throw new HttpError(422, 'Idempotency-Key must be 1–255 printable characters');
    const fingerprint = sha256(rawBody);
    this.#db.prepare('DELETE FROM idempotency WHERE created_at < ?').run(Date.now() - KEEP_MS);
    const seen = this.#db.prepare('SELECT fingerprint, status, body FROM idempotency WHERE scope = ? AND key = ?').get(scope, key) as
      | { fingerprint: string; status: number | null; body: string | null }
      | undefined;
    if (seen) {
      if (seen.fingerprint !== fingerprint) throw new HttpError(422, 'Idempotency-Key reused with a different request body');
      if (seen.status === null) throw new HttpError(409, 'a request with this Idempotency-Key is still in flight');
      return { status: seen.status, body: JSON.parse(seen.body ?? 'null') as unknown };
    }
    this.#db.prepare('INSERT INTO idempotency (scope, key, fingerprint, status, body, created_at) VALUES (?, ?, ?, NULL, NULL, ?)').run(scope, key, fingerprint, Date.now());
    try {
      const reply = await handler();
      if (reply.status >= 200 && reply.status < 300) {
        this.#db.prepare('UPDATE idempotency SET status = ?, body = ? WHERE scope = ? AND key = ?').run(reply.status, JSON.stringify(reply.body), scope, key);
      } else this.#forget(scope, key);
      return reply;
    } catch (err) {
      this.#forget(scope, key);
      throw err;
    }
  }

  #forget(scope: string, key: string): void {
    this.#db.prepare('DELETE FROM idempotency WHERE scope = ? AND key = ?').run(scope, key);
  }
}
