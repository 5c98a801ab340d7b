// Agents (docs/hub-api.md §5.1): register, profiles, the three list modes, key rotation, activated.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { actingAgent, requireAdmin } from '../auth.ts';
import { HttpError, notFound } from '../http-error.ts';
import { newAgentKey, sha256 } from '../keys.ts';
import { usageBuckets } from '../budget-rules.ts';
import { AGENT_NAME, AGENT_NAME_MAX, AGENT_NAME_MIN } from '../names.ts';
import { ok, type Router } from '../router.ts';
import type { HubServices } from '../services.ts';
import { boolParam, intParam, optionalParam, parseBody } from '../validation.ts';
import { agentView } from '../views.ts';

const AGENT_TYPES = ['native', 'claude-code', 'goose', 'aider', 'opencode', 'custom', 'human'] as const;
const futureIso = z.iso.datetime({ offset: true }).refine((v) => Date.parse(v) > Date.now(), 'must be in the future');

const RegisterBody = z.looseObject({
  name: z
    .string()
    .min(AGENT_NAME_MIN, `at least ${AGENT_NAME_MIN} characters`)
    .max(AGENT_NAME_MAX, `at most ${AGENT_NAME_MAX} characters`)
    .regex(AGENT_NAME, 'lowercase letters, digits and inner dashes'),
  display_name: z.string().max(200).nullish(),
  description: z.string().max(5000).nullish(),
  avatar_url: z.string().max(2000).nullish(),
  // warren's daemon says `llm` for its built-in executor; the hub calls that `native`.
  type: z
    .enum([...AGENT_TYPES, 'llm'])
    .default('native')
    .transform((t) => (t === 'llm' ? 'native' : t)),
  config_source: z.string().max(2000).nullish(),
  config_path: z.string().min(1).max(500).default('agents/%s'),
  config_branch: z.string().min(1).max(200).default('main'),
  api_key_expires_at: futureIso.nullish(),
});

const RotateBody = z.looseObject({
  grace_period_hours: z.number().min(0).max(168).default(24),
  new_expires_at: futureIso.nullish(),
});

const toIso = (v: string | null | undefined): string | null => (v ? new Date(v).toISOString() : null);

export function agentRoutes(r: Router, s: HubServices): void {
  r.post(
    '/api/v1/agents/register',
    (ctx) => {
      const b = parseBody(RegisterBody, ctx.body);
      if (s.agents.byName(b.name)) throw new HttpError(409, `agent "${b.name}" already exists`);
      const key = newAgentKey();
      const id = randomUUID();
      s.agents.insert({
        id,
        name: b.name,
        display_name: b.display_name ?? null,
        description: b.description ?? null,
        type: b.type,
        avatar_url: b.avatar_url ?? null,
        config_source: b.config_source ?? null,
        config_path: b.config_path.replaceAll('%s', b.name),
        config_branch: b.config_branch,
        key_hash: sha256(key),
        api_key_expires_at: toIso(b.api_key_expires_at),
        created_at: s.now().toISOString(),
      });
      const agent = agentView(s.agents.byId(id)!);
      s.tx.afterCommit(() => s.events.emit('agent', agent));
      return ok({ ...agent, api_key: key }, 201);
    },
    'admin',
  );

  r.get('/api/v1/agents/me', (ctx) => ok(agentView(actingAgent(ctx.caller, ctx.query.get('agent_id'), s.agents))));

  // Rotation needs the agent's own current key: a request made with a key that was already replaced is a
  // concurrent rotation (409), and the old key keeps working until old_key_expires_at.
  r.post('/api/v1/agents/me/regenerate-key', (ctx) => {
    const caller = ctx.caller;
    if (caller.kind !== 'agent') throw new HttpError(403, "rotating a key needs the agent's own key");
    const b = parseBody(RotateBody, ctx.body);
    const now = s.now();
    const key = newAgentKey();
    const expires = toIso(b.new_expires_at);
    const oldExpires = new Date(now.getTime() + b.grace_period_hours * 3600_000).toISOString();
    const rotated = s.agents.rotateKey({ id: caller.agent.id, currentHash: caller.keyDigest, newHash: sha256(key), expires, oldExpires, now: now.toISOString() });
    if (!rotated) throw new HttpError(409, 'this key was already rotated; use the current key');
    return ok({
      api_key: key,
      api_key_expires_at: expires,
      old_key_expires_at: oldExpires,
      message: b.grace_period_hours > 0 ? `the old key stays valid until ${oldExpires}` : 'the old key is no longer valid',
    });
  });

  // (local hub) A new key for a human user, issued by the admin: the old one stops working at once. This is how
  // `warren hub user <name>` gives a person a key again; an agent's key is rotated only with its own key.
  r.post(
    '/api/v1/agents/:ref/key',
    (ctx) => {
      const agent = s.agents.byRef(ctx.params.ref!);
      if (!agent) throw notFound(`agent ${ctx.params.ref}`);
      if (agent.type !== 'human') throw new HttpError(409, `"${agent.name}" is an agent, not a human user: its key is rotated with its own key (POST /agents/me/regenerate-key)`);
      const key = newAgentKey();
      const now = s.now().toISOString();
      if (!s.agents.rotateKey({ id: agent.id, currentHash: agent.key_hash, newHash: sha256(key), expires: null, oldExpires: now, now })) throw new HttpError(409, 'the key changed meanwhile; try again');
      return ok({ ...agentView(s.agents.byId(agent.id)!), api_key: key });
    },
    'admin',
  );

  r.get('/api/v1/agents', (ctx) => {
    const q = ctx.query;
    if (boolParam(q, 'has_notifications')) {
      requireAdmin(ctx.caller);
      return ok({ agents: s.agents.withWork(intParam(q, 'limit', 1000, 1, 1000)) });
    }
    if (boolParam(q, 'stale')) {
      requireAdmin(ctx.caller);
      const minStaleness = intParam(q, 'min_staleness', 900, 0, 10 * 365 * 86_400);
      const cutoff = new Date(s.now().getTime() - minStaleness * 1000).toISOString();
      return ok({ agents: s.agents.stale(cutoff, intParam(q, 'limit', 100, 1, 1000)) });
    }
    const offset = intParam(q, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(q, 'limit', 100, 1, 1000);
    const { rows, total } = s.agents.list(offset, limit, optionalParam(q, 'config_source') ?? null);
    return ok({ agents: rows.map(agentView), total, offset, limit });
  });

  r.get('/api/v1/agents/:ref', (ctx) => {
    const agent = s.agents.byRef(ctx.params.ref!);
    if (!agent) throw notFound(`agent ${ctx.params.ref}`);
    return ok(agentView(agent));
  });

  // No body. The hub never bumps last_activated_at by itself (docs/hub-api.md §8).
  r.post('/api/v1/agents/:ref/activated', (ctx) => {
    const agent = s.agents.byRef(ctx.params.ref!);
    if (!agent) throw notFound(`agent ${ctx.params.ref}`);
    if (ctx.caller.kind === 'agent' && ctx.caller.agent.id !== agent.id) throw new HttpError(403, 'an agent key can mark only its own agent activated');
    const now = s.now();
    const at = now.toISOString();
    s.agents.markActivated(agent.id, at);
    s.activations.record(agent.id, usageBuckets(now).day, at);
    s.tx.afterCommit(() => s.events.emit('activated', { agent: { id: agent.id, name: agent.name }, at }));
    return ok({ success: true });
  }, 'any', { plainReplay: true });
}
