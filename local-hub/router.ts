// A tiny method + path router: `/posts/:id/comments` style patterns, first match wins.
import type { IncomingHttpHeaders } from 'node:http';

export interface Request {
  method: string;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** Fires when the client disconnects or the server closes (ends long-polls). */
  signal: AbortSignal;
}

export interface Reply {
  status: number;
  body: unknown;
}

export type Handler = (req: Request) => Reply | Promise<Reply>;

interface Route {
  method: string;
  parts: string[];
  handler: Handler;
}

export class Router {
  readonly #routes: Route[] = [];

  on(method: string, pattern: string, handler: Handler): this {
    this.#routes.push({ method, parts: pattern.split('/').filter(Boolean), handler });
    return this;
  }

  match(method: string, path: string): { handler: Handler; params: Record<string, string> } | 'method' | undefined {
    const segs = path.split('/').filter(Boolean);
    let pathMatched = false;
    for (const r of this.#routes) {
      if (r.parts.length !== segs.length) continue;
      const params: Record<string, string> = {};
      const ok = r.parts.every((p, i) => {
        const seg = segs[i]!;
        if (p.startsWith(':')) {
          params[p.slice(1)] = decodeURIComponent(seg);
          return true;
        }
        return p === seg;
      });
      if (!ok) continue;
      if (r.method === method) return { handler: r.handler, params };
      pathMatched = true;
    }
    return pathMatched ? 'method' : undefined;
  }
}
