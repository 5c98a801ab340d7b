// The daemon's ingress listener: where the outside world reaches warren's agents (webhooks under /hooks/, A2A
// under /a2a/). Features mount a route by path prefix; the server only routes, bounds and answers what no route
// takes. It opens once some loaded agent needs it (an agent serving A2A, an agent with webhooks), or always with
// `ingress.enabled: true`, so a daemon whose agents need none listens on no port for it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { AgentDefinition } from '../../store/definition.ts';

export interface IngressRoute {
  /** What the route is, for logs (`webhooks`, `a2a`). */
  name: string;
  /** The path prefix it answers, starting and ending with `/` (e.g. `/hooks/`). */
  prefix: string;
  /** Whether these definitions need the route served (any agent with webhooks, any agent serving A2A). */
  wanted(definitions: readonly AgentDefinition[]): boolean;
  /** Answers one request; `rest` is the path after the prefix (undecoded), `url` the server's base URL. */
  handle(req: IncomingMessage, res: ServerResponse, rest: string, url: string): void | Promise<void>;
}

export interface IngressOptions {
  host: string;
  port: number;
  /** `auto`: open once a route is wanted; true: at start; false: never. */
  enabled: boolean | 'auto';
  routes: readonly IngressRoute[];
  logger: Logger;
}

/** Headers and a request line past these are refused before any route sees them. */
const MAX_HEADER_BYTES = 16 * 1024;
/** A request that sends nothing for this long is cut: a slow sender holds no socket for ever. */
const REQUEST_TIMEOUT_MS = 30_000;

export class Ingress {
  readonly #opts: IngressOptions;
  #server: Server | undefined;
  #opening: Promise<string> | undefined;
  #url: string | undefined;

  constructor(opts: IngressOptions) {
    this.#opts = opts;
  }

  /** The base URL once listening (`http://127.0.0.1:7071`), else undefined. */
  get url(): string | undefined {
    return this.#url;
  }

  /**
   * Opens the listener when the definitions need it (or it is always on) and it is not open yet; resolves its URL,
   * or undefined when it stays closed. A port that cannot be had rejects (the caller decides how loud).
   */
  async open(definitions: readonly AgentDefinition[]): Promise<string | undefined> {
    const { enabled, routes } = this.#opts;
    if (enabled === false) return undefined;
    if (this.#url) return this.#url;
    if (enabled === 'auto' && !routes.some((r) => r.wanted(definitions))) return undefined;
    this.#opening ??= this.#listen().catch((err: unknown) => {
      this.#opening = undefined;
      throw err;
    });
    return this.#opening;
  }

  async #listen(): Promise<string> {
    const { host, port, logger } = this.#opts;
    const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES, requestTimeout: REQUEST_TIMEOUT_MS }, (req, res) => this.#route(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => logger.error({ err }, 'ingress listener error'));
    const bound = (server.address() as AddressInfo).port;
    this.#server = server;
    this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
    logger.info({ url: this.#url, routes: this.#opts.routes.map((r) => r.prefix) }, 'ingress listening');
    return this.#url;
  }

  #route(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0]!;
    const route = this.#opts.routes.find((r) => path.startsWith(r.prefix));
    if (!route) return answer(res, 404, { error: 'not_found', detail: `nothing is served at ${path.slice(0, 200)}; the ingress serves ${this.#opts.routes.map((r) => `${r.prefix}…`).join(', ') || 'nothing'}` });
    Promise.resolve()
      .then(() => route.handle(req, res, path.slice(route.prefix.length), this.#url!))
      .catch((err: unknown) => {
        // A route's bug answers 500 and is logged; it never takes the listener down.
        this.#opts.logger.error({ err, route: route.name }, 'ingress route failed');
        answer(res, 500, { error: 'internal', detail: 'the request could not be handled; see the daemon log' });
      });
  }

  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.#url = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

/** A JSON answer, unless one was sent already. */
export function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers });
  res.end(text);
}
