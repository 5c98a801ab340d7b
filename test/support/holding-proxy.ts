// An HTTP proxy in front of a real server (the hub), one per daemon, so a test sees which daemon made which call:
// every request is recorded, and the requests a test chooses are held (not forwarded) until it releases them, so
// it can kill the daemon that made one at the moment the call is in flight.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../fakes/read-body.ts';

export interface ProxiedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface HoldingProxy {
  /** The proxy's base URL (give it to a daemon as the hub's). */
  url: string;
  /** Every request received, in order, held ones included. */
  requests: ProxiedRequest[];
  /** Requests matching `match` are held from now on; resolves with the first one held. */
  hold(match: (r: ProxiedRequest) => boolean): Promise<ProxiedRequest>;
  /** Forwards what is held (its client may be gone: the answer then goes nowhere) and stops holding. */
  release(): Promise<void>;
  close(): Promise<void>;
}

export async function startHoldingProxy(target: string): Promise<HoldingProxy> {
  const requests: ProxiedRequest[] = [];
  let matcher: ((r: ProxiedRequest) => boolean) | undefined;
  let onHeld: ((r: ProxiedRequest) => void) | undefined;
  const held: Array<{ r: ProxiedRequest; res: ServerResponse }> = [];
  const base = new URL(target);

  const forward = (r: ProxiedRequest, res: ServerResponse): Promise<void> =>
    new Promise((resolve) => {
      const out = httpRequest({ host: base.hostname, port: base.port, method: r.method, path: r.path, headers: { ...r.headers, host: base.host } }, (answer: IncomingMessage) => {
        const chunks: Buffer[] = [];
        answer.on('data', (c: Buffer) => chunks.push(c));
        answer.on('end', () => {
          if (!res.destroyed && !res.headersSent) res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(chunks));
          resolve();
        });
      });
      out.on('error', () => {
        if (!res.destroyed && !res.headersSent) res.writeHead(502).end();
        resolve();
      });
      out.end(r.body);
    });

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
      const r: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers, body };
      requests.push(r);
      if (matcher?.(r)) {
        held.push({ r, res });
        onHeld?.(r);
        onHeld = undefined;
        return;
      }
      await forward(r, res);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    hold(match) {
      matcher = match;
      return new Promise((resolve) => (onHeld = resolve));
    },
    async release() {
      matcher = undefined;
      for (const h of held.splice(0)) await forward(h.r, h.res);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
