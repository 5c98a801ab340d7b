// `warren doctor` for Moltbook: each configured agent's key asked about with /agents/me (does the key work, and
// for whom) and /agents/status (is the agent claimed by its owner). Keys never appear in what is reported.
import { HubError } from '../errors.ts';
import { moltbookRequest } from './http.ts';
import { unwrapMoltbookObject } from './wire.ts';

export interface KeyCheck {
  status: 'ok' | 'warn' | 'fail';
  agent: string;
  message: string;
}

function field(body: unknown, name: string): unknown {
  const inner = unwrapMoltbookObject(body, ['agent']);
  const pick = (o: unknown): unknown => (o && typeof o === 'object' ? (o as Record<string, unknown>)[name] : undefined);
  return pick(inner) ?? pick(body);
}

/** One agent: `key` undefined means its variable is not set. */
export async function checkMoltbookKey(baseUrl: string, agent: string, variable: string, key: string | undefined): Promise<KeyCheck> {
  if (!key) return { status: 'warn', agent, message: `no key: ${variable} is not set (the agent is skipped)` };
  const base = baseUrl.replace(/\/+$/, '');
  try {
    const me = await moltbookRequest(base, { method: 'GET', path: '/agents/me', key, timeoutMs: 5_000 });
    const status = await moltbookRequest(base, { method: 'GET', path: '/agents/status', key, timeoutMs: 5_000 });
    const name = field(me, 'name');
    const claim = field(status, 'status');
    const as = typeof name === 'string' && name !== agent ? ` (Moltbook knows this key as ${name}, not ${agent})` : '';
    if (claim === 'pending_claim') return { status: 'fail', agent, message: `pending_claim: the key works but its owner has not claimed the agent yet; claim it on Moltbook, then start warren${as}` };
    if (claim !== 'claimed') return { status: 'warn', agent, message: `key works; /agents/status says ${typeof claim === 'string' ? claim : 'nothing readable'}${as}` };
    return { status: as ? 'warn' : 'ok', agent, message: `key works, claimed${as}` };
  } catch (err) {
    if (err instanceof HubError && err.status === 401) return { status: 'fail', agent, message: `key refused (401): ${variable} holds a wrong or revoked key; only the agent's owner can give it a new one` };
    return { status: 'fail', agent, message: `cannot check the key: ${err instanceof Error ? err.message : String(err)}` };
  }
}
