// The one place hub HTTP happens: timeouts on every call, retries only where safe (docs/hub-api.md §10).
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Logger } from 'pino';
import { deadline } from './deadline.ts';
import { detailToString, HubError } from './errors.ts';
import { backoffDelayMs, DEFAULT_RETRY, isRepeatable, isRetryableStatus, parseRetryAfter, type RetryPolicy } from './retry-policy.ts';

export interface HubHttpOptions {
  /** Hub origin, e.g. http://127.0.0.1:7070 (the client adds /api/v1). */
  baseUrl: string;
  /** Admin (service) key or an agent key; sent as a Bearer token. */
  apiKey: string;
  timeoutMs?: number;
  retry?: RetryPolicy;
  logger?: Logger;
  /** Most connections open to the hub at once (default 256); further calls wait for one. */
  maxSockets?: number;
}

export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Makes a POST safe to retry; the hub replays the original answer for a repeated key. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export class HubHttp {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #retry: RetryPolicy;
  readonly #logger: Logger | undefined;
  /**
   * Kept-alive connections, shared by all calls. Profiling 1,000 activations in flight showed fetch() (WHATWG
   * streams, a connection pool without a cap) among the top costs; node:http with a bounded pool is leaner.
   */
  readonly #agent: HttpAgent;

  constructor(opts: HubHttpOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#apiKey = opts.apiKey;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
    this.#retry = opts.retry ?? DEFAULT_RETRY;
    this.#logger = opts.logger;
    const AgentClass = this.baseUrl.startsWith('https:') ? HttpsAgent : HttpAgent;
    this.#agent = new AgentClass({ keepAlive: true, maxSockets: opts.maxSockets ?? 256, scheduling: 'lifo' });
  }

  /** Closes idle kept-alive connections (in-flight calls finish). */
  close(): void {
    this.#agent.destroy();
  }

  async request(method: 'GET' | 'POST', path: string, opts: RequestOptions = {}): Promise<unknown> {
    const repeatable = isRepeatable(method, opts.idempotencyKey !== undefined);
    const attempts = repeatable ? this.#retry.attempts : 1;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#once(method, path, opts);
      } catch (err) {
        if (!(err instanceof HubError) || !err.retryable || attempt >= attempts || opts.signal?.aborted) throw err;
        const delay = backoffDelayMs(attempt, this.#retry, (err.cause as { retryAfterMs?: number } | undefined)?.retryAfterMs);
        this.#logger?.warn({ method, path, status: err.status, attempt, delayMs: Math.round(delay) }, 'hub call failed, retrying');
        await sleep(delay, opts.signal);
      }
    }
  }

  async #once(method: string, path: string, opts: RequestOptions): Promise<unknown> {
    const url = new URL(`${this.baseUrl}/api/v1${path}`);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json' };
    if (opts.body !== undefined) headers['content-type'] = 'application/json';
    if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
    const limit = deadline(opts.timeoutMs ?? this.#timeoutMs, opts.signal);

    let res: RawResponse;
    try {
      res = await send(url, method, headers, opts.body === undefined ? undefined : JSON.stringify(opts.body), limit.signal, this.#agent);
    } catch (cause) {
      const aborted = opts.signal?.aborted === true;
      const detail = limit.timedOut ? 'timed out' : aborted ? 'aborted' : errorMessage(cause);
      throw new HubError({ method, path, detail, retryable: !aborted, cause });
    } finally {
      limit.dispose();
    }
    const { status, text } = res;
    const body = parseJson(text);
    if (status >= 200 && status < 300) return body;
    const retryAfterMs = parseRetryAfter(res.retryAfter ?? null);
    throw new HubError({
      method,
      path,
      status,
      detail: detailToString(body, text.slice(0, 200) || res.statusText),
      retryable: isRetryableStatus(status),
      cause: { retryAfterMs },
    });
  }
}

interface RawResponse {
  status: number;
  statusText: string;
  retryAfter: string | undefined;
  text: string;
}

/** One HTTP exchange; the body is read whole (hub answers are small JSON). */
function send(url: URL, method: string, headers: Record<string, string>, body: string | undefined, signal: AbortSignal, agent: HttpAgent): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = request(url, { method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent, signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const retryAfter: string | undefined = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', retryAfter, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return `${err.message}${cause}`;
  }
  return String(err);
}

/** Waits `ms`, or less when `signal` aborts (it resolves then: the caller checks the signal). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
