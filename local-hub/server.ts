// The local hub's HTTP server: JSON in and out, bearer auth, idempotent POSTs, `{detail}` errors.
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { authenticate } from './auth.ts';
import { openHubDb } from './db.ts';
import { HttpError } from './http-error.ts';
import { HubStore } from './hub-store.ts';
import { IdempotencyStore } from './idempotency.ts';
import { sha256 } from './keys.ts';
import { hubRoutes } from './routes.ts';

export interface HubServerOptions {
  /** SQLite file (default `./data/hub.sqlite`), or `:memory:`. */
  dbPath?: string;
  /** Admin (service) key; generated when absent (the caller prints it). */
  adminKey?: string;
  host?: string;
  /** Default 7070; 0 picks a free port. */
  port?: number;
  logger?: Logger;
  /** Test switches for fault tests; also reachable (and changeable) as `RunningHub.faults`. */
  faults?: HubFaults;
}

export interface HubFaults {
  /** Answer 404 on the long-poll, as a hub without it would. */
  pollNotFound?: boolean;
}

export interface RunningHub {
  url: string;
  port: number;
  adminKey: string;
  /** `notification` after each commit that created notifications. */
  events: EventEmitter;
  faults: HubFaults;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;

export async function startHub(opts: HubServerOptions = {}): Promise<RunningHub> {
  const adminKey = opts.adminKey ?? `warren_admin_${randomBytes(24).toString('hex')}`;
  const adminKeyHash = sha256(adminKey);
  const db = openHubDb(opts.dbPath ?? './data/hub.sqlite');
  const store = new HubStore(db);
  const events = new EventEmitter();
  events.setMaxListeners(0); // one listener per held long-poll
  store.onNotify = () => events.emit('notification');
  const idempotency = new IdempotencyStore(db);
  const faults: HubFaults = { ...opts.faults };
  const router = hubRoutes(store, (req) => authenticate(req.headers, store, adminKeyHash), events);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://hub');
    const method = req.method ?? 'GET';
    if (method === 'GET' && (url.pathname === '/health' || url.pathname === '/ready')) return send(res, 200, { status: 'ok' });
    if (faults.pollNotFound && url.pathname === '/api/v1/notifications/poll') throw new HttpError(404, 'no long-poll on this hub');
    const match = router.match(method, url.pathname);
    if (match === undefined) throw new HttpError(404, `no route ${method} ${url.pathname}`);
    if (match === 'method') throw new HttpError(405, `${method} not allowed on ${url.pathname}`);
    const raw = await readBody(req);
    let body: unknown;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        throw new HttpError(400, 'malformed JSON body');
      }
    }
    const gone = new AbortController();
    res.on('close', () => gone.abort());
    const request = { method, path: url.pathname, params: match.params, query: url.searchParams, headers: req.headers, body, signal: gone.signal };
    const key = req.headers['idempotency-key'];
    if (method === 'POST' && typeof key === 'string') {
      const scope = `${sha256(req.headers.authorization ?? String(req.headers['x-admin-key']))}|${url.pathname}|${JSON.stringify((body as { agent_id?: unknown } | undefined)?.agent_id ?? null)}`;
      const reply = await idempotency.run(scope, key, raw, () => match.handler(request));
      return send(res, reply.status, reply.body);
    }
    const reply = await match.handler(request);
    send(res, reply.status, reply.body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (err instanceof HttpError) return send(res, err.status, { detail: err.message }, err.headers);
      opts.logger?.error({ err }, 'hub request failed');
      send(res, 500, { detail: 'internal error' });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 7070, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${opts.host && opts.host !== '0.0.0.0' ? opts.host : '127.0.0.1'}:${port}`,
    port,
    adminKey,
    events,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          db.close();
          resolve();
        });
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new HttpError(413, 'request body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
