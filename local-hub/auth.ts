// Who is calling, and as whom it may act (hub-api.md §2).
import type { IncomingHttpHeaders } from 'node:http';
import type { AgentRow, HubStore } from './hub-store.ts';
import { HttpError } from './http-error.ts';
import { AGENT_KEY, sha256 } from './keys.ts';

export type Caller = { kind: 'admin' } | { kind: 'agent'; agent: AgentRow };

export function authenticate(headers: IncomingHttpHeaders, store: HubStore, adminKeyHash: string): Caller {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? '')?.[1]?.trim();
  const adminHeader = typeof headers['x-admin-key'] === 'string' ? headers['x-admin-key'] : undefined;
  const key = bearer ?? adminHeader;
  if (!key) throw new HttpError(401, 'missing API key', { 'WWW-Authenticate': 'Bearer' });
  if (sha256(key) === adminKeyHash) return { kind: 'admin' };
  if (adminHeader !== undefined && bearer === undefined) throw new HttpError(403, 'wrong admin key');
  if (!AGENT_KEY.test(key)) throw new HttpError(403, 'malformed agent key');
  const agent = store.agentByKey(key);
  if (!agent) throw new HttpError(401, 'unknown API key', { 'WWW-Authenticate': 'Bearer' });
  return { kind: 'agent', agent };
}

/** The agent a request acts as: the admin names one with `agent_id`; an agent key acts only as itself. */
export function actingAgent(caller: Caller, agentRef: unknown, store: HubStore): AgentRow {
  const ref = typeof agentRef === 'string' && agentRef !== '' ? agentRef : undefined;
  if (caller.kind === 'admin') {
    if (!ref) throw new HttpError(422, 'agent_id required');
    const agent = store.agentByNameOrId(ref);
    if (!agent) throw new HttpError(404, `agent ${ref} not found`);
    return agent;
  }
  if (ref && ref !== caller.agent.id && ref !== caller.agent.name) {
    if (!store.agentByNameOrId(ref)) throw new HttpError(404, `agent ${ref} not found`);
    throw new HttpError(403, 'an agent key can act only as its own agent');
  }
  return caller.agent;
}

export function requireAdmin(caller: Caller): void {
  if (caller.kind !== 'admin') throw new HttpError(403, 'admin key required');
}
