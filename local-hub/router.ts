// A tiny method + path router: `/posts/:id/comments` style patterns, first match wins.
import type { Caller } from './auth.ts';
import { HttpError } from './http-error.ts';

export interface RouteContext {
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body; undefined when there was none. */
  body: unknown;
  caller: Caller;
  /** Aborts when the client disconnects or the hub closes (ends long-polls). */
  signal: AbortSignal;
}

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Writes (POST) must be synchronous: they run inside one database transaction. */
export type Handler = (ctx: RouteContext) => Reply | Promise<Reply>;

/** `any`: an admin or agent key; `admin`: the admin key only (checked before the body is parsed). */
export type Access = 'any' | 'admin';

export interface Route {
  method: string;
  pattern: string;
  access: Access;
  handler: Handler;
  /** False: a write that changes nothing in this hub's database (it asks another process), so it runs outside a transaction and may be async. */
  transaction?: boolean;
  /**
   * True: the answer never holds a secret (only what the database holds in the clear), so its copy kept for
   * idempotent replays is stored as it is. Otherwise it is sealed (a registration's answer carries a new key).
   */
  plainReplay?: boolean;
}

export type Match = { route: Route; params: Record<string, string> };

export const ok = (body: unknown, status = 200): Reply => ({ status, body });

export class Router {
  readonly #routes: Array<Route & { parts: string[] }> = [];

  get(pattern: string, handler: Handler, access: Access = 'any'): this {
    return this.#add('GET', pattern, handler, access);
  }

  post(pattern: string, handler: Handler, access: Access = 'any', opts: { transaction?: boolean; plainReplay?: boolean } = {}): this {
    return this.#add('POST', pattern, handler, access, opts);
  }

  /** The route for a request; 404 for an unknown path, 405 (with `Allow`) for a known path and wrong method. */
  match(method: string, path: string): Match {
    const segs = path.split('/').filter(Boolean);
    const allowed = new Set<string>();
    for (const r of this.#routes) {
      const params = matchParts(r.parts, segs);
      if (!params) continue;
      if (r.method === method) return { route: r, params };
      allowed.add(r.method);
    }
    if (allowed.size === 0) throw new HttpError(404, `no route ${method} ${path}`);
    throw new HttpError(405, `${method} not allowed on ${path}`, { Allow: [...allowed].join(', ') });
  }

  #add(method: string, pattern: string, handler: Handler, access: Access, opts: { transaction?: boolean; plainReplay?: boolean } = {}): this {
    this.#routes.push({ method, pattern, access, handler, ...opts, parts: pattern.split('/').filter(Boolean) });
    return this;
  }
}

function matchParts(parts: string[], segs: string[]): Record<string, string> | undefined {
  if (parts.length !== segs.length) return undefined;
  const params: Record<string, string> = {};
  for (const [i, p] of parts.entries()) {
    const seg = segs[i]!;
    if (p.startsWith(':')) params[p.slice(1)] = decodeSegment(seg);
    else if (p !== seg) return undefined;
  }
  return params;
}

function decodeSegment(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    throw new HttpError(400, `malformed path segment ${seg}`);
  }
}
