// warren's HubAdapter on the AT Protocol (Bluesky), through @atproto/api. Each agent is an account on a PDS,
// logged in with its app password (the library refreshes the session). Work comes from listNotifications
// (mentions, replies, quotes), kept in Redis until handled; the account's single read timestamp (updateSeen) is
// moved only up to what was handled. Writes are posts whose record key is chosen once per idempotency key, so a
// retried activation finds its earlier reply instead of posting again. Requests are paced in Redis
// (request-pacer.ts), shared by every daemon: an account's writes, and everything sent to the PDS's host.
import { AtpAgent, RichText } from '@atproto/api';
import type { Logger } from 'pino';
import type { RedisClient } from '../../redis/scripts.ts';
import type { ConsumptionReport, DiscoverQuery, HubAdapter, HubCapabilities, NewComment, NewPost, NotificationPage, NotificationQuery, PostPage, PostQuery, SearchQuery, WriteOptions } from '../adapter.ts';
import { HubError } from '../errors.ts';
import { PaceAborted, PaceWaitTooLong, RequestPacer, type PaceBucket } from '../request-pacer.ts';
import type { Agent, AgentWithWork, BudgetHealth, Comment, Community, KeyRotation, NotificationCount, Post, RegisteredAgent, StaleAgent } from '../types.ts';
import type { BudgetConfig } from '../../local-hub/budget-rules.ts';
import { LocalBudgetLedger } from '../moltbook/budget-ledger.ts';
import { splitPost } from './split-text.ts';
import { BlueskyState } from './state.ts';
import { tidOf } from './tid.ts';
import { seenAtAfter, WORK_REASONS, workOf, type WireNotification } from './work.ts';
import type { KeySpace } from '../../redis/key-layout.ts';

export const BLUESKY_CAPABILITIES: HubCapabilities = {
  longPoll: false,
  budget: false,
  idempotencyKeys: false,
  registration: false,
  errorPosts: false,
};

export interface BlueskyAccount {
  handle: string;
  password: string;
}

export interface Rate {
  perMinute: number;
  burst: number;
}

export interface BlueskyAdapterOptions {
  /** The PDS, e.g. https://bsky.social */
  baseUrl: string;
  /** Agent name → its account. */
  accounts: ReadonlyMap<string, BlueskyAccount>;
  redis: RedisClient;
  prefix: KeySpace;
  logger?: Logger;
  /** Records created per minute per account (the PDS allows 5000 points an hour, 3 a create). */
  writeRate?: Rate;
  /** Requests per minute to the PDS's host, all accounts together (the PDS allows 3000 per 5 minutes per IP). */
  hostRate?: Rate;
  /** The longest a call waits for its pace before failing with a retryable error. */
  maxWaitMs?: number;
  budget?: BudgetConfig;
  now?: () => number;
}

/** 1500 creates an hour (4500 of the 5000 points); a burst of a few. */
export const DEFAULT_WRITE_RATE: Rate = { perMinute: 25, burst: 5 };
/** 500 a minute (2500 of the 3000 per 5 minutes). */
export const DEFAULT_HOST_RATE: Rate = { perMinute: 500, burst: 50 };

/** Logins per account: the PDS allows 30 per 5 minutes (and 300 a day); a daemon logs in once per account. */
const LOGIN_RATE: Rate = { perMinute: 5, burst: 5 };

type CallKind = 'read' | 'write' | 'login';

const POST = 'app.bsky.feed.post';
/** On an agent's first scan, notifications this much older than the start are work too (a daemon started just after a mention). */
const FIRST_LOOKBACK_MS = 15 * 60_000;
/** Thread depth read for an agent's context. */
const THREAD_DEPTH = 10;

const notOffered = (what: string): HubError => new HubError({ method: '-', path: what, detail: `Bluesky does not offer ${what} through warren`, retryable: false });

interface StrongRef {
  uri: string;
  cid: string;
}

interface PostView {
  uri: string;
  cid: string;
  author: { did: string; handle: string };
  record: unknown;
  indexedAt: string;
  replyCount?: number;
}

interface ThreadNode {
  post?: PostView;
  parent?: ThreadNode;
  replies?: ThreadNode[];
}

interface PostRecordShape {
  text?: string;
  createdAt?: string;
  reply?: { root: StrongRef; parent: StrongRef };
}

const recordOf = (p: PostView): PostRecordShape => (p.record ?? {});

export class BlueskyAdapter implements HubAdapter {
  readonly baseUrl: string;
  readonly capabilities = BLUESKY_CAPABILITIES;
  readonly #accounts: ReadonlyMap<string, BlueskyAccount>;
  readonly #agents = new Map<string, Promise<AtpAgent>>();
  readonly #state: BlueskyState;
  readonly #pacer: RequestPacer;
  readonly #writeRate: Rate;
  readonly #hostRate: Rate;
  readonly #host: string;
  readonly #logger: Logger | undefined;
  readonly #maxWaitMs: number;
  readonly #now: () => number;
  readonly #budget: LocalBudgetLedger;

  constructor(opts: BlueskyAdapterOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#accounts = opts.accounts;
    this.#state = new BlueskyState(opts.redis, opts.prefix);
    this.#now = opts.now ?? Date.now;
    this.#pacer = new RequestPacer(opts.redis, opts.prefix, this.#now);
    this.#writeRate = opts.writeRate ?? DEFAULT_WRITE_RATE;
    this.#hostRate = opts.hostRate ?? DEFAULT_HOST_RATE;
    this.#host = new URL(this.baseUrl).host;
    this.#logger = opts.logger;
    this.#maxWaitMs = opts.maxWaitMs ?? 30_000;
    this.#budget = new LocalBudgetLedger(opts.redis, opts.prefix, opts.budget ?? {}, this.#now);
  }

  actsAs(agent: string): boolean {
    return this.#accounts.has(agent);
  }

  // ---- sessions and requests ----

  /**
   * The agent's logged-in client (one login per process; @atproto/api refreshes the session when its access token
   * expires). When the refresh itself is refused (the refresh token expired or was revoked: the library then drops
   * the session and every later call would go out unauthenticated), the client is forgotten and the next call logs
   * in again with the app password.
   */
  async session(agent: string): Promise<AtpAgent> {
    let p = this.#agents.get(agent);
    if (!p) {
      const account = this.#accounts.get(agent);
      if (!account) throw new HubError({ method: '-', path: '-', detail: `agent ${agent} has no Bluesky account (hub.agents.${agent}.handle)`, retryable: false });
      p = (async () => {
        const client: AtpAgent = new AtpAgent({
          service: this.baseUrl,
          persistSession: (event) => {
            if (event !== 'expired' || this.#agents.get(agent) !== p) return;
            this.#agents.delete(agent);
            this.#logger?.warn({ agent }, 'Bluesky session expired and could not be refreshed: logging in again on the next call');
          },
        });
        await this.#call(agent, 'login', 'com.atproto.server.createSession', () => client.login({ identifier: account.handle, password: account.password }));
        return client;
      })();
      this.#agents.set(agent, p);
      p.catch(() => this.#agents.delete(agent)); // a failed login is tried again next time
    }
    return p;
  }

  /**
   * The buckets a call takes from; the first is the one the server's rate-limit headers and 429s speak of. A login
   * is limited per account by the PDS (30 per 5 minutes), so its headers and 429s hold that account's logins, never
   * the host's bucket every account shares.
   */
  #buckets(agent: string, kind: CallKind): PaceBucket[] {
    const host: PaceBucket = { key: `bluesky:host:${this.#host}`, ...this.#hostRate };
    if (kind === 'write') return [{ key: `bluesky:account:${agent}:write`, ...this.#writeRate }, host];
    if (kind === 'login') return [{ key: `bluesky:account:${agent}:login`, ...LOGIN_RATE }, host];
    return [host];
  }

  /** One XRPC call, paced; the server's rate-limit headers correct the bucket, a 429 holds it until the reset. */
  async #call<T>(agent: string, kind: CallKind, nsid: string, fn: () => Promise<T>, opts: { signal?: AbortSignal; poll?: boolean } = {}): Promise<T> {
    const buckets = this.#buckets(agent, kind);
    try {
      await this.#pacer.take(buckets, { maxWaitMs: opts.poll ? 0 : this.#maxWaitMs, signal: opts.signal });
    } catch (err) {
      if (err instanceof PaceWaitTooLong) throw new HubError({ method: 'XRPC', path: nsid, status: 429, detail: `${agent}: held back locally for ${Math.ceil(err.waitMs / 1000)} s (Bluesky rate limit)`, retryable: true, retryAfterMs: err.waitMs });
      if (err instanceof PaceAborted) throw new HubError({ method: 'XRPC', path: nsid, detail: 'aborted', retryable: false });
      throw err;
    }
    const bucket = buckets[0]!;
    try {
      const res = await fn();
      await this.#observe(bucket, (res as { headers?: Record<string, string> } | undefined)?.headers);
      return res;
    } catch (err) {
      const e = err as { status?: number; headers?: Record<string, string>; error?: string; message?: string };
      if (e.status === 429) {
        const reset = Number(e.headers?.['ratelimit-reset']);
        const until = Number.isFinite(reset) && reset > 0 ? reset * 1000 : this.#now() + 60_000;
        await this.#pacer.penalise(bucket.key, until);
        this.#logger?.warn({ agent, nsid, until: new Date(until).toISOString() }, 'Bluesky rate limit: holding back until the reset');
      } else await this.#observe(bucket, e.headers);
      if (err instanceof HubError) throw err;
      const status = typeof e.status === 'number' && e.status >= 100 ? e.status : undefined;
      // A session lost under a call (its refresh refused) is logged in again by the next: worth a retry. A login
      // refused is not.
      const sessionLost = kind !== 'login' && (status === 401 || e.error === 'ExpiredToken' || e.error === 'InvalidToken');
      throw new HubError({ method: 'XRPC', path: nsid, status, detail: `${e.error ?? 'error'}: ${e.message ?? String(err)}`, retryable: status === undefined || status === 429 || status >= 500 || sessionLost });
    }
  }

  async #observe(bucket: PaceBucket, headers: Record<string, string> | undefined): Promise<void> {
    const remaining = Number(headers?.['ratelimit-remaining']);
    const reset = Number(headers?.['ratelimit-reset']);
    if (!headers || !Number.isFinite(remaining) || !Number.isFinite(reset)) return;
    // The headers tell the tightest of the server's limits (per IP, per account), which may not be this bucket's:
    // they correct it only when the server has less left than the bucket could give at once, never refill it.
    if (remaining >= bucket.burst) return;
    await this.#pacer.observe(bucket, { remaining, resetAt: reset * 1000 });
  }

  #did(client: AtpAgent): string {
    const did = client.session?.did;
    if (!did) throw new HubError({ method: '-', path: '-', detail: 'no Bluesky session', retryable: true });
    return did;
  }

  // ---- work ----

  async #scan(agent: string, signal?: AbortSignal, poll = false): Promise<void> {
    const client = await this.session(agent);
    const res = await this.#call(agent, 'read', 'app.bsky.notification.listNotifications', () => client.app.bsky.notification.listNotifications({ limit: 50 }, { signal }), { signal, poll });
    const items = res.data.notifications as unknown as WireNotification[];
    // warren's own cursor, not the server's read flags (one timestamp per account, which other clients and the
    // AppView itself move): on the first scan, work starts with the oldest item still unread or FIRST_LOOKBACK_MS
    // before, whichever is older; after that, whatever is newer and not handled, so nothing arriving meanwhile is lost.
    const lookback = new Date(this.#now() - FIRST_LOOKBACK_MS).toISOString();
    const unread = items.filter((n) => !n.isRead).map((n) => n.indexedAt).sort();
    const since = await this.#state.since(agent, unread[0] !== undefined && unread[0] < lookback ? unread[0] : lookback);
    const fresh = items.filter((n) => n.indexedAt >= since);
    const handled = await this.#state.handled(agent, fresh.map((n) => n.uri));
    const work = workOf(fresh, handled, this.#did(client));
    await this.#state.addPending(agent, work);
    this.#logger?.debug({ agent, listed: items.length, since, fresh: fresh.length, work: work.length }, 'Bluesky notifications read');
    // Handled but still unread on the server (a daemon stopped between the two): the read time catches up now.
    const workItems = fresh.filter((n) => (WORK_REASONS as readonly string[]).includes(n.reason)).map((n) => ({ id: n.uri, created_at: n.indexedAt }));
    const seenAt = seenAtAfter(workItems, handled);
    if (seenAt && fresh.some((n) => !n.isRead && handled.has(n.uri) && n.indexedAt <= seenAt)) {
      await this.#call(agent, 'read', 'app.bsky.notification.updateSeen', () => client.app.bsky.notification.updateSeen({ seenAt }, { signal }), { signal, poll });
    }
  }

  async agentsWithNotifications(signal?: AbortSignal): Promise<AgentWithWork[]> {
    const out: AgentWithWork[] = [];
    for (const agent of this.#accounts.keys()) {
      try {
        await this.#scan(agent, signal, true);
      } catch (err) {
        if (!(err instanceof HubError && err.status === 429)) this.#logger?.warn({ agent, err }, 'could not read the agent\'s Bluesky notifications');
      }
      const n = await this.#state.pendingCount(agent);
      if (n > 0) out.push({ id: agent, name: agent, notification_count: n });
    }
    return out;
  }

  pollAgentsWithWork(): Promise<AgentWithWork[]> {
    return Promise.reject(new HubError({ method: 'GET', path: '/notifications/poll', status: 404, detail: 'Bluesky has no long-poll', retryable: false }));
  }

  async listNotifications(agent: string, opts: NotificationQuery = {}): Promise<NotificationPage> {
    try {
      await this.#scan(agent, opts.signal);
    } catch (err) {
      if ((await this.#state.pendingCount(agent)) === 0) throw err;
      this.#logger?.warn({ agent, err }, 'could not read the agent\'s Bluesky notifications; answering those found before');
    }
    const all = await this.#state.pending(agent);
    return { notifications: all.slice(0, opts.limit ?? 50), skipped: [], nextCursor: null, unreadCount: all.length };
  }

  async markRead(agent: string, ids: readonly string[], opts: WriteOptions = {}): Promise<number> {
    if (ids.length === 0) return 0;
    const before = await this.#state.pending(agent);
    await this.#state.markHandled(agent, ids);
    const handled = await this.#state.handled(agent, before.map((n) => n.id));
    const seenAt = seenAtAfter(before, handled);
    this.#logger?.debug({ agent, handled: ids.length, pendingBefore: before.length, seenAt }, 'Bluesky notifications handled');
    if (seenAt) {
      const client = await this.session(agent);
      await this.#call(agent, 'read', 'app.bsky.notification.updateSeen', () => client.app.bsky.notification.updateSeen({ seenAt }, { signal: opts.signal }), { signal: opts.signal });
    }
    return ids.length;
  }

  async markAllRead(agent: string, opts: WriteOptions = {}): Promise<number> {
    const pending = await this.#state.pending(agent);
    return this.markRead(agent, pending.map((n) => n.id), opts);
  }

  async notificationCount(agent: string, signal?: AbortSignal): Promise<NotificationCount> {
    await this.#scan(agent, signal);
    const n = await this.#state.pendingCount(agent);
    return { unread: n, total: n };
  }

  // ---- reads ----

  /** Any usable session: reads that name no agent use the first account. */
  #anyAgent(): string {
    const first = this.#accounts.keys().next();
    if (first.done) throw new HubError({ method: '-', path: '-', detail: 'no Bluesky account configured (hub.agents)', retryable: false });
    return first.value;
  }

  /** The thread of `uri` as a post (its root) with the replies as comments, parents included. */
  async getPost(uri: string, opts: { includeComments?: boolean; signal?: AbortSignal } = {}): Promise<Post> {
    const agent = this.#anyAgent();
    const client = await this.session(agent);
    const res = await this.#call(agent, 'read', 'app.bsky.feed.getPostThread', () => client.getPostThread({ uri, depth: THREAD_DEPTH, parentHeight: THREAD_DEPTH }, { signal: opts.signal }), { signal: opts.signal });
    let node = res.data.thread as unknown as ThreadNode;
    while (node.parent?.post) node = node.parent;
    if (!node.post) throw new HubError({ method: 'XRPC', path: 'app.bsky.feed.getPostThread', status: 404, detail: `${uri}: not found or blocked`, retryable: false });
    const root = node.post;
    const comments: Comment[] = [];
    const walk = (n: ThreadNode): void => {
      for (const r of n.replies ?? []) {
        if (!r.post) continue;
        const rec = recordOf(r.post);
        comments.push({ id: r.post.uri, post_id: root.uri, parent_id: rec.reply?.parent.uri === root.uri ? null : (rec.reply?.parent.uri ?? null), author: { id: r.post.author.did, name: r.post.author.handle }, content: rec.text ?? '', created_at: rec.createdAt ?? r.post.indexedAt });
        walk(r);
      }
    };
    // The notification may sit deeper than the root's reply tree was read: walk from the thread as answered too.
    walk(node);
    comments.sort((a, b) => a.created_at.localeCompare(b.created_at));
    const post = toPost(root);
    return opts.includeComments ? { ...post, comments, comment_count: comments.length } : post;
  }

  async #views(agent: string, uris: readonly string[], signal?: AbortSignal): Promise<PostView[]> {
    const client = await this.session(agent);
    const res = await this.#call(agent, 'read', 'app.bsky.feed.getPosts', () => client.getPosts({ uris: [...uris] }, { signal }), { signal });
    return res.data.posts;
  }

  async listPosts(query: PostQuery = {}): Promise<PostPage> {
    const agent = this.#anyAgent();
    const posts = await this.#timeline(agent, query.limit ?? 20, query.signal);
    return { posts, total: posts.length, offset: 0, limit: query.limit ?? posts.length };
  }

  async #timeline(agent: string, limit: number, signal?: AbortSignal): Promise<Post[]> {
    const client = await this.session(agent);
    const res = await this.#call(agent, 'read', 'app.bsky.feed.getTimeline', () => client.getTimeline({ limit }, { signal }), { signal });
    return (res.data.feed as unknown as { post: PostView }[]).map((f) => toPost(f.post));
  }

  async search(q: string, query: SearchQuery = {}): Promise<Post[]> {
    const agent = this.#anyAgent();
    return this.#search(agent, q, query.limit ?? 10, query.signal);
  }

  async #search(agent: string, q: string, limit: number, signal?: AbortSignal): Promise<Post[]> {
    const client = await this.session(agent);
    const res = await this.#call(agent, 'read', 'app.bsky.feed.searchPosts', () => client.app.bsky.feed.searchPosts({ q, limit }, { signal }), { signal });
    return (res.data.posts as unknown as PostView[]).map(toPost);
  }

  /** Exploration: posts on the agent's keywords (search), else its timeline; never its own, nor one it replied to. */
  async discover(agent: string, query: DiscoverQuery = {}): Promise<Post[]> {
    const limit = query.limit ?? 10;
    const found = new Map<string, Post>();
    for (const k of query.keywords ?? []) for (const p of await this.#search(agent, k, limit, query.signal)) found.set(p.id, p);
    if (found.size === 0) for (const p of await this.#timeline(agent, limit, query.signal)) found.set(p.id, p);
    const account = this.#accounts.get(agent);
    const others = [...found.values()].filter((p) => p.author.name !== account?.handle);
    const answered = query.excludeResponded ? await this.#state.answered(agent, others.map((p) => p.id)) : new Set<string>();
    return others.filter((p) => !answered.has(p.id)).slice(0, limit);
  }

  // ---- writes ----

  /** A reply in the thread: root and parent refs from the parent's own record, facets for mentions and links. */
  async createComment(comment: NewComment, opts: WriteOptions = {}): Promise<Comment> {
    const { agent } = comment;
    const parentUri = comment.parentId ?? comment.postId;
    const [parent] = await this.#views(agent, [parentUri], opts.signal);
    if (!parent) throw new HubError({ method: 'XRPC', path: 'app.bsky.feed.getPosts', status: 404, detail: `${parentUri}: the post to answer is gone`, retryable: false });
    const parentRef = { uri: parent.uri, cid: parent.cid };
    const root = recordOf(parent).reply?.root ?? parentRef;
    const created = await this.#publish(agent, comment.content, { root, parent: parentRef }, opts);
    await this.#state.markAnswered(agent, parent.uri);
    return { id: created.uri, post_id: root.uri, parent_id: parent.uri, author: { id: created.did, name: this.#accounts.get(agent)!.handle }, content: comment.content, created_at: created.createdAt };
  }

  async createPost(post: NewPost, opts: WriteOptions = {}): Promise<Post> {
    const content = post.title ? `${post.title}\n\n${post.content}` : post.content;
    const created = await this.#publish(post.agent, content, undefined, opts);
    return { id: created.uri, title: null, author: { id: created.did, name: this.#accounts.get(post.agent)!.handle }, content, community: null, created_at: created.createdAt };
  }

  /**
   * Text as one post, or a chain of replies when it is longer than 300 graphemes. Each part is written at most
   * once: its record key is chosen on the first attempt and kept (state.ts); a retry looks the record up by it
   * first, and a create the PDS refuses as already there is read back.
   */
  async #publish(agent: string, text: string, reply: { root: StrongRef; parent: StrongRef } | undefined, opts: WriteOptions): Promise<{ uri: string; cid: string; did: string; createdAt: string }> {
    const client = await this.session(agent);
    const did = this.#did(client);
    const parts = splitPost(text);
    if (parts.length === 0) throw new HubError({ method: 'XRPC', path: 'com.atproto.repo.createRecord', detail: 'empty post', retryable: false });
    let first: { uri: string; cid: string; createdAt: string } | undefined;
    let chain = reply;
    for (const [i, part] of parts.entries()) {
      const wkey = `${opts.idempotencyKey ?? `${agent}:${Date.now()}`}:${i}`;
      const rkey = await this.#state.rkeyOf(wkey, tidOf(this.#now() * 1000 + i, hashClock(wkey)));
      const written = await this.#writeOnce(agent, client, did, rkey, part, chain, opts.signal);
      first ??= written;
      const ref = { uri: written.uri, cid: written.cid };
      chain = { root: chain?.root ?? ref, parent: ref };
    }
    return { ...first!, did };
  }

  async #writeOnce(agent: string, client: AtpAgent, did: string, rkey: string, text: string, reply: { root: StrongRef; parent: StrongRef } | undefined, signal?: AbortSignal): Promise<{ uri: string; cid: string; createdAt: string }> {
    const existing = await this.#existing(agent, client, did, rkey, signal);
    if (existing) {
      this.#logger?.info({ agent, uri: existing.uri }, 'the post is already on Bluesky under its record key; not writing again');
      return existing;
    }
    const rt = new RichText({ text });
    await this.#call(agent, 'read', 'com.atproto.identity.resolveHandle', () => rt.detectFacets(client), { signal });
    let createdAt = '';
    try {
      const res = await this.#call(agent, 'write', 'com.atproto.repo.createRecord', () => {
        // Stamped when it is sent, after its pace.
        createdAt = new Date(this.#now()).toISOString();
        const record = { $type: POST, text: rt.text, createdAt, ...(rt.facets?.length ? { facets: rt.facets } : {}), ...(reply ? { reply } : {}) };
        return client.com.atproto.repo.createRecord({ repo: did, collection: POST, rkey, record }, { signal });
      }, { signal });
      return { uri: res.data.uri, cid: res.data.cid, createdAt };
    } catch (err) {
      // The PDS refuses a second record under the same key: an earlier attempt wrote it and its answer was lost.
      const again = await this.#existing(agent, client, did, rkey, signal).catch(() => undefined);
      if (again) return again;
      throw err;
    }
  }

  async #existing(agent: string, client: AtpAgent, did: string, rkey: string, signal?: AbortSignal): Promise<{ uri: string; cid: string; createdAt: string } | undefined> {
    try {
      const res = await this.#call(agent, 'read', 'com.atproto.repo.getRecord', () => client.com.atproto.repo.getRecord({ repo: did, collection: POST, rkey }, { signal }), { signal });
      const rec = (res.data.value ?? {}) as PostRecordShape;
      return { uri: res.data.uri, cid: res.data.cid ?? '', createdAt: rec.createdAt ?? new Date(this.#now()).toISOString() };
    } catch (err) {
      if (err instanceof HubError && (err.status === 400 || err.status === 404)) return undefined; // RecordNotFound
      throw err;
    }
  }

  // ---- the rest of the contract ----

  async health(signal?: AbortSignal): Promise<boolean> {
    try {
      const res = await fetch(`${this.baseUrl}/xrpc/_health`, { signal: signal ?? AbortSignal.timeout(5_000) });
      return res.ok;
    } catch {
      return false;
    }
  }

  async getAgent(nameOrId: string): Promise<Agent> {
    const account = this.#accounts.get(nameOrId);
    if (!account) throw new HubError({ method: '-', path: '-', status: 404, detail: `${nameOrId}: no Bluesky account configured`, retryable: false });
    const client = await this.session(nameOrId);
    return { id: this.#did(client), name: nameOrId, display_name: account.handle, type: 'native' };
  }

  async listAgents(): Promise<Agent[]> {
    return Promise.all([...this.#accounts.keys()].map((a) => this.getAgent(a)));
  }

  budgetHealth(agent: string): Promise<BudgetHealth> {
    return this.#budget.health(agent);
  }

  reportConsumption(report: ConsumptionReport, opts: WriteOptions = {}): Promise<void> {
    return this.#budget.record(report.agent, report.costUsd, opts.idempotencyKey);
  }

  markActivated(): Promise<void> {
    return Promise.resolve();
  }

  staleAgents(): Promise<StaleAgent[]> {
    return Promise.resolve([]);
  }

  listCommunities(): Promise<Community[]> {
    return Promise.resolve([]);
  }

  me(): Promise<Agent> {
    return Promise.reject(notOffered('a key of its own to the adapter (use getAgent with an agent name)'));
  }

  registerAgent(): Promise<RegisteredAgent> {
    return Promise.reject(notOffered('account registration (an owner creates each account and an app password)'));
  }

  regenerateKey(): Promise<KeyRotation> {
    return Promise.reject(notOffered('key rotation (app passwords are managed by the owner)'));
  }

  createCommunity(): Promise<Community> {
    return Promise.reject(notOffered('communities'));
  }
}

function toPost(p: PostView): Post {
  const rec = recordOf(p);
  return { id: p.uri, title: null, author: { id: p.author.did, name: p.author.handle }, content: rec.text ?? '', community: null, created_at: rec.createdAt ?? p.indexedAt, comment_count: p.replyCount };
}

/** A TID's clock id from the write's key: two writes picked in the same microsecond still get distinct keys. */
function hashClock(key: string): number {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) >>> 0;
  return h & 1023;
}
