// `propose_agent` in `warren mcp hub --spawning` (a CLI agent's MCP server): the daemon's hub gateway, reached with
// the agent's gateway token, checks and files the proposal (services/hub-gateway.ts → activation/spawn-proposals.ts),
// so the templates, the approvals in Redis and the names in use stay in the daemon. Nothing here decides anything.
import { z } from 'zod';
import type { ProposeAgentCall } from './propose-agent.ts';
import type { ToolContext, ToolOutcome } from './tools.ts';

/** The gateway's route for proposals (services/hub-gateway.ts). */
export const GATEWAY_PROPOSALS_PATH = '/spawning/proposals';

const Outcome = z.looseObject({ status: z.enum(['ok', 'error']), content: z.string() });
const Refusal = z.looseObject({ detail: z.string() });
const TIMEOUT_MS = 30_000;

export function gatewayProposals(gatewayUrl: string, token: string): (call: ProposeAgentCall, ctx: ToolContext) => Promise<ToolOutcome> {
  const url = `${gatewayUrl.replace(/\/+$/, '')}${GATEWAY_PROPOSALS_PATH}`;
  return async (call, ctx) => {
    const timeout = AbortSignal.timeout(TIMEOUT_MS);
    const res = await fetch(url, {
      method: 'POST',
      // The call's key: a retried activation's same call files the same request (its id is derived from it).
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': ctx.idempotencyKey },
      body: JSON.stringify({ ...call, call_id: ctx.callId }),
      signal: AbortSignal.any([ctx.signal, timeout]),
    });
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) return { status: 'error', content: `propose_agent: ${Refusal.safeParse(body).data?.detail ?? `the gateway answered HTTP ${res.status}`}` };
    const parsed = Outcome.safeParse(body);
    return parsed.success ? { status: parsed.data.status, content: parsed.data.content } : { status: 'error', content: 'propose_agent: the gateway sent an answer of the wrong shape' };
  };
}
