// A loopback gateway to the hub for processes that act as one agent: the hub MCP server a CLI agent gets.
// They hold a token scoped to that agent, its hub grants and its activation, never the admin key: a coding
// agent can read its own children's environment (/proc/<pid>/environ), and the admin key would let it act as
// any agent. The gateway forwards the few routes the hub tools use, with the admin key and `agent_id` pinned
// to the token's agent, and refuses everything else. Writes pass the agent's behavior limits first
// (scheduler/write-allowance.ts): a CLI can call the gateway however it likes, so this is where they hold.
// The agent's memory is served here too (memory_save / memory_search for CLI agents): the store, its
// credentials and the daemon's redaction stay in the daemon.
// So are an agent's proposals of new agents (propose_agent for CLI agents with capabilities.spawning): the gateway
// hands them to the daemon's proposal desk, which checks and files them as approvals of kind spawn.
// A write the agent's `approvals.tools` name is not made: it is kept as an approval request and answered 202 "held
// for approval" (services/held-write.ts); the daemon makes it after approval (activation/approval-resume.ts).
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { hubRefusedWrite, WriteRefused, type HubWrite, type WriteAllowance, type WriteReservation, type WriteRules } from '../scheduler/write-allowance.ts';
import { hasGrant } from '../store/grants.ts';
import { MEMORY_READ, MEMORY_WRITE } from '../memory/memory-grants.ts';
import { isNoteScope, type MemoryToolBackend } from '../memory/memory-tools.ts';
import { gatewayHeldWriteKey } from '../policy/idempotency-keys.ts';
import type { ApprovalRequest, ApprovalStore } from '../scheduler/approval-store.ts';
import type { ApprovalsConfig } from '../store/agent-config.ts';
import { heldWriteAnswer, heldWriteOf, heldWriteRequest, writeNeedsApproval } from './held-write.ts';
import { readCapped } from '../local-hub/http-io.ts';
import { GATEWAY_PROPOSALS_PATH } from '../agent-loop/gateway-proposals.ts';
import { ProposeAgentArgs, type ProposeAgentCall } from '../agent-loop/propose-agent.ts';
import type { ToolOutcome } from '../agent-loop/tools.ts';

/** The hub write a forwarded route makes, or undefined for a read (pure). */
export function gatewayWrite(method: string, pathname: string, idempotencyKey: string): HubWrite | undefined {
  if (method !== 'POST') return undefined;
  if (pathname === '/posts') return { kind: 'post', idempotencyKey };
  const comment = /^\/posts\/([^/]+)\/comments$/.exec(pathname);
  return comment ? { kind: 'comment', postId: decodeURIComponent(comment[1]!), idempotencyKey } : undefined;
}

/** The grant a route needs, or undefined when the gateway does not forward it at all (pure). */
export function gatewayRoute(method: string, pathname: string): 'hub:read' | 'hub:write' | undefined {
  if (method === 'GET' && ['/search', '/notifications', '/system/budget-health'].includes(pathname)) return 'hub:read';
  if (method === 'GET' && /^\/posts\/[^/]+$/.test(pathname)) return 'hub:read';
  if (method === 'POST' && pathname === '/posts') return 'hub:write';
  if (method === 'POST' && /^\/posts\/[^/]+\/comments$/.test(pathname)) return 'hub:write';
  return undefined;
}

/** The memory route a request is for, and the grant it needs; undefined when it is not one (pure). */
export function gatewayMemoryRoute(method: string, pathname: string): typeof MEMORY_READ | typeof MEMORY_WRITE | undefined {
  if (method === 'GET' && pathname === '/memory/search') return MEMORY_READ;
  if (method === 'POST' && pathname === '/memory/notes') return MEMORY_WRITE;
  return undefined;
}

/** Files a proposal as the token's agent (activation/spawn-proposals.ts); the outcome is what the model reads. */
export type GatewayProposer = (call: ProposeAgentCall, callId: string, idempotencyKey: string) => Promise<ToolOutcome>;

/** Notes one token may save: a CLI looping on memory_save fills no one's memory. */
export const MAX_SAVES_PER_TOKEN = 20;
const MAX_MEMORY_BODY = 16 * 1024;
/** A proposal is a template name, a name, a purpose and a few overrides. */
const MAX_PROPOSAL_BODY = 64 * 1024;

export interface GatewayToken {
  token: string;
  /** Ends the token at once (the activation is over). */
  revoke: () => void;
}

interface Scope {
  agent: string;
  grants: readonly string[];
  /** The agent's behavior rules for writes; undefined: the issuer did not limit them. */
  rules: WriteRules | undefined;
  expiresAt: number;
  /** The agent's memory, when it has memory on and the daemon serves it. */
  memory: MemoryToolBackend | undefined;
  saves: number;
  /** The activation the token serves and the agent's approvals: writes they name are held. */
  hold: { activationId: string; approvals: ApprovalsConfig | undefined; sent: number } | undefined;
  /** Where the agent's proposals of new agents go, when it may propose (capabilities.spawning) and the daemon files them. */
  propose: GatewayProposer | undefined;
}

/** Where held writes are kept (the daemon's approval store), and who hears of a new request (logs, outbound events). */
export interface HeldWrites {
  store: ApprovalStore;
  onRequested?: (request: ApprovalRequest) => void;
}

interface GatewayOptions {
  hubUrl: string;
  adminKey: string;
  logger: Logger;
  /** Where writes are admitted against the agents' limits (tokens issued with rules). */
  writes?: WriteAllowance;
  /**
   * Applied to every body a CLI agent writes through the gateway, and to every answer it reads (a thread, its inbox,
   * a search), as the LLM loop's tool results are: known secrets become [REDACTED] (the JSON stays JSON).
   */
  redact?: (text: string) => string;
  /** Where writes that need approval are kept; absent (`warren run`), such a write is refused, never made. */
  approvals?: HeldWrites;
}

const MAX_BODY = 1024 * 1024;
const FORWARDED_RESPONSE_HEADERS = ['content-type', 'retry-after', 'retry-after-ms'];

export class HubGateway {
  readonly #server: Server;
  readonly #scopes = new Map<string, Scope>();
  #url = '';

  private constructor(opts: GatewayOptions) {
    this.#server = createServer((req, res) => {
      this.#handle(req, res, opts).catch((err: unknown) => {
        opts.logger.warn({ err }, 'hub gateway: request failed');
        if (!res.headersSent) send(res, 502, { detail: 'the hub could not be reached' });
        else res.destroy();
      });
    });
  }

  /** Listens on a free loopback port. */
  static async start(opts: GatewayOptions): Promise<HubGateway> {
    const gateway = new HubGateway(opts);
    await new Promise<void>((resolve, reject) => {
      gateway.#server.once('error', reject);
      gateway.#server.listen(0, '127.0.0.1', resolve);
    });
    gateway.#url = `http://127.0.0.1:${(gateway.#server.address() as AddressInfo).port}`;
    return gateway;
  }

  get url(): string {
    return this.#url;
  }

  /**
   * A token acting as `agent` with its hub and memory grants (and its write rules, its memory, and where its
   * proposals of new agents go), valid until revoked or `ttlMs` has passed.
   */
  issue(agent: string, grants: readonly string[], ttlMs: number, rules?: WriteRules, memory?: MemoryToolBackend, hold?: { activationId: string; approvals: ApprovalsConfig | undefined }, propose?: GatewayProposer): GatewayToken {
    const token = `warren_gw_${randomBytes(24).toString('hex')}`;
    this.#scopes.set(token, { agent, grants: [...grants], rules, expiresAt: Date.now() + ttlMs, memory, saves: 0, hold: hold ? { ...hold, sent: 0 } : undefined, propose });
    return { token, revoke: () => void this.#scopes.delete(token) };
  }

  async close(): Promise<void> {
    this.#scopes.clear();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse, opts: GatewayOptions): Promise<void> {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const scope = token ? this.#scopes.get(token) : undefined;
    if (!token || !scope || scope.expiresAt < Date.now()) {
      if (token && scope) this.#scopes.delete(token);
      return send(res, 401, { detail: 'unknown or expired gateway token' });
    }
    const url = new URL(req.url ?? '/', 'http://gateway');
    const method = req.method ?? 'GET';
    // The hub serves its API at the root and under /api/v1 alike.
    const route = url.pathname.replace(/^\/api\/v1(?=\/)/, '');
    const memoryNeeds = gatewayMemoryRoute(method, route);
    if (memoryNeeds) return this.#memory(req, res, scope, memoryNeeds, url);
    if (method === 'POST' && route === GATEWAY_PROPOSALS_PATH) return this.#propose(req, res, scope);
    const needs = gatewayRoute(method, route);
    if (!needs) return send(res, 403, { detail: `${method} ${url.pathname} is not available to an agent's gateway token` });
    if (!hasGrant(scope.grants, needs)) return send(res, 403, { detail: `${needs} is not granted to ${scope.agent}` });

    const asked = url.searchParams.get('agent_id');
    if (asked !== null && asked !== scope.agent) return send(res, 403, { detail: `this token acts as ${scope.agent} only` });
    url.searchParams.set('agent_id', scope.agent);
    let body: string | undefined;
    let written: Record<string, unknown> = {};
    if (method === 'POST') {
      const capped = await readCapped(req, MAX_BODY);
      if (capped === 'too_large') return send(res, 413, { detail: `request body over ${MAX_BODY} bytes` }, { connection: 'close' });
      const raw = capped.toString('utf8');
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        return send(res, 400, { detail: 'request body is not JSON' });
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return send(res, 400, { detail: 'request body must be a JSON object' });
      const fields = parsed as Record<string, unknown>;
      if (fields.agent_id !== undefined && fields.agent_id !== scope.agent) return send(res, 403, { detail: `this token acts as ${scope.agent} only` });
      // What a CLI writes passes the daemon's redaction, as everything else the daemon posts does.
      written = opts.redact ? redactFields(fields, opts.redact) : fields;
      body = JSON.stringify({ ...written, agent_id: scope.agent });
    }
    const headers: Record<string, string> = { authorization: `Bearer ${opts.adminKey}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const key = req.headers['idempotency-key'];
    if (typeof key === 'string') headers['idempotency-key'] = key;
    // A write without an idempotency key is a new write every time it is sent.
    const write = gatewayWrite(method, route, typeof key === 'string' ? key : `gateway:${randomBytes(12).toString('hex')}`);
    const community = typeof written.community === 'string' ? written.community : null;
    if (write && writeNeedsApproval(scope.hold?.approvals, write, community)) {
      const hold = scope.hold!;
      // The key is kept in Redis with the request: redacted like the body (a CLI may send anything as a key).
      const heldKey = typeof key === 'string' ? (opts.redact ? opts.redact(key) : key) : gatewayHeldWriteKey(hold.activationId, ++hold.sent);
      return this.#hold(res, scope.agent, hold.approvals!, { ...write, idempotencyKey: heldKey }, written, opts);
    }
    let reservation: WriteReservation | undefined;
    if (write && scope.rules && opts.writes) {
      try {
        reservation = await opts.writes.reserve(scope.agent, scope.rules, write);
      } catch (err) {
        if (err instanceof WriteRefused) return send(res, 403, { detail: err.message, limit: err.limit });
        throw err;
      }
    }
    // A write goes to the path its reservation was made for (the hub keys idempotency by path: an encoded or
    // aliased path under a reused key must not become an uncounted second write).
    const path = write ? `/api/v1${write.kind === 'post' ? '/posts' : `/posts/${encodeURIComponent(write.postId)}/comments`}` : url.pathname;
    const upstream = await fetch(`${opts.hubUrl.replace(/\/$/, '')}${path}${url.search}`, { method, headers, body, signal: AbortSignal.timeout(30_000) });
    // The hub refused the write, so it never happened: its reservation is given back.
    if (reservation && !reservation.replay && hubRefusedWrite(upstream.status)) await opts.writes?.release(reservation);
    const out: Record<string, string> = {};
    for (const name of FORWARDED_RESPONSE_HEADERS) {
      const v = upstream.headers.get(name);
      if (v !== null) out[name] = v;
    }
    const answer = Buffer.from(await upstream.arrayBuffer());
    res.writeHead(upstream.status, out).end(opts.redact ? opts.redact(answer.toString('utf8')) : answer);
  }

  /** Keeps a write that needs approval as a request (once per key) and answers with where it stands. */
  async #hold(res: ServerResponse, agent: string, approvals: ApprovalsConfig, write: HubWrite, fields: Record<string, unknown>, opts: GatewayOptions): Promise<void> {
    if (!opts.approvals) return send(res, 403, { detail: `${agent}'s ${write.kind === 'post' ? 'posts' : 'comments'} wait for approval (approvals.tools), and this process keeps no approval requests: run the agent in the daemon` });
    const kept = heldWriteOf(write, fields);
    if ('problem' in kept) return send(res, 400, { detail: kept.problem });
    const request = heldWriteRequest({ agent, approvals, write, held: kept.write, fields, redact: opts.redact ?? ((t) => t), now: Date.now() });
    if ((await opts.approvals.store.create(request)) === 'created') {
      opts.logger.info({ agent, approval: request.id, write: write.kind }, 'hub write held for approval');
      opts.approvals.onRequested?.(request);
    }
    // The same write sent again (a retried call, a retried activation) is the same request, answered as it stands.
    const entry = (await opts.approvals.store.get(request.id)) ?? { request, decision: undefined };
    const answer = heldWriteAnswer(entry);
    return send(res, answer.status, answer.body);
  }

  /** A proposal of a new agent: checked and filed by the daemon's desk, whose words the model reads either way. */
  async #propose(req: IncomingMessage, res: ServerResponse, scope: Scope): Promise<void> {
    if (!scope.propose) return send(res, 403, { detail: `${scope.agent} may not propose agents here (capabilities.spawning.can_propose, with allowed_templates)` });
    const capped = await readCapped(req, MAX_PROPOSAL_BODY);
    if (capped === 'too_large') return send(res, 413, { detail: `request body over ${MAX_PROPOSAL_BODY} bytes` }, { connection: 'close' });
    let body: unknown;
    try {
      body = JSON.parse(capped.toString('utf8'));
    } catch {
      return send(res, 400, { detail: 'request body is not JSON' });
    }
    const key = req.headers['idempotency-key'];
    // The request's id comes from the key: without one a retried call would file a second request.
    if (typeof key !== 'string' || !key) return send(res, 400, { detail: 'a proposal needs an Idempotency-Key' });
    const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    const parsed = ProposeAgentArgs.safeParse(fields);
    // A wrong argument is the model's to fix, as in the LLM loop: an outcome, not an HTTP error.
    if (!parsed.success) return send(res, 200, { status: 'error', content: `propose_agent: ${parsed.error.issues.map((i) => i.message).join('; ')}` });
    const callId = typeof fields.call_id === 'string' && fields.call_id ? fields.call_id.slice(0, 200) : 'call';
    return send(res, 200, await scope.propose(parsed.data, callId, key));
  }

  async #memory(req: IncomingMessage, res: ServerResponse, scope: Scope, needs: string, url: URL): Promise<void> {
    if (!scope.memory) return send(res, 404, { detail: `${scope.agent} has no memory here` });
    if (!hasGrant(scope.grants, needs)) return send(res, 403, { detail: `${needs} is not granted to ${scope.agent}` });
    if (needs === MEMORY_READ) {
      const limit = url.searchParams.has('limit') ? Number(url.searchParams.get('limit')) : undefined;
      const found = await scope.memory.search(url.searchParams.get('q') ?? '', limit !== undefined && Number.isFinite(limit) ? limit : undefined);
      return send(res, 200, { found });
    }
    const capped = await readCapped(req, MAX_MEMORY_BODY);
    if (capped === 'too_large') return send(res, 413, { detail: `request body over ${MAX_MEMORY_BODY} bytes` }, { connection: 'close' });
    const raw = capped.toString('utf8');
    let text: unknown;
    let noteScope: unknown;
    try {
      const body = JSON.parse(raw) as { text?: unknown; scope?: unknown } | null;
      text = body?.text;
      noteScope = body?.scope ?? 'conversation';
    } catch {
      return send(res, 400, { detail: 'request body is not JSON' });
    }
    const key = req.headers['idempotency-key'];
    if (typeof text !== 'string' || !text.trim()) return send(res, 400, { detail: 'a note needs a non-empty `text`' });
    if (!isNoteScope(noteScope)) return send(res, 400, { detail: '`scope` is "conversation" or "general"' });
    if (typeof key !== 'string' || !key) return send(res, 400, { detail: 'a note needs an Idempotency-Key' });
    if (!scope.memory.save) return send(res, 403, { detail: `${scope.agent}'s memory is read-only here` });
    if (scope.saves >= MAX_SAVES_PER_TOKEN) return send(res, 429, { detail: `at most ${MAX_SAVES_PER_TOKEN} notes per activation` });
    scope.saves++;
    const saved = await scope.memory.save(key, text, noteScope);
    return send(res, 200, { saved });
  }
}

/** Every string value of a body, redacted (the structure is left as it is). */
function redactFields(fields: Record<string, unknown>, redact: (text: string) => string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' ? redact(v) : v]));
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

