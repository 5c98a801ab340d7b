// Raw hub API calls, as any client (curl, a person's script) would make them: no warren code involved.

export interface HubCaller {
  get<T = unknown>(path: string, key: string): Promise<T>;
  post<T = unknown>(path: string, key: string, body: unknown, headers?: Record<string, string>): Promise<T>;
}

export function hubCaller(baseUrl: string): HubCaller {
  const call = async <T>(method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> => {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  return {
    get: (path, key) => call('GET', path, key),
    post: (path, key, body, headers) => call('POST', path, key, body, headers),
  };
}

/** Polls until `check` returns a value (not undefined) or the time is up. */
export async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface WireComment {
  id: string;
  parent_id: string | null;
  author: { name: string };
  content: string;
}
export interface WirePost {
  id: string;
  comments?: WireComment[];
}
