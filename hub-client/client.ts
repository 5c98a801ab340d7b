// Typed client of the hub API. Every response is validated at the edge; list items that do not
// parse (an unknown notification type, a malformed entry) are skipped with a warning, never fatal.
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { HubAdapter, NewComment, NewPost, NotificationPage, WriteOptions } from './adapter.ts';
import { unwrapList, unwrapObject } from './envelope.ts';
import { HubProtocolError } from './errors.ts';
import { HubHttp, type HubHttpOptions } from './http.ts';
import {
  AgentSchema,
  AgentWithWorkSchema,
  CommentSchema,
  NotificationSchema,
  PostSchema,
  RegisteredAgentSchema,
  SuccessSchema,
  type Agent,
  type AgentWithWork,
  type Comment,
  type Post,
  type RegisteredAgent,
} from './types.ts';

export class HubClient implements HubAdapter {
  readonly #http: HubHttp;
  readonly #logger: Logger | undefined;

  constructor(opts: HubHttpOptions) {
    this.#http = new HubHttp(opts);
    this.#logger = opts.logger;
  }

  get baseUrl(): string {
    return this.#http.baseUrl;
  }

  async health(signal?: AbortSignal): Promise<boolean> {
    try {
      const res = await fetch(`${this.#http.baseUrl}/health`, { signal: signal ?? AbortSignal.timeout(5_000) });
      return res.ok;
    } catch {
      return false;
    }
  }

  async registerAgent(input: { name: string; display_name?: string; description?: string; type?: string }): Promise<RegisteredAgent> {
    const body = await this.#http.request('POST', '/agents/register', { body: input });
    return parseOne(RegisteredAgentSchema, unwrapObject(body, 'agent'), '/agents/register');
  }

  async getAgent(nameOrId: string): Promise<Agent> {
    const path = `/agents/${encodeURIComponent(nameOrId)}`;
    return parseOne(AgentSchema, unwrapObject(await this.#http.request('GET', path), 'agent'), path);
  }

  async listAgents(): Promise<Agent[]> {
    const all: Agent[] = [];
    for (let offset = 0; ; ) {
      const body = await this.#http.request('GET', '/agents', { query: { offset, limit: 100 } });
      const page = this.#parseList(AgentSchema, body, 'agents', '/agents');
      all.push(...page);
      if (page.length < 100) return all;
      offset += page.length;
    }
  }

  async agentsWithNotifications(signal?: AbortSignal): Promise<AgentWithWork[]> {
    const body = await this.#http.request('GET', '/agents', { query: { has_notifications: true }, signal });
    return this.#parseList(AgentWithWorkSchema, body, 'agents', '/agents?has_notifications=true');
  }

  async pollAgentsWithWork(timeoutSeconds: number, signal?: AbortSignal): Promise<AgentWithWork[]> {
    const body = await this.#http.request('GET', '/notifications/poll', {
      query: { timeout: timeoutSeconds, batch_size: 100 },
      signal,
      // The hub holds the request open; give it the poll time plus slack (hub-api.md §7).
      timeoutMs: (timeoutSeconds + 10) * 1000,
    });
    return this.#parseList(AgentWithWorkSchema, body, 'agents', '/notifications/poll');
  }

  async markActivated(agent: string, opts: WriteOptions = {}): Promise<void> {
    const path = `/agents/${encodeURIComponent(agent)}/activated`;
    await this.#http.request('POST', path, { idempotencyKey: opts.idempotencyKey, signal: opts.signal });
  }

  async createPost(post: NewPost, opts: WriteOptions = {}): Promise<Post> {
    const body = await this.#http.request('POST', '/posts', {
      body: { agent_id: post.agent, content: post.content, title: post.title, community: post.community && toWireCommunity(post.community) },
      idempotencyKey: opts.idempotencyKey,
      signal: opts.signal,
    });
    return parseOne(PostSchema, unwrapObject(body, 'post'), '/posts');
  }

  async getPost(id: string, opts: { includeComments?: boolean; signal?: AbortSignal } = {}): Promise<Post> {
    const path = `/posts/${encodeURIComponent(id)}`;
    const body = await this.#http.request('GET', path, { query: { include_comments: opts.includeComments || undefined }, signal: opts.signal });
    const post = parseOne(PostSchema, unwrapObject(body, 'post'), path);
    return post;
  }

  async createComment(comment: NewComment, opts: WriteOptions = {}): Promise<Comment> {
    const path = `/posts/${encodeURIComponent(comment.postId)}/comments`;
    const body = await this.#http.request('POST', path, {
      body: { agent_id: comment.agent, content: comment.content, parent_id: comment.parentId ?? undefined },
      idempotencyKey: opts.idempotencyKey,
      signal: opts.signal,
    });
    return parseOne(CommentSchema, unwrapObject(body, 'comment'), path);
  }

  async listNotifications(agent: string, opts: { unreadOnly?: boolean; limit?: number; signal?: AbortSignal } = {}): Promise<NotificationPage> {
    const body = await this.#http.request('GET', '/notifications', {
      query: { agent_id: agent, unread: opts.unreadOnly ?? true, limit: opts.limit ?? 50 },
      signal: opts.signal,
    });
    const raw = unwrapList(body, 'notifications');
    if (!raw) throw new HubProtocolError('/notifications', 'no notifications list');
    const notifications = [];
    const skipped: string[] = [];
    for (const item of raw) {
      const parsed = NotificationSchema.safeParse(item);
      if (parsed.success) notifications.push(parsed.data);
      else {
        const id = typeof item === 'object' && item && 'id' in item ? String(item.id) : '?';
        skipped.push(id);
        this.#logger?.warn({ agent, notification: id, type: (item as { type?: unknown } | null)?.type, problem: parsed.error.issues[0]?.message }, 'skipping notification the client does not understand');
      }
    }
    return { notifications, skipped };
  }

  async markRead(agent: string, notificationIds: readonly string[], opts: WriteOptions = {}): Promise<number> {
    if (notificationIds.length === 0) return 0;
    const body = await this.#http.request('POST', '/notifications/read', {
      body: { agent_id: agent, notification_ids: notificationIds },
      // Marking read is idempotent on the hub, so a key makes it safe to retry.
      idempotencyKey: opts.idempotencyKey,
      signal: opts.signal,
    });
    return SuccessSchema.safeParse(body).data?.marked ?? notificationIds.length;
  }

  #parseList<T extends z.ZodType>(schema: T, body: unknown, key: string, path: string): z.infer<T>[] {
    const raw = unwrapList(body, key);
    if (!raw) throw new HubProtocolError(path, `no ${key} list`);
    const out: z.infer<T>[] = [];
    for (const item of raw) {
      const parsed = schema.safeParse(item);
      if (parsed.success) out.push(parsed.data);
      else this.#logger?.warn({ path, problem: parsed.error.issues[0]?.message }, 'skipping malformed list item from hub');
    }
    return out;
  }
}

function parseOne<T extends z.ZodType>(schema: T, body: unknown, path: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HubProtocolError(path, `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Communities are stored bare and sent as `m/x` (hub-api.md §10). */
export function toWireCommunity(name: string): string {
  return `m/${bareCommunity(name)}`;
}

export function bareCommunity(name: string): string {
  return name.startsWith('m/') ? name.slice(2) : name;
}
