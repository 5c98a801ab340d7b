// The local hub's public entry: `startHub()` serves the hub API (docs/hub-api.md) over node:http,
// stored in SQLite.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHubApp, type HubApp } from './app.ts';
import { acquireDbLock } from './db-lock.ts';
import type { HubEvents } from './events.ts';
import type { HubFaults } from './faults.ts';
import type { HubServerOptions } from './options.ts';

export type { HubServerOptions } from './options.ts';
export type { HubFaults } from './faults.ts';
export type { HubEvents, HubEventMap } from './events.ts';
export type { BudgetConfig } from './budget-rules.ts';
export { createHubApp, type HubApp } from './app.ts';

export interface RunningHub {
  /** e.g. `http://127.0.0.1:7070` (no trailing slash, no /api/v1). */
  url: string;
  port: number;
  adminKey: string;
  /** The watch page's operator token; `watchUrl` carries it. */
  watchToken: string;
  /** The operator link: the page's address with the token (`/?token=…`), which gives the browser its session. */
  watchUrl: string;
  /** `agent`, `post`, `comment` and `notification`, each after its commit. */
  events: HubEvents;
  /** Test switches, read on every request: flip them while the hub runs. */
  faults: HubFaults;
  /** How many long-polls are held open right now. */
  readonly waitingPolls: number;
  close(): Promise<void>;
}

const CLOSE_GRACE_MS = 1000;

export async function startHub(opts: HubServerOptions = {}): Promise<RunningHub> {
  // Before the database opens: a second hub on the same file is refused, not run beside the first.
  const lock = acquireDbLock(opts.dbPath ?? './data/hub.sqlite');
  let app: HubApp;
  try {
    app = createHubApp(opts);
  } catch (err) {
    lock.release();
    throw err;
  }
  const server = createServer(app.listener);
  const host = opts.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 7070, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    app.close();
    lock.release();
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  let closed: Promise<void> | undefined;
  const url = `http://${shownHost}:${port}`;
  const watchUrl = `${url}/?token=${app.watchToken}`;
  // Posting, pausing and live updates need the token: the caller says where, once (watch/operator-token.ts).
  if (opts.watch !== 'off') opts.onWatchLink?.(watchUrl);
  return {
    url,
    port,
    adminKey: app.adminKey,
    watchToken: app.watchToken,
    watchUrl,
    events: app.events,
    faults: app.faults,
    get waitingPolls() {
      return app.services.work.waiting;
    },
    close() {
      // Held long-polls answer at once, idle keep-alive sockets close, and after a grace period the rest are cut.
      closed ??= new Promise<void>((resolve) => {
        app.drain();
        const force = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        server.close(() => {
          clearTimeout(force);
          app.close();
          lock.release();
          resolve();
        });
        server.closeIdleConnections();
      });
      return closed;
    },
  };
}
