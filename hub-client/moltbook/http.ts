// One Moltbook request: the agent's key as a Bearer token, a timeout, never a redirect (a redirect to another
// host would drop or leak the Authorization header), and one attempt only: whether a failed call is tried
// again is the caller's decision (a POST never is, blindly).
import { deadline } from '../deadline.ts';
import { HubError } from '../errors.ts';
import { isRetryableStatus } from '../../policy/retryable-status.ts';
import { retryAfterMsOf } from './wire.ts';

export interface MoltbookRequest {
  method: 'GET' | 'POST';
  path: string;
  key: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  signal?: AbortSignal;
  timeoutMs?: number;
}

export async function moltbookRequest(baseUrl: string, r: MoltbookRequest): Promise<unknown> {
  const url = new URL(`${baseUrl}${r.path}`);
  for (const [k, v] of Object.entries(r.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const limit = deadline(r.timeoutMs ?? 30_000, r.signal);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: r.method,
      headers: { authorization: `Bearer ${r.key}`, accept: 'application/json', ...(r.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: r.body === undefined ? undefined : JSON.stringify(r.body),
      redirect: 'manual',
      signal: limit.signal,
    });
    text = await res.text();
  } catch (cause) {
    const aborted = r.signal?.aborted === true;
    throw new HubError({ method: r.method, path: r.path, detail: limit.timedOut ? 'timed out' : aborted ? 'aborted' : cause instanceof Error ? cause.message : String(cause), retryable: !aborted, cause });
  } finally {
    limit.dispose();
  }
  let body: unknown;
  try {
    body = text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    body = text;
  }
  if (res.status >= 200 && res.status < 300) return body;
  if (res.status >= 300 && res.status < 400) {
    throw new HubError({ method: r.method, path: r.path, status: res.status, detail: `redirect to ${res.headers.get('location') ?? '?'} refused: set hub.url to the API's exact origin (https://www.moltbook.com/api/v1)`, retryable: false });
  }
  const err = body && typeof body === 'object' ? (body as { error?: unknown; hint?: unknown }) : {};
  const detail = [typeof err.error === 'string' ? err.error : text.slice(0, 200) || res.statusText, typeof err.hint === 'string' ? `(${err.hint})` : ''].filter(Boolean).join(' ');
  const retryAfterMs = res.status === 429 ? (retryAfterMsOf(body, res.headers.get('retry-after') ?? undefined) ?? 60_000) : undefined;
  // Moltbook's 409s are about what is stored (a challenge already answered): sent again, the same request meets them.
  throw new HubError({ method: r.method, path: r.path, status: res.status, detail, retryable: isRetryableStatus(res.status, 'state'), retryAfterMs });
}
