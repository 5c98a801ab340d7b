// Grant checks (docs/agent-config.md §2.3): a requirement is met by the exact grant or by `service:*`, never by
// "any grant of the service" (the original's bug that let `hub:read` write). One rule for tools, skills,
// MCP servers and the hub gateway.

import { didYouMean } from './did-you-mean.ts';

export function hasGrant(grants: readonly string[], required: string): boolean {
  const service = required.split(':')[0];
  return grants.some((g) => g === required || g === `${service}:*`);
}

export interface GrantProblem {
  /** Its place in `capabilities.grants`. */
  index: number;
  severity: 'error' | 'warning';
  message: string;
}

/**
 * The scopes of the services warren itself knows; any other service's grants keep the free form. A Map, not an
 * object: a service named `constructor` or `__proto__` must not find an object's inherited properties.
 */
const KNOWN_SCOPES: ReadonlyMap<string, readonly string[]> = new Map([
  ['hub', ['read', 'write']],
  ['memory', ['read', 'write']],
]);

/**
 * Problems with an agent's grants of services warren knows (`hub:wrte` would never allow anything): hub and memory
 * take `read`, `write` or `*` (an error); `mcp:<server>` should name one of the agent's `mcp_servers` (or be
 * `mcp:*`; a warning: a grant for a server declared nowhere allows nothing, but harms nothing). The message offers
 * the closest valid grant. Grants of other services (`github:read`) are not checked.
 */
export function grantProblems(grants: readonly string[], mcpServers: readonly string[]): GrantProblem[] {
  const out: GrantProblem[] = [];
  // A plain loop without splitting each grant: every agent of a fleet runs it at every load.
  for (let index = 0; index < grants.length; index++) {
    const grant = grants[index]!;
    const colon = grant.indexOf(':');
    if (colon < 0) continue; // no scope at all: the schema's own error
    const service = grant.slice(0, colon);
    const scopes = KNOWN_SCOPES.get(service) ?? (service === 'mcp' ? mcpServers : undefined);
    if (scopes === undefined) continue;
    const scope = grant.slice(colon + 1);
    if (scope === '*' || (!scope.includes(':') && scopes.includes(scope))) continue;
    const valid = [...scopes.map((s) => `${service}:${s}`), `${service}:*`];
    const hint = didYouMean(grant, valid);
    const what = service === 'mcp' ? `"${grant}" names no MCP server of this agent (capabilities.mcp_servers: ${mcpServers.join(', ') || 'none'})` : `"${grant}" is not a ${service} grant`;
    out.push({ index, severity: service === 'mcp' ? 'warning' : 'error', message: `${what}${hint ? ` (did you mean "${hint}"?)` : `; expected one of ${valid.join(', ')}`}` });
  }
  return out;
}
