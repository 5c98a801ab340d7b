// The memory tools' backend in `warren mcp hub` (a CLI agent's MCP server): the daemon's gateway, reached with
// the agent's gateway token, does the work (services/hub-gateway.ts). Nothing here touches a store.
import { z } from 'zod';
import type { MemoryToolBackend } from './memory-tools.ts';

export class GatewayMemoryError extends Error {
  override readonly name = 'GatewayMemoryError';
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}

const Saved = z.looseObject({ saved: z.boolean() });
const Found = z.looseObject({ found: z.string() });
const Refusal = z.looseObject({ detail: z.string() });
const TIMEOUT_MS = 30_000;

export function gatewayMemoryBackend(gatewayUrl: string, token: string): MemoryToolBackend {
  const base = gatewayUrl.replace(/\/+$/, '');
  const call = async <T>(path: string, schema: z.ZodType<T>, init: RequestInit, signal?: AbortSignal): Promise<T> => {
    const timeout = AbortSignal.timeout(TIMEOUT_MS);
    const res = await fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) }, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) throw new GatewayMemoryError(Refusal.safeParse(body).data?.detail ?? `the gateway answered HTTP ${res.status}`, res.status);
    const parsed = schema.safeParse(body);
    if (!parsed.success) throw new GatewayMemoryError('the gateway sent an answer of the wrong shape', res.status);
    return parsed.data;
  };
  return {
    async save(key, text, scope, signal) {
      return (await call('/memory/notes', Saved, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ text, scope }) }, signal)).saved;
    },
    async search(query, limit, signal) {
      const qs = new URLSearchParams({ q: query, ...(limit !== undefined ? { limit: String(limit) } : {}) });
      return (await call(`/memory/search?${qs}`, Found, { method: 'GET' }, signal)).found;
    },
  };
}
