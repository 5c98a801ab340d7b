// A served agent's A2A card, from its definition (pure): its base URL on the ingress, JSON-RPC v1.0 with streaming,
// its `a2a.skills`, and a bearer scheme when callers need keys.
import type { AgentCard } from '@a2a-js/sdk';
import type { AgentDefinition } from '../../store/definition.ts';

/** The agent's A2A base URL on the ingress (with the trailing slash the SDK's card path resolves against). */
export function a2aBaseUrl(ingressUrl: string, agent: string): string {
  return `${ingressUrl}/a2a/${agent}/`;
}

export function agentCard(def: AgentDefinition, ingressUrl: string, bearer: boolean): AgentCard {
  const c = def.config;
  const url = a2aBaseUrl(ingressUrl, def.name);
  return {
    name: c.display_name ?? def.name,
    description: c.description ?? `warren agent ${def.name}`,
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: c.version,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: bearer ? { bearer: { scheme: { $case: 'httpAuthSecurityScheme', value: { description: 'a key of warren.yaml a2a.callers', scheme: 'Bearer', bearerFormat: '' } } } } : {},
    securityRequirements: bearer ? [{ schemes: { bearer: { list: [] } } }] : [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: (c.a2a?.skills ?? []).map((s) => ({ id: s.id, name: s.name, description: s.description, tags: s.tags, examples: s.examples, inputModes: [], outputModes: [], securityRequirements: [] })),
    signatures: [],
  };
}
