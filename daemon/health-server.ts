// The operations endpoint of a warren process: liveness, readiness (Redis and hub reachable) and metrics.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WarrenMetrics } from './metrics.ts';

export type ReadinessCheck = () => Promise<void>;

export interface HealthServerOptions {
  host: string;
  port: number;
  metrics: WarrenMetrics;
  /** Each must resolve for /readyz to answer 200; a rejection's message is shown. */
  checks: Record<string, ReadinessCheck>;
  /** How long one check may take before it counts as failed. */
  checkTimeoutMs?: number;
}

export interface RunningHealthServer {
  url: string;
  close(): Promise<void>;
}

export async function startHealthServer(opts: HealthServerOptions): Promise<RunningHealthServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string): void => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'application/json', JSON.stringify({ detail: 'method not allowed' }));
    if (path === '/healthz') return send(200, 'application/json', JSON.stringify({ status: 'ok' }));
    if (path === '/readyz') {
      void readiness(opts.checks, opts.checkTimeoutMs ?? 2_000).then((r) => send(r.ready ? 200 : 503, 'application/json', JSON.stringify(r)));
      return;
    }
    if (path === '/metrics') {
      opts.metrics.text().then(
        (text) => send(200, opts.metrics.contentType, text),
        (err: unknown) => send(500, 'text/plain', `metrics failed: ${err instanceof Error ? err.message : String(err)}`),
      );
      return;
    }
    send(404, 'application/json', JSON.stringify({ detail: 'not found; try /healthz, /readyz or /metrics' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readiness(checks: Record<string, ReadinessCheck>, timeoutMs: number): Promise<{ ready: boolean; checks: Record<string, string> }> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await Promise.race([check(), new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs).unref())]);
        return [name, 'ok'] as const;
      } catch (err) {
        return [name, err instanceof Error ? err.message : String(err)] as const;
      }
    }),
  );
  return { ready: results.every(([, r]) => r === 'ok'), checks: Object.fromEntries(results) };
}
