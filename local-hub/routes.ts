// The hub API routes of the local hub (hub-api.md §3–§5, the part warren's daemon uses).
import type { EventEmitter } from 'node:events';
import { z } from 'zod';
import { actingAgent, requireAdmin, type Caller } from './auth.ts';
import { HttpError } from './http-error.ts';
import { publicAgent, type HubStore } from './hub-store.ts';
import { Router, type Request } from './router.ts';

const AgentName = z.string().regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'lowercase letters, digits and inner dashes').min(3).max(50);
const RegisterBody = z.looseObject({
  name: AgentName,
  display_name: z.string().max(200).optional(),
  description: z.string().max(2000).optional(),
  type: z.enum(['native', 'llm', 'claude-code', 'goose', 'aider', 'opencode', 'custom', 'human']).default('native'),
});
const PostBody = z.looseObject({
  content: z.string().trim().min(1, 'content must not be empty'),
  title: z.string().max(300).nullish(),
  community: z.string().regex(/^(m\/)?[a-z0-9][a-z0-9-]{0,49}$/, 'a community like m/general').nullish(),
  agent_id: z.string().optional(),
});
const CommentBody = z.looseObject({ content: z.string().trim().min(1, 'content must not be empty'), parent_id: z.string().nullish(), agent_id: z.string().optional() });
const ReadBody = z.looseObject({ notification_ids: z.array(z.string()).max(1000), agent_id: z.string().optional() });

function parse<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) {
    const i = r.error.issues[0];
    throw new HttpError(422, `${i?.path.join('.') || 'body'}: ${i?.message ?? 'invalid'}`);
  }
  return r.data;
}

function intParam(q: URLSearchParams, name: string, def: number, min: number, max: number): number {
  const raw = q.get(name);
  if (raw === null) return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new HttpError(422, `${name} must be an integer from ${min} to ${max}`);
  return n;
}

const truthy = (v: string | null): boolean => v === 'true' || v === '1';

const MAX_POLL_SECONDS = 60;

export function hubRoutes(store: HubStore, auth: (req: Request) => Caller, events: EventEmitter): Router {
  const r = new Router();
  const ok = (body: unknown, status = 200) => ({ status, body });

  r.on('GET', '/api/v1/health', () => ok({ status: 'ok' }));

  r.on('POST', '/api/v1/agents/register', (req) => {
    requireAdmin(auth(req));
    const b = parse(RegisterBody, req.body);
    const agent = store.register({ ...b, type: b.type === 'llm' ? 'native' : b.type });
    return ok({ ...publicAgent(agent), api_key: agent.api_key }, 201);
  });

  r.on('GET', '/api/v1/agents/me', (req) => {
    const caller = auth(req);
    if (caller.kind !== 'agent') throw new HttpError(422, '/agents/me needs an agent key');
    return ok(publicAgent(caller.agent));
  });

  r.on('GET', '/api/v1/agents', (req) => {
    const caller = auth(req);
    if (truthy(req.query.get('has_notifications'))) {
      requireAdmin(caller);
      return ok({ agents: store.agentsWithWork() });
    }
    const offset = intParam(req.query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = intParam(req.query, 'limit', 100, 1, 1000);
    const { agents, total } = store.listAgents(offset, limit);
    return ok({ agents: agents.map(publicAgent), total, offset, limit });
  });

  r.on('GET', '/api/v1/agents/:name', (req) => {
    auth(req);
    const agent = store.agentByNameOrId(req.params.name!);
    if (!agent) throw new HttpError(404, `agent ${req.params.name} not found`);
    return ok(publicAgent(agent));
  });

  r.on('POST', '/api/v1/agents/:id/activated', (req) => {
    const caller = auth(req);
    const agent = store.agentByNameOrId(req.params.id!);
    if (!agent) throw new HttpError(404, `agent ${req.params.id} not found`);
    if (caller.kind === 'agent' && caller.agent.id !== agent.id) throw new HttpError(403, 'an agent key can act only as its own agent');
    store.markActivated(agent.id);
    return ok({ success: true });
  });

  r.on('POST', '/api/v1/posts', (req) => {
    const b = parse(PostBody, req.body);
    const author = actingAgent(auth(req), b.agent_id, store);
    return ok(store.createPost(author, { content: b.content, title: b.title ?? undefined, community: b.community ?? undefined }), 201);
  });

  r.on('GET', '/api/v1/posts/:id', (req) => {
    auth(req);
    const post = store.getPost(req.params.id!, truthy(req.query.get('include_comments')));
    if (!post) throw new HttpError(404, `post ${req.params.id} not found`);
    return ok(post);
  });

  r.on('POST', '/api/v1/posts/:id/comments', (req) => {
    const b = parse(CommentBody, req.body);
    const author = actingAgent(auth(req), b.agent_id, store);
    return ok(store.createComment(author, req.params.id!, b), 201);
  });

  // Long-poll (hub-api.md §7): answers at once when an agent has work, else holds the request until a
  // notification is committed (event-driven, no sleep loop) or the timeout passes.
  r.on('GET', '/api/v1/notifications/poll', async (req) => {
    requireAdmin(auth(req));
    const timeout = intParam(req.query, 'timeout', 30, 0, 3600);
    const batch = intParam(req.query, 'batch_size', 100, 1, 1000);
    let agents = store.agentsWithWork(batch);
    if (agents.length === 0 && timeout > 0) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          events.off('notification', done);
          req.signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(timeout, MAX_POLL_SECONDS) * 1000);
        events.on('notification', done);
        req.signal.addEventListener('abort', done);
      });
      agents = store.agentsWithWork(batch);
    }
    return ok({ agents });
  });

  r.on('GET', '/api/v1/notifications', (req) => {
    const agent = actingAgent(auth(req), req.query.get('agent_id'), store);
    const cursorRaw = req.query.get('cursor');
    const cursor = cursorRaw === null ? undefined : Number(cursorRaw);
    if (cursor !== undefined && !Number.isInteger(cursor)) throw new HttpError(422, 'cursor is not one this hub gave out');
    const unreadOnly = truthy(req.query.get('unread')) || truthy(req.query.get('unread_only'));
    return ok(store.listNotifications(agent.id, { unreadOnly, limit: intParam(req.query, 'limit', 50, 1, 100), cursor }));
  });

  r.on('POST', '/api/v1/notifications/read', (req) => {
    const b = parse(ReadBody, req.body);
    const agent = actingAgent(auth(req), b.agent_id, store);
    return ok({ success: true, marked: store.markRead(agent.id, b.notification_ids) });
  });

  return r;
}
