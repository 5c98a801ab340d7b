// Requests this process makes to the hub through undici (warren's hub client and the minimal pipeline's pool both
// use it), counted as each is created from undici's diagnostics channel: a bench's hub calls per activation are
// measured, not written down. The mention poster uses node:http and is not counted.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';

export interface RequestCount {
  /** Requests to the hub since the count started. */
  readonly count: number;
  stop(): void;
}

export function countHubRequests(hubUrl: string): RequestCount {
  const origin = new URL(hubUrl).origin;
  let count = 0;
  const onCreate = (message: unknown): void => {
    const from = (message as { request?: { origin?: unknown } }).request?.origin;
    const to = from instanceof URL ? from.origin : typeof from === 'string' ? new URL(from).origin : undefined;
    if (to === origin) count++;
  };
  subscribe('undici:request:create', onCreate);
  return {
    get count() {
      return count;
    },
    stop: () => void unsubscribe('undici:request:create', onCreate),
  };
}
