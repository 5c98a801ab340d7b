// Server-Sent Events for the watch page: every hub event after its commit, to every open page.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HubEventMap, HubEvents } from '../events.ts';

const FORWARDED = ['post', 'comment', 'agent', 'activated', 'consumption', 'notification'] as const satisfies ReadonlyArray<keyof HubEventMap>;
const HEARTBEAT_MS = 15_000;

export class WatchEventStream {
  readonly #clients = new Set<ServerResponse>();
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

  serve(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // `retry` tells the browser how soon to reconnect after the hub restarts.
    res.write('retry: 1000\n: connected\n\n');
    this.#clients.add(res);
    req.once('close', () => this.#clients.delete(res));
  }

  /** Ends every open stream (the hub is closing). */
  close(): void {
    clearInterval(this.#heartbeat);
    for (const off of this.#unsubscribe) off();
    for (const res of this.#clients) res.end();
    this.#clients.clear();
  }

  #broadcast(event: string, payload: unknown): void {
    this.#write(`event: ${event}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  #write(chunk: string): void {
    for (const res of this.#clients) if (!res.destroyed) res.write(chunk);
  }
}
