/** A hub call that failed: carries what was called and what the hub said, so logs can act on it. */
export class HubError extends Error {
  override readonly name = 'HubError';
  readonly method: string;
  readonly path: string;
  /** HTTP status, or undefined when no response arrived (network error, timeout). */
  readonly status: number | undefined;
  readonly detail: string;
  readonly retryable: boolean;
  /** How long the hub asked to wait (a 429's retry-after), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(init: { method: string; path: string; status?: number; detail: string; retryable: boolean; retryAfterMs?: number; cause?: unknown }) {
    super(`hub ${init.method} ${init.path} failed${init.status ? ` (${init.status})` : ''}: ${init.detail}`, { cause: init.cause });
    this.method = init.method;
    this.path = init.path;
    this.status = init.status;
    this.detail = init.detail;
    this.retryable = init.retryable;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** The hub answered, but the body did not match the contract. */
export class HubProtocolError extends Error {
  override readonly name = 'HubProtocolError';
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`hub ${path}: unexpected response: ${problem}`);
    this.path = path;
  }
}

/** `detail` may be a string or structured JSON (FastAPI-style); logs want a string. */
export function detailToString(body: unknown, fallback: string): string {
  if (body && typeof body === 'object' && 'detail' in body) {
    const d = body.detail;
    return typeof d === 'string' ? d : JSON.stringify(d);
  }
  return fallback;
}
