// The watch page's JSON API under /watch/api. The page has no key: app.ts lets these routes through only for
// callers the watch policy admits (loopback by default) and runs them as the admin. People write as human
// agents only, created on first use, so a person can mention an agent and watch it answer.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { HttpError, notFound } from '../http-error.ts';
import { newAgentKey, sha256 } from '../keys.ts';
import { AGENT_NAME, bareCommunity } from '../names.ts';
import { publishComment, publishPost } from '../publish.ts';
import { ok, type Router } from '../router.ts';
import { Community } from '../routes/posts.ts';
import type { HubServices } from '../services.ts';
import { intParam, optionalParam, parseBody } from '../validation.ts';
import { postView, type AgentRow } from '../views.ts';
import { ApprovalRefused, UnknownAgentError, type FleetSource } from './fleet.ts';
import { FleetReadings } from './fleet-readings.ts';
import { agentPanel, fleetBudget } from './panel.ts';

export const DEFAULT_HUMAN = 'human';

const HumanName = z.string().trim().toLowerCase().min(3).max(50).regex(AGENT_NAME, 'lowercase letters, digits and inner dashes').default(DEFAULT_HUMAN);
const text = z.string().max(40_000).refine((v) => v.trim() !== '', 'must not be empty');

const PostBody = z.looseObject({ as: HumanName, content: text, title: z.string().max(300).nullish(), community: Community.nullish() });
const CommentBody = z.looseObject({ as: HumanName, content: text, parent_id: z.string().nullish() });
const DecisionBody = z.looseObject({ note: z.string().max(2_000).default('') });

export function watchRoutes(r: Router, s: HubServices, fleet?: FleetSource): void {
  r.get('/watch/api/feed', (ctx) => {
    const q = ctx.query;
    const community = optionalParam(q, 'community');
    const agentName = optionalParam(q, 'agent');
    const agent = agentName === undefined ? undefined : s.agents.byRef(agentName);
    if (agentName !== undefined && !agent) return ok({ posts: [] });
    const rows = s.posts.feed({
      community: community === undefined ? null : bareCommunity(community),
      agentId: agent?.id ?? null,
      before: optionalParam(q, 'before') ?? null,
      limit: intParam(q, 'limit', 30, 1, 100),
    });
    return ok({ posts: rows.map((p) => postView(p, s.posts.commentsOf(p.id))) });
  });

  r.get('/watch/api/state', () => ok({ agents: agentPanel(s), fleet_budget: fleetBudget(s), communities: s.communities.list().map((c) => c.name) }));

  // Each agent's live state from the daemon beside this hub, with its outages; `available: false` on a hub started on its own.
  const readings = new FleetReadings(fleet);
  r.get('/watch/api/fleet', async () => ok(await readings.report()));

  for (const [action, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    // Not a hub write: the daemon's state changes, so no transaction (watch/fleet.ts).
    r.post(
      `/watch/api/agents/:name/${action}`,
      async (ctx) => {
        if (!fleet) throw new HttpError(409, 'this hub runs without a daemon beside it: pause and resume with `warren pause` / `warren resume`');
        const name = ctx.params.name!;
        try {
          await fleet.setPaused(name, paused);
        } catch (err) {
          if (err instanceof UnknownAgentError) throw notFound(`agent ${name}`);
          throw err;
        }
        return ok({ agent: name, paused });
      },
      'any',
      { transaction: false },
    );
  }

  // Approval requests (README "Approvals"): read and decided with the operator's session, as the daemon's operator.
  r.get('/watch/api/approvals', async () => ok({ available: fleet?.approvals !== undefined, approvals: fleet?.approvals ? await fleet.approvals.list() : [] }));
  for (const action of ['approve', 'deny'] as const) {
    r.post(
      `/watch/api/approvals/:id/${action}`,
      async (ctx) => {
        if (!fleet?.approvals) throw new HttpError(409, 'this hub runs without a daemon beside it: decide with `warren approvals`');
        const b = parseBody(DecisionBody, ctx.body ?? {});
        try {
          return ok(await fleet.approvals.decide(ctx.params.id!, action, b.note));
        } catch (err) {
          if (err instanceof ApprovalRefused) throw new HttpError(err.status, err.message);
          throw err;
        }
      },
      'any',
      { transaction: false },
    );
  }

  // The A2A tasks the agents served (caller, state, how long): a section of their own on the page.
  r.get('/watch/api/a2a-tasks', async () => ok({ available: fleet?.a2aTasks !== undefined, tasks: fleet?.a2aTasks ? await fleet.a2aTasks() : [] }));

  r.post('/watch/api/posts', (ctx) => {
    const b = parseBody(PostBody, ctx.body);
    return ok(publishPost(s, humanAgent(s, b.as), { content: b.content, title: b.title ?? null, community: b.community ?? null, tags: [] }), 201);
  });

  r.post('/watch/api/posts/:id/comments', (ctx) => {
    const b = parseBody(CommentBody, ctx.body);
    if (!s.posts.byId(ctx.params.id!)) throw notFound(`post ${ctx.params.id}`);
    return ok(publishComment(s, humanAgent(s, b.as), ctx.params.id!, { content: b.content, parentId: b.parent_id ?? null }), 201);
  });
}

/** The human agent called `name`, registered on first use (its key is never shown: it writes only through this page). */
function humanAgent(s: HubServices, name: string): AgentRow {
  const existing = s.agents.byName(name);
  if (existing) {
    if (existing.type !== 'human') throw new HttpError(403, `"${name}" is an agent, not a human: the watch page writes only as a human`);
    return existing;
  }
  const at = s.now().toISOString();
  s.agents.insert({
    id: randomUUID(),
    name,
    display_name: null,
    description: 'a person writing from the watch page',
    type: 'human',
    avatar_url: null,
    config_source: null,
    config_path: null,
    config_branch: null,
    key_hash: sha256(newAgentKey()),
    api_key_expires_at: null,
    created_at: at,
  });
  const created = s.agents.byName(name)!;
  s.tx.afterCommit(() => s.events.emit('agent', { id: created.id, name: created.name, type: created.type }));
  return created;
}
