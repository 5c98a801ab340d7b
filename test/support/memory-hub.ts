// An in-memory HubAdapter: the activation pipeline's unit-test seam. It keeps posts, comments and notifications,
// honours idempotency keys the way the hub contract does (same key, same answer), records every write, and can be
// told to fail the next calls of a method, so failure paths are tested without Redis or a hub process.
import type { ConsumptionReport, HubAdapter, NewComment, NewPost, NotificationPage, WriteOptions } from '../../hub-client/adapter.ts';
import { HubError } from '../../hub-client/errors.ts';
import type { Agent, AgentWithWork, BudgetHealth, BudgetStatus, Comment, Community, Notification, Post } from '../../hub-client/types.ts';

type Method = keyof HubAdapter;

export interface RecordedWrite {
  method: Method;
  idempotencyKey: string | undefined;
  body: unknown;
}

export class MemoryHub implements HubAdapter {
  readonly baseUrl = 'memory://hub';
  readonly posts = new Map<string, Post>();
  readonly comments: Comment[] = [];
  readonly notifications: Array<Notification & { agent: string }> = [];
  readonly writes: RecordedWrite[] = [];
  readonly consumption: ConsumptionReport[] = [];
  budget: BudgetStatus = 'healthy';
  readonly #replays = new Map<string, unknown>();
  readonly #failures = new Map<Method, HubError[]>();
  #ids = 0;

  /** The next `times` calls of `method` fail with `err` (default: a 503, retryable). */
  failNext(method: Method, times = 1, err?: HubError): void {
    const e = err ?? new HubError({ method: 'POST', path: `/${method}`, status: 503, detail: 'unavailable (injected)', retryable: true });
    this.#failures.set(method, [...(this.#failures.get(method) ?? []), ...Array<HubError>(times).fill(e)]);
  }

  #maybeFail(method: Method): void {
    const queue = this.#failures.get(method);
    const err = queue?.shift();
    if (err) throw err;
  }

  #id(kind: string): string {
    return `${kind}_${++this.#ids}`;
  }

  /** A write replays its first answer under the same key, as the hub's Idempotency-Key does. */
  #write<T>(method: Method, opts: WriteOptions | undefined, body: unknown, make: () => T): T {
    this.#maybeFail(method);
    this.writes.push({ method, idempotencyKey: opts?.idempotencyKey, body });
    const key = opts?.idempotencyKey ? `${method}:${opts.idempotencyKey}` : undefined;
    if (key && this.#replays.has(key)) return this.#replays.get(key) as T;
    const value = make();
    if (key) this.#replays.set(key, value);
    return value;
  }

  /** A post by `from` mentioning `agent`, with its notification. */
  mention(agent: string, from: string, content: string): { post: Post; notification: Notification } {
    const post: Post = { id: this.#id('p'), title: null, author: { id: from, name: from }, content, community: 'general', created_at: new Date().toISOString() };
    this.posts.set(post.id, post);
    const notification = { id: this.#id('n'), type: 'mention' as const, post_id: post.id, comment_id: null, from: { id: from, name: from }, content, created_at: new Date().toISOString(), read: false };
    this.notifications.push({ ...notification, agent });
    return { post, notification };
  }

  unread(agent: string): Notification[] {
    return this.notifications.filter((n) => n.agent === agent && !n.read);
  }

  commentsOn(postId: string): Comment[] {
    return this.comments.filter((c) => c.post_id === postId);
  }

  health(): Promise<boolean> {
    return Promise.resolve(true);
  }

  registerAgent(): never {
    throw new Error('MemoryHub: registerAgent is not part of the pipeline');
  }

  me(): never {
    throw new Error('MemoryHub: me is not part of the pipeline');
  }

  regenerateKey(): never {
    throw new Error('MemoryHub: regenerateKey is not part of the pipeline');
  }

  getAgent(nameOrId: string): Promise<Agent> {
    return Promise.resolve({ id: nameOrId, name: nameOrId, type: 'native' });
  }

  listAgents(): Promise<Agent[]> {
    return Promise.resolve([]);
  }

  staleAgents(): Promise<[]> {
    return Promise.resolve([]);
  }

  agentsWithNotifications(): Promise<AgentWithWork[]> {
    const counts = new Map<string, number>();
    for (const n of this.notifications) if (!n.read) counts.set(n.agent, (counts.get(n.agent) ?? 0) + 1);
    return Promise.resolve([...counts].map(([name, notification_count]) => ({ id: name, name, notification_count })));
  }

  pollAgentsWithWork(): Promise<AgentWithWork[]> {
    return this.agentsWithNotifications();
  }

  markActivated(agent: string, opts?: WriteOptions): Promise<void> {
    this.#write('markActivated', opts, { agent }, () => undefined);
    return Promise.resolve();
  }

  createPost(post: NewPost, opts?: WriteOptions): Promise<Post> {
    return Promise.resolve(
      this.#write('createPost', opts, post, () => {
        const p: Post = { id: this.#id('p'), title: post.title ?? null, author: { id: post.agent, name: post.agent }, content: post.content, community: post.community ?? null, created_at: new Date().toISOString() };
        this.posts.set(p.id, p);
        return p;
      }),
    );
  }

  getPost(id: string, opts?: { includeComments?: boolean }): Promise<Post> {
    this.#maybeFail('getPost');
    const p = this.posts.get(id);
    if (!p) return Promise.reject(new HubError({ method: 'GET', path: `/posts/${id}`, status: 404, detail: 'not found', retryable: false }));
    return Promise.resolve(opts?.includeComments ? { ...p, comments: this.commentsOn(id) } : p);
  }

  listPosts(): Promise<{ posts: Post[]; total: number; offset: number; limit: number }> {
    const posts = [...this.posts.values()];
    return Promise.resolve({ posts, total: posts.length, offset: 0, limit: posts.length });
  }

  search(): Promise<Post[]> {
    return Promise.resolve([]);
  }

  discover(): Promise<Post[]> {
    this.#maybeFail('discover');
    return Promise.resolve([...this.posts.values()]);
  }

  listCommunities(): Promise<Community[]> {
    return Promise.resolve([]);
  }

  createCommunity(input: { name: string }): Promise<Community> {
    return Promise.resolve({ id: input.name, name: input.name } as Community);
  }

  createComment(comment: NewComment, opts?: WriteOptions): Promise<Comment> {
    return Promise.resolve(
      this.#write('createComment', opts, comment, () => {
        const c: Comment = { id: this.#id('c'), post_id: comment.postId, parent_id: comment.parentId ?? null, author: { id: comment.agent, name: comment.agent }, content: comment.content, created_at: new Date().toISOString() };
        this.comments.push(c);
        return c;
      }),
    );
  }

  listNotifications(agent: string, opts?: { unreadOnly?: boolean }): Promise<NotificationPage> {
    this.#maybeFail('listNotifications');
    const notifications = this.notifications.filter((n) => n.agent === agent && (!opts?.unreadOnly || !n.read)).map(({ agent: _a, ...n }) => n);
    return Promise.resolve({ notifications, skipped: [], nextCursor: null, unreadCount: notifications.filter((n) => !n.read).length });
  }

  notificationCount(agent: string): Promise<{ unread: number; total: number }> {
    return Promise.resolve({ unread: this.unread(agent).length, total: this.notifications.filter((n) => n.agent === agent).length });
  }

  markRead(agent: string, ids: readonly string[], opts?: WriteOptions): Promise<number> {
    return Promise.resolve(
      this.#write('markRead', opts, { agent, ids }, () => {
        let n = 0;
        for (const x of this.notifications) {
          if (x.agent !== agent || !ids.includes(x.id) || x.read) continue;
          x.read = true;
          n++;
        }
        return n;
      }),
    );
  }

  markAllRead(agent: string, opts?: WriteOptions): Promise<number> {
    return this.markRead(agent, this.unread(agent).map((n) => n.id), opts);
  }

  budgetHealth(agent: string): Promise<BudgetHealth> {
    this.#maybeFail('budgetHealth');
    return Promise.resolve({ agent_id: agent, daily_limit: 0, daily_used: 0, monthly_limit: 0, monthly_used: 0, used_pct: 0, healthy: this.budget !== 'critical', status: this.budget });
  }

  reportConsumption(report: ConsumptionReport, opts?: WriteOptions): Promise<void> {
    this.#write('reportConsumption', opts, report, () => this.consumption.push(report));
    return Promise.resolve();
  }
}
