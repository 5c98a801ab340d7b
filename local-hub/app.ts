// The request pipeline of the local hub: probes, test switches, routing, auth, body, idempotency, handler.
// Independent of the listening socket, so it can be mounted on any node:http server.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { authenticate, type Caller } from './auth.ts';
import { openHubDb } from './db.ts';
import { createHubEvents, type HubEvents } from './events.ts';
import { applyFaults, type HubFaults } from './faults.ts';
import { HttpError } from './http-error.ts';
import { parseJson, readBody, sendJson } from './http-io.ts';
import { IdempotencyLedger } from './idempotency.ts';
import { newAdminKey, sha256 } from './keys.ts';
import type { HubServerOptions } from './options.ts';
import { buildRouter } from './routes/index.ts';
import type { Match, Reply, RouteContext } from './router.ts';
import { createServices, type HubServices } from './services.ts';
import { hubNames, trustedNetworks, watchRefusal, type WatchRequestKind, type WatchRules } from './watch/access.ts';
import { watchAsset } from './watch/assets.ts';
import { WatchEventStream } from './watch/event-stream.ts';
import { watchRoutes } from './watch/routes.ts';
import { WATCH_SECURITY_HEADERS } from './watch/security-headers.ts';
import { loadOrCreateWatchToken } from './watch/operator-token.ts';
import { WatchSession } from './watch/session.ts';

export interface HubApp {
  adminKey: string;
  /** The watch page's operator token (`/?token=…` gives the browser its session). */
  watchToken: string;
  events: HubEvents;
  faults: HubFaults;
  services: HubServices;
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  /** Ends held long-polls and pending test delays at once; call before closing the HTTP server. */
  drain(): void;
  /** Closes the database; call after the HTTP server closed. */
  close(): void;
}

const PROBES = new Set(['/health', '/ready', '/api/v1/health']);
const DEFAULT_MAX_BODY = 1024 * 1024;

export function createHubApp(opts: HubServerOptions = {}): HubApp {
  const adminKey = opts.adminKey ?? newAdminKey();
  const adminDigest = sha256(adminKey);
  const logger = opts.logger;
  // Before the database opens: a token file that cannot be used stops the start with nothing left open.
  const watchToken = opts.watchToken ?? (opts.watchTokenFile ? loadOrCreateWatchToken(opts.watchTokenFile) : undefined);
  const db = openHubDb(opts.dbPath ?? './data/hub.sqlite');
  const events = createHubEvents();
  const services = createServices(db, events, {
    budget: opts.budget ?? {},
    maxPollSeconds: opts.maxPollSeconds ?? 60,
    onHookError: (err) => logger?.error({ err }, 'hub after-commit hook failed'),
  });
  const router = buildRouter(services);
  const watchPolicy = opts.watch ?? 'loopback';
  if (watchPolicy !== 'off') watchRoutes(router, services, opts.fleet);
  const watchStream = new WatchEventStream(events);
  const watchRules: WatchRules = { policy: watchPolicy, names: hubNames(opts.host, opts.watchHosts) };
  const watchSession = new WatchSession(watchToken);
  const ledger = new IdempotencyLedger(db);
  const faults: HubFaults = opts.faults ?? {};
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const closing = new AbortController();
  // Networks that count as this machine for the watch page (a container bridge's gateway).
  if (opts.watchNetworks?.length) watchRules.trusted = trustedNetworks(opts.watchNetworks);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<Reply> {
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://local-hub');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    if (PROBES.has(path) && (method === 'GET' || method === 'HEAD')) {
      if (closing.signal.aborted) throw new HttpError(503, 'hub is shutting down');
      return { status: 200, body: { status: 'ok' } };
    }
    applyFaults(faults, path);
    const match = router.match(method, path);
    const watching = path.startsWith('/watch/api/');
    if (watching) checkWatch(req, method === 'GET' ? 'read' : 'write');
    const raw = await readBody(req, maxBody);
    // The watch page has no key; what it may do is decided by its routes (humans only) and the access check.
    const caller: Caller = watching ? { kind: 'admin' } : authenticate(req.headers, services.agents, adminDigest, services.now().toISOString());
    if (match.route.access === 'admin' && caller.kind !== 'admin') throw new HttpError(403, 'admin key required');
    const gone = new AbortController();
    // Only a client that left before its answer was sent is "gone": aborting after every answer cost a
    // DOMException (with its stack) per request.
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    const ctx: RouteContext = { params: match.params, query: url.searchParams, body: parseJson(raw), caller, signal: AbortSignal.any([gone.signal, closing.signal]) };
    return method === 'GET' ? read(match, ctx, faults.slowMs) : write(match, ctx, method, path, header(req, 'idempotency-key'));
  }

  async function read(match: Match, ctx: RouteContext, slowMs: number | undefined): Promise<Reply> {
    await slowDown(slowMs, ctx.signal);
    return match.route.handler(ctx);
  }

  /** A write runs in one transaction with its idempotency record: both are stored, or neither. */
  async function write(match: Match, ctx: RouteContext, method: string, path: string, idempotencyKey: string | undefined): Promise<Reply> {
    if (match.route.transaction === false) return match.route.handler(ctx);
    const ticket = idempotencyKey === undefined ? undefined : ledger.begin(scopeOf(ctx.caller, ctx.body, method, path), idempotencyKey, ctx.body, { seal: match.route.plainReplay !== true });
    if (ticket?.kind === 'replay') return { ...ticket.reply, headers: { 'Idempotent-Replayed': 'true' } };
    try {
      await slowDown(faults.slowMs, ctx.signal); // inside the in-flight window, so tests can provoke a 409
      return services.tx.run(() => {
        const reply = match.route.handler(ctx);
        if (reply instanceof Promise) throw new Error(`write handler ${method} ${match.route.pattern} must be synchronous`);
        ticket?.remember(reply);
        return reply;
      });
    } finally {
      ticket?.release();
    }
  }

  /** Keys belong to the acting agent (agent key, or admin + agent_id) or to the admin, per method and path. */
  function scopeOf(caller: Caller, body: unknown, method: string, path: string): string {
    let actor = 'admin';
    if (caller.kind === 'agent') actor = caller.agent.id;
    else {
      const ref = (body as { agent_id?: unknown } | undefined)?.agent_id;
      if (typeof ref === 'string' && ref !== '') actor = services.agents.byRef(ref)?.id ?? `unknown:${ref}`;
    }
    return `${actor} ${method} ${path}`;
  }

  /** Throws the refusal when `req` may not use the watch page this way (see watch/access.ts); else its session id, if any. */
  function checkWatch(req: IncomingMessage, kind: WatchRequestKind): string | undefined {
    const session = watchSession.sessionIn(header(req, 'cookie'), req.socket.localPort ?? 0);
    const refusal = watchRefusal(
      {
        kind,
        remoteAddress: req.socket.remoteAddress,
        host: header(req, 'host'),
        origin: header(req, 'origin'),
        hasSession: session !== undefined,
        hasPageHeader: header(req, 'x-warren-watch') === '1',
      },
      watchRules,
    );
    if (refusal) throw refusal;
    return session;
  }

  /** The page, its files and its event stream: not JSON, so served before the API pipeline. */
  function serveWatch(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const url = new URL(req.url ?? '/', 'http://local-hub');
    const asset = watchAsset(url.pathname);
    const probe = url.pathname === '/watch/session';
    if (!asset && !probe && url.pathname !== '/watch/events') return false;
    // The session probe is asked like the page: it tells the page whether to show itself or the sign-in form.
    const kind: WatchRequestKind = url.pathname === '/' || probe ? 'page' : asset ? 'asset' : 'read';
    const port = req.socket.localPort ?? 0;
    const refuse = (e: HttpError): true => {
      sendJson(res, e.status, { detail: e.message }, WATCH_SECURITY_HEADERS);
      return true;
    };
    let session: string | undefined;
    try {
      session = checkWatch(req, kind);
    } catch (err) {
      return refuse(err as HttpError);
    }
    if (probe) sendJson(res, 200, { signed_in: session !== undefined }, { ...WATCH_SECURITY_HEADERS, 'cache-control': 'no-store' });
    else if (kind === 'page' && url.searchParams.has('token')) {
      // The operator token becomes a session cookie, and the address bar (and history) lose the token.
      if (!watchSession.matches(url.searchParams.get('token'))) return refuse(new HttpError(401, 'that is not this hub\'s operator token'));
      res.writeHead(303, { ...WATCH_SECURITY_HEADERS, location: '/', 'set-cookie': watchSession.setCookie(port), 'content-length': 0 });
      res.end();
    } else if (asset) {
      // The page carries no data and gives no session: without one it asks for the token (app.ts in the browser).
      res.writeHead(200, { ...WATCH_SECURITY_HEADERS, 'content-type': asset.type, 'content-length': asset.body.length, 'cache-control': 'no-cache' });
      res.end(req.method === 'HEAD' ? undefined : asset.body);
    } else watchStream.serve(req, res, session!, WATCH_SECURITY_HEADERS);
    return true;
  }

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    if (!closing.signal.aborted && serveWatch(req, res)) return;
    const started = performance.now();
    const extra = (req.url ?? '').startsWith('/watch/') ? WATCH_SECURITY_HEADERS : {};
    // While closing, answers end their connection so the server can finish closing at once.
    const send = (status: number, body: unknown, headers: Record<string, string> = {}): void =>
      sendJson(res, status, body, closing.signal.aborted ? { ...extra, ...headers, Connection: 'close' } : { ...extra, ...headers });
    handle(req, res)
      .then((reply) => {
        send(reply.status, reply.body, reply.headers);
        logger?.debug({ method: req.method, url: req.url, status: reply.status, ms: Math.round(performance.now() - started) }, 'hub request');
      })
      .catch((err: unknown) => {
        if (err instanceof HttpError) {
          send(err.status, { detail: err.message }, err.headers);
          logger?.debug({ method: req.method, url: req.url, status: err.status, detail: err.message }, 'hub request refused');
          return;
        }
        if (closing.signal.aborted) return send(503, { detail: 'hub is shutting down' });
        logger?.error({ err, method: req.method, url: req.url }, 'hub request failed');
        send(500, { detail: 'internal error' });
      });
  };

  const drain = (): void => {
    closing.abort();
    watchStream.close();
    services.work.close();
  };
  return {
    adminKey,
    watchToken: watchSession.token,
    events,
    faults,
    services,
    listener,
    drain,
    close() {
      drain();
      if (db.isOpen) db.close();
    },
  };
}

async function slowDown(ms: number | undefined, signal: AbortSignal): Promise<void> {
  if (!ms || ms <= 0) return;
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new HttpError(503, 'request ended while delayed (test switch slowMs)');
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim();
}
