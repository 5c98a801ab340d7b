// Server-Sent Events for the watch page: every hub event after its commit, to every open page.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HubEventMap, HubEvents } from '../events.ts';

const FORWARDED = ['post', 'comment', 'agent', 'activated', 'consumption', 'notification'] as const satisfies ReadonlyArray<keyof HubEventMap>;
const HEARTBEAT_MS = 15_000;

/**
 * Unsent bytes the hub keeps for one stream (plus the event that crossed the line). A page that reads keeps this near zero; past it the client is too
 * slow (or stopped reading on purpose) and is dropped: its browser reconnects and reloads the feed.
 */
export const MAX_STREAM_BUFFER_BYTES = 1024 * 1024;
/** Open streams at once; one more is answered 503. Far more than the pages a person keeps open. */
export const MAX_STREAM_CLIENTS = 64;
/**
 * Open streams of one session (one browser's login, session.ts); one more is answered 429. Enough for the tabs a
 * person keeps open, and far below the cap above, so one session cannot lock the others out.
 */
export const MAX_STREAMS_PER_SESSION = 8;

export class WatchEventStream {
  readonly #clients = new Set<ServerResponse>();
  /** Open streams per session id. */
  readonly #perSession = new Map<string, number>();
  readonly #unsubscribe: Array<() => void> = [];
  readonly #heartbeat: NodeJS.Timeout;

  constructor(events: HubEvents) {
    for (const name of FORWARDED) {
      const listener = (payload: unknown): void => this.#broadcast(name, payload);
      events.on(name, listener);
      this.#unsubscribe.push(() => events.off(name, listener));
    }
    // A comment line keeps proxies and the browser from timing the stream out.
    this.#heartbeat = setInterval(() => this.#write(': keep-alive\n\n'), HEARTBEAT_MS).unref();
  }

  get clients(): number {
    return this.#clients.size;
  }

  /** Open streams of `session`. */
  clientsOf(session: string): number {
    return this.#perSession.get(session) ?? 0;
  }

  /** `session`: the caller's session id (app.ts admits only callers with one); `headers`: what every watch answer carries (security headers). */
  serve(req: IncomingMessage, res: ServerResponse, session: string, headers: Record<string, string> = {}): void {
    const refuse = (status: number, detail: string): void => {
      res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'retry-after': '5', connection: 'close' });
      res.end(JSON.stringify({ detail }));
    };
    if (this.clientsOf(session) >= MAX_STREAMS_PER_SESSION) return refuse(429, `too many open event streams for this session (at most ${MAX_STREAMS_PER_SESSION}): close other watch tabs`);
    if (this.#clients.size >= MAX_STREAM_CLIENTS) return refuse(503, `too many open event streams (at most ${MAX_STREAM_CLIENTS})`);
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // `retry` tells the browser how soon to reconnect after the hub restarts.
    res.write('retry: 1000\n: connected\n\n');
    this.#clients.add(res);
    this.#perSession.set(session, this.clientsOf(session) + 1);
    let counted = true;
    const release = (): void => {
      if (!counted) return;
      counted = false;
      this.#clients.delete(res);
      const left = this.clientsOf(session) - 1;
      if (left > 0) this.#perSession.set(session, left);
      else this.#perSession.delete(session);
    };
    req.once('close', release);
    res.once('close', release);
  }

  /** Ends every open stream (the hub is closing). */
  close(): void {
    clearInterval(this.#heartbeat);
    for (const off of this.#unsubscribe) off();
    for (const res of this.#clients) res.end();
    this.#clients.clear();
    this.#perSession.clear();
  }

  #broadcast(event: string, payload: unknown): void {
    this.#write(`event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  #write(chunk: string): void {
    for (const res of this.#clients) {
      if (res.destroyed) continue;
      // writableLength counts what the response and its socket still hold (the kernel's buffers filled first).
      // Checked before writing, so one large event still reaches a client that keeps up: at most cap + one event.
      if (res.writableLength > MAX_STREAM_BUFFER_BYTES) this.#drop(res);
      else res.write(chunk);
    }
  }

  #drop(res: ServerResponse): void {
    this.#clients.delete(res);
    res.destroy(); // its 'close' releases the session's count
  }
}
