// The A2A endpoint of every agent that serves it (`a2a.serve: true`), on the daemon's ingress under /a2a/<agent>/:
// the card at .well-known/agent-card.json and JSON-RPC v1.0 by POST (a2a-endpoint.ts, through the SDK). Callers are
// checked first (a2a-callers.ts). The endpoints, and the SDK's server with them, are loaded with the first request
// to a served agent: the route is mounted in every daemon, and most serve no agent over A2A.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentDefinition } from '../../store/definition.ts';
import { answer, type IngressRoute } from '../ingress/ingress-server.ts';
import { checkCaller } from './a2a-callers.ts';
import type * as EndpointModule from './a2a-endpoint.ts';
import type { A2AEndpoint, A2AEndpointDeps } from './a2a-endpoint.ts';

const CARD_PATH = '.well-known/agent-card.json';

export interface A2ARouteDeps extends A2AEndpointDeps {
  agents: { get(name: string): AgentDefinition | undefined };
}

/** Whether `def` is served over A2A. */
export function servesA2A(def: AgentDefinition): boolean {
  return def.config.a2a?.serve === true;
}

export class A2ARoute implements IngressRoute {
  readonly name = 'a2a';
  readonly prefix = '/a2a/';
  readonly #d: A2ARouteDeps;
  /** Per agent, its endpoint for its current definition (rebuilt when the definition or URL changes). */
  readonly #served = new Map<string, { key: string; endpoint: A2AEndpoint }>();
  #endpoints: Promise<typeof EndpointModule> | undefined;

  constructor(deps: A2ARouteDeps) {
    this.#d = deps;
  }

  wanted(definitions: readonly AgentDefinition[]): boolean {
    return definitions.some(servesA2A);
  }

  async handle(req: IncomingMessage, res: ServerResponse, rest: string, url: string): Promise<void> {
    const [agent = '', ...tail] = rest.split('/');
    const path = tail.join('/');
    const def = this.#d.agents.get(decodeURIComponent(agent));
    if (!def || !servesA2A(def)) return answer(res, 404, { error: 'not_found', detail: `no agent named ${agent.slice(0, 60)} is served over A2A here (a2a.serve: true in its config.yaml)` });
    const check = checkCaller(this.#d.callers, req.headers.authorization, req.socket.remoteAddress);
    if (!check.ok) return answer(res, 401, { error: 'unauthorized', detail: check.reason }, { 'www-authenticate': 'Bearer realm="warren a2a"' });
    const endpoint = await this.#endpointFor(def, url);
    if (path === CARD_PATH && req.method === 'GET') return answer(res, 200, endpoint.cardJson());
    if (path !== '' || req.method !== 'POST') return answer(res, 404, { error: 'not_found', detail: `POST JSON-RPC to /a2a/${def.name}/, GET the card at /a2a/${def.name}/${CARD_PATH}` });
    await endpoint.jsonRpc(req, res, check.caller);
  }

  async #endpointFor(def: AgentDefinition, url: string): Promise<A2AEndpoint> {
    const key = `${url}|${def.hash ?? JSON.stringify(def.config)}`;
    const had = this.#served.get(def.name);
    if (had?.key === key) return had.endpoint;
    const { A2AEndpoint } = await (this.#endpoints ??= import('./a2a-endpoint.ts'));
    // Another request may have built it while the module loaded: one endpoint per definition, as without the wait.
    const built = this.#served.get(def.name);
    if (built?.key === key) return built.endpoint;
    const endpoint = new A2AEndpoint(def, url, this.#d);
    this.#served.set(def.name, { key, endpoint });
    return endpoint;
  }
}
