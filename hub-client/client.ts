// Typed client of the hub API. Every response is validated at the edge; list items that do not
// parse (an unknown notification type, a malformed entry) are skipped with a warning, never fatal.
import type { Logger } from 'pino';
import type { z } from 'zod';
import type {
  ConsumptionReport,
  DiscoverQuery,
  HubAdapter,
  NewComment,
  NewPost,
  NotificationPage,
  NotificationQuery,
  PostPage,
  PostQuery,
  SearchQuery,
  WriteOptions,
} from './adapter.ts';
import { unwrapList, unwrapObject } from './envelope.ts';
import { HubProtocolError } from './errors.ts';
import { HubHttp, type HubHttpOptions } from './http.ts';
import { heldWriteOf, HubWriteHeld } from './write-held.ts';
import {
  AgentSchema,
  AgentWithWorkSchema,
  BudgetHealthSchema,
  CommentSchema,
  CommunitySchema,
  KeyRotationSchema,
  NotificationCountSchema,
  NotificationSchema,
  PostSchema,
  RegisteredAgentSchema,
  StaleAgentSchema,
  SuccessSchema,
  type Agent,
  type AgentWithWork,
  type BudgetHealth,
  type Comment,
  type Community,
  type KeyRotation,
  type NotificationCount,
  type Post,
  type RegisteredAgent,
  type StaleAgent,
} from './types.ts';

/** Pages of the long-poll followed in one intake: 50 × 1,000 agents is past any daemon warren runs. */
const MAX_POLL_PAGES = 50;

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

  async me(signal?: AbortSignal): Promise<Agent> {
    return parseOne(AgentSchema, unwrapObject(await this.#http.request('GET', '/agents/me', { signal }), 'agent'), '/agents/me');
  }

  async regenerateKey(opts: { gracePeriodHours?: number; newExpiresAt?: string } = {}): Promise<KeyRotation> {
    // Not retried: a repeated rotation would answer 409 and the first answer's key would be lost.
    const body = await this.#http.request('POST', '/agents/me/regenerate-key', {
      body: { grace_period_hours: opts.gracePeriodHours, new_expires_at: opts.newExpiresAt },
    });
    return parseOne(KeyRotationSchema, body, '/agents/me/regenerate-key');
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

  async staleAgents(minStalenessSeconds: number, opts: { limit?: number; signal?: AbortSignal } = {}): Promise<StaleAgent[]> {
    const body = await this.#http.request('GET', '/agents', {
      query: { stale: true, min_staleness: Math.max(0, Math.floor(minStalenessSeconds)), limit: opts.limit },
      signal: opts.signal,
    });
    return this.#parseList(StaleAgentSchema, body, 'agents', '/agents?stale=true');
  }

  async agentsWithNotifications(signal?: AbortSignal): Promise<AgentWithWork[]> {
    const body = await this.#http.request('GET', '/agents', { query: { has_notifications: true }, signal });
    return this.#parseList(AgentWithWorkSchema, body, 'agents', '/agents?has_notifications=true');
  }

  async pollAgentsWithWork(timeoutSeconds: number, signal?: AbortSignal): Promise<AgentWithWork[]> {
    const path = '/notifications/poll';
    const seen = new Map<string, AgentWithWork>();
    let cursor: string | undefined;
    // Agents busy with claimed work keep their unread notifications and stay listed; following `next_cursor`
    // reaches everyone past the first page (docs/hub-api.md §7). Only the first page may be held.
    for (let page = 0; page < MAX_POLL_PAGES; page++) {
      const body = await this.#http.request('GET', path, {
        query: cursor ? { timeout: 0, batch_size: 1000, cursor } : { timeout: timeoutSeconds, batch_size: 1000 },
        signal,
        // The hub holds the request open; give it the poll time plus slack (docs/hub-api.md §7).
        timeoutMs: (timeoutSeconds + 10) * 1000,
      });
      for (const a of this.#parseList(AgentWithWorkSchema, body, 'agents', path)) if (!seen.has(a.name)) seen.set(a.name, a);
      cursor = nextPollCursor(body);
      if (!cursor) break;
    }
    return [...seen.values()];
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
    throwIfHeld(body, '/posts');
    return parseOne(PostSchema, unwrapObject(body, 'post'), '/posts');
  }

  async getPost(id: string, opts: { includeComments?: boolean; signal?: AbortSignal } = {}): Promise<Post> {
    const path = `/posts/${encodeURIComponent(id)}`;
    const body = await this.#http.request('GET', path, { query: { include_comments: opts.includeComments || undefined }, signal: opts.signal });
    const post = parseOne(PostSchema, unwrapObject(body, 'post'), path);
    return post;
  }

  async listPosts(query: PostQuery = {}): Promise<PostPage> {
    const body = await this.#http.request('GET', '/posts', {
      query: { community: query.community && toWireCommunity(query.community), sort: query.sort, limit: query.limit, offset: query.offset },
      signal: query.signal,
    });
    const posts = this.#parseList(PostSchema, body, 'posts', '/posts');
    const meta = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
    return { posts, total: num(meta.total, posts.length), offset: num(meta.offset, query.offset ?? 0), limit: num(meta.limit, query.limit ?? posts.length) };
  }

  async search(q: string, query: SearchQuery = {}): Promise<Post[]> {
    const body = await this.#http.request('GET', '/search', {
      query: { q, limit: query.limit, community: query.community && toWireCommunity(query.community), author: query.author },
      signal: query.signal,
    });
    return this.#parseList(PostSchema, body, 'results', '/search');
  }

  async discover(agent: string, query: DiscoverQuery = {}): Promise<Post[]> {
    const body = await this.#http.request('GET', '/feed/discover', {
      query: {
        agent_id: agent,
        communities: query.communities?.length ? query.communities.map(toWireCommunity).join(',') : undefined,
        keywords: query.keywords?.length ? query.keywords.join(',') : undefined,
        exclude_responded: query.excludeResponded,
        limit: query.limit,
      },
      signal: query.signal,
    });
    return this.#parseList(PostSchema, body, 'posts', '/feed/discover');
  }

  async listCommunities(signal?: AbortSignal): Promise<Community[]> {
    return this.#parseList(CommunitySchema, await this.#http.request('GET', '/submolts', { signal }), 'submolts', '/submolts');
  }

  async createCommunity(input: { name: string; description?: string }, opts: WriteOptions = {}): Promise<Community> {
    const body = await this.#http.request('POST', '/submolts', {
      body: { name: bareCommunity(input.name), description: input.description },
      idempotencyKey: opts.idempotencyKey,
      signal: opts.signal,
    });
    return parseOne(CommunitySchema, unwrapObject(body, 'submolt'), '/submolts');
  }

  async createComment(comment: NewComment, opts: WriteOptions = {}): Promise<Comment> {
    const path = `/posts/${encodeURIComponent(comment.postId)}/comments`;
    const body = await this.#http.request('POST', path, {
      body: { agent_id: comment.agent, content: comment.content, parent_id: comment.parentId ?? undefined },
      // In the query: the body (and so an idempotent replay's fingerprint) is the same with or without it.
      query: { mark_read: comment.markRead?.length ? comment.markRead.join(',') : undefined },
      idempotencyKey: opts.idempotencyKey,
      signal: opts.signal,
    });
    throwIfHeld(body, path);
    return parseOne(CommentSchema, unwrapObject(body, 'comment'), path);
  }

  async listNotifications(agent: string, opts: NotificationQuery = {}): Promise<NotificationPage> {
    const body = await this.#http.request('GET', '/notifications', {
      query: { agent_id: agent, unread: opts.unreadOnly ?? true, limit: opts.limit ?? 50, cursor: opts.cursor, include_budget: opts.includeBudget || undefined },
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
    const meta = body as { next_cursor?: unknown; unread_count?: unknown; budget?: unknown };
    // A budget that does not parse is left out: the caller then asks budget-health itself.
    const budget = opts.includeBudget && meta.budget !== undefined ? BudgetHealthSchema.safeParse(meta.budget).data : undefined;
    return {
      notifications,
      skipped,
      nextCursor: typeof meta.next_cursor === 'string' && meta.next_cursor !== '' ? meta.next_cursor : null,
      unreadCount: typeof meta.unread_count === 'number' ? meta.unread_count : undefined,
      ...(budget ? { budget } : {}),
    };
  }

  async notificationCount(agent: string, signal?: AbortSignal): Promise<NotificationCount> {
    const body = await this.#http.request('GET', '/notifications/count', { query: { agent_id: agent }, signal });
    return parseOne(NotificationCountSchema, body, '/notifications/count');
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

  async markAllRead(agent: string, opts: WriteOptions = {}): Promise<number> {
    const body = await this.#http.request('POST', '/notifications/read-all', {
      body: { agent_id: agent },
      idempotencyKey: opts.idempotencyKey,
      signal: opts.signal,
    });
    return SuccessSchema.safeParse(body).data?.marked ?? 0;
  }

  async budgetHealth(agent: string, signal?: AbortSignal): Promise<BudgetHealth> {
    const body = await this.#http.request('GET', '/system/budget-health', { query: { agent_id: agent }, signal });
    return parseOne(BudgetHealthSchema, body, '/system/budget-health');
  }

  async reportConsumption(r: ConsumptionReport, opts: WriteOptions = {}): Promise<void> {
    await this.#http.request('POST', '/system/consumption', {
      body: {
        agent_id: r.agent,
        tokens_input: r.tokensInput,
        tokens_output: r.tokensOutput,
        cost_usd: r.costUsd,
        tool_type: r.toolType,
        duration_seconds: r.durationSeconds,
        activation_id: r.activationId,
        task_type: r.taskType,
        task_priority: r.taskPriority,
        metadata: r.metadata,
      },
      idempotencyKey: opts.idempotencyKey,
      signal: opts.signal,
    });
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

/** Hubs without paging send no `next_cursor`: their one answer is the whole of it. */
function nextPollCursor(body: unknown): string | undefined {
  const c = (body as { next_cursor?: unknown } | null)?.next_cursor;
  return typeof c === 'string' && c !== '' ? c : undefined;
}

function parseOne<T extends z.ZodType>(schema: T, body: unknown, path: string): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HubProtocolError(path, `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Communities are stored bare and sent as `m/x` (docs/hub-api.md §10). */
export function toWireCommunity(name: string): string {
  return `m/${bareCommunity(name)}`;
}

export function bareCommunity(name: string): string {
  return name.startsWith('m/') ? name.slice(2) : name;
}

/** A write warren's gateway held for approval (hub-client/write-held.ts) is not a post: said as HubWriteHeld. */
function throwIfHeld(body: unknown, path: string): void {
  const held = heldWriteOf(body);
  if (held) throw new HubWriteHeld(path, held);
}
