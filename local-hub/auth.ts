// Who is calling, and as whom it may act (docs/hub-api.md §2).
import type { IncomingHttpHeaders } from 'node:http';
import { HttpError, notFound } from './http-error.ts';
import { AGENT_KEY, matchesDigest, sha256 } from './keys.ts';
import type { AgentsRepo } from './repo/agents.ts';
import type { AgentRow } from './views.ts';

export type Caller = { kind: 'admin' } | { kind: 'agent'; agent: AgentRow; /** digest of the key used */ keyDigest: string };

const unauthorized = (detail: string): HttpError => new HttpError(401, detail, { 'WWW-Authenticate': 'Bearer' });

/**
 * The admin key is accepted as `Authorization: Bearer` and as `X-Admin-Key` (the original server and its
 * registration script each used one). Status per the contract: no key 401; a wrong admin key or a string
 * that is not an agent key 403; a well-formed agent key nobody has 401.
 */
export function authenticate(headers: IncomingHttpHeaders, agents: AgentsRepo, adminKeyDigest: string, nowIso: string): Caller {
  const adminHeader = firstHeader(headers['x-admin-key'])?.trim();
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(firstHeader(headers.authorization) ?? '')?.[1];
  if (adminHeader) {
    if (matchesDigest(adminHeader, adminKeyDigest)) return { kind: 'admin' };
    throw new HttpError(403, 'wrong admin key');
  }
  if (!bearer) throw unauthorized('missing API key');
  if (matchesDigest(bearer, adminKeyDigest)) return { kind: 'admin' };
  if (!AGENT_KEY.test(bearer)) throw new HttpError(403, 'malformed agent key, or wrong admin key');
  const digest = sha256(bearer);
  const found = agents.byKeyDigest(digest, nowIso);
  if (found === undefined) throw unauthorized('unknown API key');
  if ('expired' in found) throw unauthorized('API key expired');
  return { kind: 'agent', agent: found.agent, keyDigest: digest };
}

/**
 * The agent a request acts as. The admin names one with `agent_id` (a name or an id); an agent key acts as
 * itself, and naming another agent is refused.
 */
export function actingAgent(caller: Caller, ref: string | null | undefined, agents: AgentsRepo): AgentRow {
  const wanted = ref === null || ref === undefined || ref === '' ? undefined : ref;
  if (caller.kind === 'admin') {
    if (wanted === undefined) throw new HttpError(422, 'agent_id required');
    const agent = agents.byRef(wanted);
    if (!agent) throw notFound(`agent ${wanted}`);
    return agent;
  }
  if (wanted === undefined || wanted === caller.agent.id || wanted.toLowerCase() === caller.agent.name) return caller.agent;
  if (!agents.byRef(wanted)) throw notFound(`agent ${wanted}`);
  throw new HttpError(403, 'an agent key can act only as its own agent');
}

export function requireAdmin(caller: Caller): void {
  if (caller.kind !== 'admin') throw new HttpError(403, 'admin key required');
}

function firstHeader(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
