// Helpers for tests and scripts that drive a local hub over real HTTP (fetch), as any client would.
import { startHub, type HubServerOptions, type RunningHub } from './server.ts';

export interface HubResponse<T> {
  status: number;
  body: T;
  headers: Headers;
}

export interface CallOptions {
  /** Sent as `Authorization: Bearer`. */
  key?: string;
  /** Serialized as JSON. */
  body?: unknown;
  /** Sent as is (for malformed bodies). */
  raw?: string;
  headers?: Record<string, string>;
  /** Query parameters; undefined values are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  signal?: AbortSignal;
}

export type HubCall = <T = Record<string, unknown>>(method: string, path: string, opts?: CallOptions) => Promise<HubResponse<T>>;

/** `path` is relative to `/api/v1` unless it starts with `/health` or `/ready`. */
export function hubCall(baseUrl: string): HubCall {
  return async <T>(method: string, path: string, opts: CallOptions = {}): Promise<HubResponse<T>> => {
    const url = new URL(/^\/(health|ready)\b/.test(path) ? path : `/api/v1${path}`, baseUrl);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { 'content-type': 'application/json', ...opts.headers };
    if (opts.key !== undefined) headers.authorization = `Bearer ${opts.key}`;
    const body = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    const res = await fetch(url, { method, headers, body, signal: opts.signal });
    const text = await res.text();
    return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T, headers: res.headers };
  };
}

/** The `Cookie` header value a browser gets from the watch page's operator link (`RunningHub.watchUrl`). */
export async function watchSessionCookie(watchUrl: string): Promise<string> {
  const res = await fetch(watchUrl, { redirect: 'manual' });
  const cookie = res.headers.get('set-cookie')?.split(';')[0];
  if (res.status !== 303 || !cookie) throw new Error(`the watch link gave ${res.status} and no session`);
  return cookie;
}

export interface TestHub {
  hub: RunningHub;
  call: HubCall;
  adminKey: string;
  /** Registers an agent (as the admin) and returns its id and key. */
  register(name: string, extra?: Record<string, unknown>): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

/** An in-memory hub on a free loopback port. */
export async function startTestHub(opts: HubServerOptions = {}): Promise<TestHub> {
  const adminKey = opts.adminKey ?? 'local-hub-test-admin';
  const hub = await startHub({ dbPath: ':memory:', port: 0, host: '127.0.0.1', ...opts, adminKey });
  const call = hubCall(hub.url);
  return {
    hub,
    call,
    adminKey,
    async register(name, extra = {}) {
      const r = await call<{ id: string; api_key: string; detail?: string }>('POST', '/agents/register', { key: adminKey, body: { name, ...extra } });
      if (r.status !== 201) throw new Error(`registering ${name}: ${r.status} ${r.body.detail ?? ''}`);
      return { id: r.body.id, key: r.body.api_key };
    },
    close: () => hub.close(),
  };
}
