// warren's HubAdapter on Moltbook's public API. Each agent acts with its own key; reads that name no agent use
// the key with the most room. Work is found on /home (per agent, paced) and in the comment trees of the posts
// it names; read state is per post on the hub, so warren keeps what it found and what it handled in Redis.
// Writes go through a ledger keyed by warren's idempotency key and never repeat a POST blindly.
import type { RedisClient } from '../../redis/scripts.ts';
import type { Logger } from 'pino';
import type {
  ConsumptionReport,
  DiscoverQuery,
  HubAdapter,
  HubCapabilities,
  NewComment,
  NewPost,
  NotificationPage,
  NotificationQuery,
  PostPage,
  PostQuery,
  SearchQuery,
  WriteOptions,
} from '../adapter.ts';
import { HubError } from '../errors.ts';
import type { FeedPost, FoundComment, HubSocial, SocialWrite } from '../social.ts';
import { sleep } from '../http.ts';
import { type Agent, type AgentWithWork, type BudgetHealth, type Comment, type Community, type KeyRotation, type Notification, type NotificationCount, type Post, type RegisteredAgent, type StaleAgent } from '../types.ts';
import type { BudgetConfig } from '../../local-hub/budget-rules.ts';
import { moltbookLedgerKey } from '../../policy/idempotency-keys.ts';
import { LocalBudgetLedger } from './budget-ledger.ts';
import { solveChallenge } from './challenge.ts';
import { challengeQuestion, parseModelAnswer, timeToAsk, type ChallengeModel } from './challenge-fallback.ts';
import { moltbookRequest, type MoltbookRequest } from './http.ts';
import { backoffDelayMs } from '../../policy/exponential-backoff.ts';
import { PaceAborted, PaceWaitTooLong, RequestPacer } from '../request-pacer.ts';
import { agentBucket, bucketOf429, bucketsOf, DEFAULT_RATE, hostBucket, type Rate, type RequestKind } from './buckets.ts';
import { contentHash, MoltbookState, type LedgerEntry } from './state.ts';
import { invalidComment, invalidPost } from './write-checks.ts';
import { isConversation, MoltbookDirectMessages } from './direct-messages.ts';
import { createdAtOf, flattenComments, HomeSchema, pageInfoOf, toPost, unwrapMoltbookList, unwrapMoltbookObject, verificationOf, WireCommentSchema, WirePostSchema, type Home, type Verification, type WireComment } from './wire.ts';
import { mentionId, mentionsIn, notificationId, postOfNotification, workOnThread } from './work.ts';
import { commentsLeft, DEFAULT_AGE_LIMITS, limitsForAge, writeVerdict, type AgeLimits, type WriteLimits } from './write-limits.ts';
import type { KeySpace } from '../../redis/key-layout.ts';

export const MOLTBOOK_CAPABILITIES: HubCapabilities = {
  longPoll: false,
  budget: false,
  idempotencyKeys: false,
  registration: false,
  errorPosts: false,
  social: ['vote', 'follow', 'feed', 'subscribe', 'search_comments', 'direct_messages'],
};

/** A challenge the solver would not answer, or answered wrongly: the content is not published. */
export class MoltbookChallengeError extends HubError {
  readonly challenge: string;
  readonly consecutiveFailures: number;
  constructor(agent: string, challenge: string, why: string, consecutiveFailures: number) {
    super({ method: 'POST', path: '/verify', detail: `${agent}: verification challenge not passed (${why}); ${consecutiveFailures} in a row`, retryable: false });
    this.challenge = challenge;
    this.consecutiveFailures = consecutiveFailures;
  }
}

export interface MoltbookAdapterOptions {
  /** e.g. https://www.moltbook.com/api/v1 */
  baseUrl: string;
  /**
   * Agent name → its key. A function is asked again at each use: a key rotated in its secret file is used from the
   * next `warren reload` (the daemon reads secret files again then), without a restart.
   */
  keys: ReadonlyMap<string, string> | (() => ReadonlyMap<string, string>);
  redis: RedisClient;
  prefix: KeySpace;
  logger?: Logger;
  /** How often each agent's /home is read for work (jittered ±20 %). */
  homeIntervalMs?: number;
  /** The pace of each agent's key. */
  bucket?: Rate;
  /** The pace of all agents together on the API's host (`hub.requests_per_minute_per_host`); absent: not paced as a whole. */
  hostBucket?: Rate;
  /** The longest a call waits for its key's pace or a 429's retry-after; a longer wait fails with it instead. */
  maxWaitMs?: number;
  now?: () => number;
  random?: () => number;
  /** warren.yaml's `budget:` (services/config.ts hubBudget): Moltbook has no budget endpoint, so it is kept here. */
  budget?: BudgetConfig;
  /** The communities whose new posts are searched for `@agent` mentions (the agent's interests.communities). */
  communities?: (agent: string) => readonly string[];
  /** The agent's own model, asked for the number when the solver is unsure (absent: unsure is not answered). */
  askModel?: ChallengeModel;
  /** Moltbook's posting limits (default: the published ones). */
  writeLimits?: AgeLimits;
  /** An agent only its operator can help (key refused, challenges failing): the daemon pauses it. */
  onNeedsOperator?: (agent: string, why: string) => Promise<void> | void;
}

/** A request not sent because its pace asked for a longer wait than the caller allows (a poll allows none). */
export class HeldBackLocally extends HubError {}

/** Moltbook suspends an agent after ten failed challenges in a row; warren stops it well before. */
export const CHALLENGE_FAILURES_BEFORE_PAUSE = 3;

/** Communities searched for mentions per /home round: a bound on the requests a key spends on it. */
const MENTION_COMMUNITIES = 3;

/** The most comments Moltbook answers in one page (the open-source server's default; production caps at it too). */
const COMMENT_PAGE = 100;
/** Pages of comments read at most for one thread (a thread of thousands is read in part, said in the log). */
const MAX_COMMENT_PAGES = 10;
/** One read of a server that does not page comments (it repeats the first page): the open-source server's cap. */
const UNPAGED_COMMENTS = 500;
/** How long an agent's DMs are not asked for after the server said it has none (404). */
const NO_DMS_RECHECK_MS = 60 * 60_000;
/** A thread marked read that cannot be read again for this long is given up (it wakes its agent until then). */
const THREAD_RECHECK_GIVE_UP_MS = 86_400_000;
/** The longest wait before a failing /home is read again. */
const HOME_BACKOFF_CAP_MS = 15 * 60_000;

interface CachedHome {
  home: Home;
  count: number;
  nextAt: number;
}

const notOffered = (what: string): HubError => new HubError({ method: '-', path: what, detail: `Moltbook does not offer ${what} to agents`, retryable: false });

export class MoltbookAdapter implements HubAdapter, HubSocial {
  readonly baseUrl: string;
  readonly capabilities = MOLTBOOK_CAPABILITIES;
  readonly social: HubSocial = this;
  readonly #keySource: () => ReadonlyMap<string, string>;
  /** The keys last seen, to notice a rotated, added or removed key once. */
  #lastKeys: ReadonlyMap<string, string> = new Map();
  readonly #state: MoltbookState;
  readonly #pacer: RequestPacer;
  readonly #bucket: Rate;
  readonly #hostBucket: Rate | undefined;
  readonly #host: string;
  readonly #logger: Logger | undefined;
  readonly #homeIntervalMs: number;
  readonly #maxWaitMs: number;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #homes = new Map<string, CachedHome>();
  /** Agents whose /home failed: how often in a row, and not before when it is read again. */
  readonly #homeFailures = new Map<string, { failures: number; nextAt: number }>();
  /** The server repeated its first page of comments when asked for the next: it has no paging (read wide). */
  #commentsUnpaged = false;
  /** Agents whose server answered 404 for DMs: not asked again before then. */
  readonly #noDmsUntil = new Map<string, number>();
  /** When each agent's communities are next searched for mentions (on their own schedule, whatever /home does). */
  readonly #mentionsNextAt = new Map<string, number>();
  readonly #postAuthors = new Map<string, string>();
  /** Agents whose key was refused (401): not polled again, their operator must act. */
  readonly #refused = new Set<string>();
  readonly #onNeedsOperator: MoltbookAdapterOptions['onNeedsOperator'];
  readonly #budget: LocalBudgetLedger;
  /** Each agent's creation time from /agents/me (undefined: not known, the stricter limits apply). */
  readonly #createdAt = new Map<string, number | undefined>();
  readonly #writeLimits: AgeLimits;
  readonly #askModel: ChallengeModel | undefined;
  readonly #communities: (agent: string) => readonly string[];
  readonly #dms: MoltbookDirectMessages;

  constructor(opts: MoltbookAdapterOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    const keys = opts.keys;
    this.#keySource = typeof keys === 'function' ? keys : () => keys;
    this.#lastKeys = this.#keySource();
    this.#state = new MoltbookState(opts.redis, opts.prefix);
    this.#bucket = opts.bucket ?? DEFAULT_RATE;
    this.#hostBucket = opts.hostBucket;
    this.#host = new URL(this.baseUrl).host;
    this.#logger = opts.logger;
    this.#homeIntervalMs = opts.homeIntervalMs ?? 60_000;
    this.#maxWaitMs = opts.maxWaitMs ?? 30_000;
    this.#now = opts.now ?? Date.now;
    this.#pacer = new RequestPacer(opts.redis, opts.prefix, this.#now);
    this.#random = opts.random ?? Math.random;
    this.#onNeedsOperator = opts.onNeedsOperator;
    this.#writeLimits = opts.writeLimits ?? DEFAULT_AGE_LIMITS;
    this.#askModel = opts.askModel;
    this.#communities = opts.communities ?? (() => []);
    this.#dms = new MoltbookDirectMessages((agent, r, poll) => this.#call(agent, 'read', r, undefined, poll), this.#state);
    this.#budget = new LocalBudgetLedger(opts.redis, opts.prefix, opts.budget ?? {}, this.#now);
  }

  async #needsOperator(agent: string, why: string): Promise<void> {
    this.#logger?.error({ agent }, `${agent} needs its operator and is paused: ${why}; \`warren resume ${agent}\` once it is fixed`);
    await Promise.resolve(this.#onNeedsOperator?.(agent, why)).catch((err: unknown) => this.#logger?.warn({ agent, err }, 'could not pause the agent'));
  }

  /** Counts a failed challenge; at CHALLENGE_FAILURES_BEFORE_PAUSE in a row the agent is paused. */
  async #challengeFailed(agent: string): Promise<number> {
    const n = await this.#state.challengeFailed(agent);
    if (n >= CHALLENGE_FAILURES_BEFORE_PAUSE) await this.#needsOperator(agent, `${n} verification challenges in a row not passed (Moltbook suspends an agent after 10)`);
    return n;
  }

  /** The keys now; a key that changed since the last use starts afresh (a key refused before may work now). */
  get #keys(): ReadonlyMap<string, string> {
    const now = this.#keySource();
    if (now === this.#lastKeys) return now;
    for (const [agent, key] of now) {
      const before = this.#lastKeys.get(agent);
      if (before === key) continue;
      this.#refused.delete(agent);
      this.#createdAt.delete(agent);
      this.#homes.delete(agent);
      this.#homeFailures.delete(agent);
      this.#logger?.info({ agent }, before === undefined ? `${agent}: a Moltbook key is set; the agent is run` : `${agent}: a new Moltbook key is in use (if the agent was paused for its old key: \`warren resume ${agent}\`)`);
    }
    for (const agent of this.#lastKeys.keys()) if (!now.has(agent)) this.#logger?.warn({ agent }, `${agent}: its Moltbook key is gone; the agent is not run`);
    this.#lastKeys = now;
    return now;
  }

  actsAs(agent: string): boolean {
    return this.#keys.has(agent) && !this.#refused.has(agent);
  }

  // ---- requests ----

  #keyOf(agent: string): string {
    const key = this.#keys.get(agent);
    if (!key) throw new HubError({ method: '-', path: '-', detail: `agent ${agent} has no Moltbook key (hub.agents.${agent}.api_key_env)`, retryable: false });
    return key;
  }

  /** For reads that name no agent: the key with the most room. */
  async #readKey(): Promise<{ agent: string; key: string }> {
    let best: { agent: string; key: string; room: number } | undefined;
    for (const [agent, key] of this.#keys) {
      if (this.#refused.has(agent)) continue;
      const room = await this.#pacer.available({ key: agentBucket(agent), ...this.#bucket });
      if (!best || room > best.room) best = { agent, key, room };
    }
    if (!best) throw new HubError({ method: '-', path: '-', detail: 'no usable Moltbook key configured (hub.agents)', retryable: false });
    return best;
  }

  /** Whether a poll may spend a request now: it yields to work once the agent's or the host's bucket is half used. */
  async #mayPoll(agent: string): Promise<boolean> {
    if ((await this.#pacer.available({ key: agentBucket(agent), ...this.#bucket })) < this.#bucket.burst / 2) return false;
    return !this.#hostBucket || (await this.#pacer.available({ key: hostBucket(this.#host), ...this.#hostBucket })) >= this.#hostBucket.burst / 2;
  }

  /** One request, paced; a poll (`poll`) never waits for its pace: it is skipped, and work keeps the allowance. */
  async #call(agent: string, kind: RequestKind, r: Omit<MoltbookRequest, 'key'>, key = this.#keyOf(agent), poll = false): Promise<unknown> {
    const scope = { agent, kind, host: this.#host, keyRate: this.#bucket, hostRate: this.#hostBucket };
    try {
      await this.#pacer.take(bucketsOf(scope), { maxWaitMs: poll ? 0 : this.#maxWaitMs, signal: r.signal });
    } catch (err) {
      if (err instanceof PaceWaitTooLong) throw new HeldBackLocally({ method: r.method, path: r.path, status: 429, detail: `${agent}: held back locally for ${Math.ceil(err.waitMs / 1000)} s (rate limit)`, retryable: true, retryAfterMs: err.waitMs });
      if (err instanceof PaceAborted) throw new HubError({ method: r.method, path: r.path, detail: 'aborted', retryable: false });
      throw err;
    }
    try {
      return await moltbookRequest(this.baseUrl, { ...r, key });
    } catch (err) {
      if (err instanceof HubError && err.status === 429) {
        const ms = err.retryAfterMs ?? 60_000;
        const bucket = bucketOf429(scope);
        await this.#pacer.penalise(bucket, this.#now() + ms);
        this.#logger?.warn({ agent, path: r.path, retryAfterMs: ms, held: bucket }, `Moltbook rate limit: holding ${bucket === hostBucket(this.#host) ? 'every agent on this host' : 'this key'} back`);
      }
      // Only for the key in use now: a request sent with a key since rotated says nothing of the new one.
      if (err instanceof HubError && err.status === 401 && !this.#refused.has(agent) && this.#keys.get(agent) === key) {
        this.#refused.add(agent);
        await this.#needsOperator(agent, `Moltbook refused its key (401 on ${r.path}); it needs a valid key from its owner, then \`warren reload\` (a key in a file) or a restart (a key in a variable), and \`warren resume\``);
      }
      throw err;
    }
  }

  // ---- work discovery ----

  async #home(agent: string, signal?: AbortSignal, poll = false): Promise<CachedHome> {
    let body: unknown;
    try {
      body = await this.#call(agent, 'read', { method: 'GET', path: '/home', signal }, undefined, poll);
    } catch (err) {
      if (!(err instanceof HeldBackLocally)) this.#homeFailed(agent);
      throw err;
    }
    this.#homeFailures.delete(agent);
    const parsed = HomeSchema.safeParse(body);
    const home: Home = parsed.success ? parsed.data : { your_account: undefined, activity_on_your_posts: [] };
    const fromPosts = home.activity_on_your_posts.reduce((s, a) => s + (a.new_notification_count ?? 0), 0);
    const jitter = 0.8 + this.#random() * 0.4;
    const cached = { home, count: Math.max(fromPosts, home.your_account?.unread_notification_count ?? 0), nextAt: this.#now() + this.#homeIntervalMs * jitter };
    this.#homes.set(agent, cached);
    return cached;
  }

  /** A failed /home is read again after a growing wait, never sooner than home_interval (it once was every poll). */
  #homeFailed(agent: string): void {
    const failures = (this.#homeFailures.get(agent)?.failures ?? 0) + 1;
    const waitMs = backoffDelayMs({ baseMs: 2 * this.#homeIntervalMs, factor: 2, capMs: Math.max(2 * this.#homeIntervalMs, HOME_BACKOFF_CAP_MS), jitter: 'equal' }, failures, this.#random);
    this.#homeFailures.set(agent, { failures, nextAt: this.#now() + waitMs });
    this.#homes.delete(agent); // a count from before the failure would wake the agent for work nobody can list
  }

  /** Whether /home may be read now: not while a failure's wait runs. */
  #homeMayBeRead(agent: string): boolean {
    return (this.#homeFailures.get(agent)?.nextAt ?? 0) <= this.#now();
  }

  async #thread(agent: string, postId: string, signal?: AbortSignal, enough?: (comments: readonly Comment[]) => Promise<boolean>): Promise<{ author: string | undefined; comments: Comment[] }> {
    let author = this.#postAuthors.get(postId);
    if (author === undefined) {
      author = (await this.#getPost(agent, postId, signal)).author.name;
      this.#postAuthors.set(postId, author);
    }
    return { author, comments: await this.#comments(agent, postId, { signal, enough }) };
  }

  async #getPost(agent: string, postId: string, signal?: AbortSignal, key?: string): Promise<Post> {
    const path = `/posts/${encodeURIComponent(postId)}`;
    const body = await this.#call(agent, 'read', { method: 'GET', path, signal }, key);
    const parsed = WirePostSchema.safeParse(unwrapMoltbookObject(body, ['post']));
    if (!parsed.success) throw new HubError({ method: 'GET', path, detail: 'unexpected post shape', retryable: false });
    return toPost(parsed.data);
  }

  /**
   * A post's comments, page by page: Moltbook answers at most COMMENT_PAGE of them, shallowest first, so a new
   * reply deep in a long thread is on a later page. Pages are read until `enough` is satisfied, the server says
   * there are no more (or repeats a page: a server without paging), or MAX_COMMENT_PAGES.
   */
  async #comments(agent: string, postId: string, opts: { signal?: AbortSignal; key?: string; enough?: (comments: readonly Comment[]) => Promise<boolean> } = {}): Promise<Comment[]> {
    const path = `/posts/${encodeURIComponent(postId)}/comments`;
    const all: Comment[] = [];
    const seen = new Set<string>();
    const read = async (query: Record<string, string | number>): Promise<{ body: unknown; rows: Comment[]; fresh: Comment[] }> => {
      const body = await this.#call(agent, 'read', { method: 'GET', path, query, signal: opts.signal }, opts.key);
      const tree: WireComment[] = [];
      for (const item of unwrapMoltbookList(body, ['comments']) ?? []) {
        const c = WireCommentSchema.safeParse(item);
        if (c.success) tree.push(c.data);
      }
      const rows = flattenComments(tree, postId);
      const fresh = rows.filter((c) => !seen.has(c.id));
      for (const c of fresh) {
        seen.add(c.id);
        all.push(c);
      }
      return { body, rows, fresh };
    };
    const wideRead = async (): Promise<Comment[]> => {
      const wide = await read({ sort: 'new', limit: UNPAGED_COMMENTS });
      if (wide.rows.length >= UNPAGED_COMMENTS) this.#logger?.warn({ agent, post: postId, comments: all.length }, `a thread of more than ${UNPAGED_COMMENTS} comments on a server that does not page them: only the first are read`);
      return all;
    };
    if (this.#commentsUnpaged) return wideRead();
    let offset = 0;
    let cursor: string | undefined;
    for (let page = 1; page <= MAX_COMMENT_PAGES; page++) {
      const { body, rows, fresh } = await read({ sort: 'new', limit: COMMENT_PAGE, ...(cursor ? { cursor } : { offset }) });
      if (page > 1 && fresh.length === 0 && rows.length >= COMMENT_PAGE) {
        // The first page again: the server does not page comments (the open-source server ignores offset and
        // cursor, and answers up to 500 at once). A wide read instead, or a deep reply is never seen; from now on
        // only that one read per thread.
        this.#commentsUnpaged = true;
        this.#logger?.info({ post: postId }, `this Moltbook server does not page comments; threads are read ${UNPAGED_COMMENTS} at once from now on`);
        return wideRead();
      }
      const next = pageInfoOf(body);
      if (fresh.length === 0 || rows.length < COMMENT_PAGE || next.hasMore === false || (opts.enough && (await opts.enough(all)))) break;
      if (page === MAX_COMMENT_PAGES) this.#logger?.warn({ agent, post: postId, comments: all.length }, `a thread of more than ${MAX_COMMENT_PAGES} pages of comments: only the first are read`);
      cursor = next.nextCursor;
      offset += rows.length;
    }
    return all;
  }

  async agentsWithNotifications(signal?: AbortSignal): Promise<AgentWithWork[]> {
    const agents = [...this.#keys.keys()].filter((a) => !this.#refused.has(a));
    const counts = await Promise.all(agents.map((agent) => this.#workCount(agent, signal)));
    return agents.flatMap((name, i) => (counts[i]! > 0 ? [{ id: name, name, notification_count: counts[i]! }] : []));
  }

  /**
   * An agent's work: comments /home counts and the mentions found in its communities. The two are read on their
   * own schedules (every home_interval; a failing /home backs off alone), so one failing endpoint blinds neither
   * path to the other. Polls yield to work: with half a bucket used, the last answer is kept a while longer.
   */
  async #workCount(agent: string, signal?: AbortSignal): Promise<number> {
    const now = this.#now();
    let home = this.#homes.get(agent);
    const homeDue = (!home || home.nextAt <= now) && this.#homeMayBeRead(agent);
    // The first read of an agent's home is never put off: until then its work is not known at all.
    if (homeDue && (!home || (await this.#mayPoll(agent)))) {
      try {
        home = await this.#home(agent, signal, true);
      } catch (err) {
        if (err instanceof HeldBackLocally) return (home?.count ?? 0) + (await this.#state.workCount(agent)); // the bucket is work's now
        const retryInMs = (this.#homeFailures.get(agent)?.nextAt ?? now) - now;
        this.#logger?.warn({ agent, err, retryInMs }, 'could not read the agent\'s Moltbook home; its mentions are still looked for');
        home = undefined;
      }
    }
    if ((this.#mentionsNextAt.get(agent) ?? 0) <= now && (!this.#mentionsNextAt.has(agent) || (await this.#mayPoll(agent)))) {
      this.#mentionsNextAt.set(agent, now + this.#homeIntervalMs * (0.8 + this.#random() * 0.4));
      await this.#scanMentions(agent, signal);
      if ((this.#noDmsUntil.get(agent) ?? 0) <= now) {
        try {
          await this.#dms.scan(agent, signal);
          this.#noDmsUntil.delete(agent);
        } catch (err) {
          if (err instanceof HubError && err.status === 404) {
            // No DM endpoints on this server (the open-source one has none): not asked at every round.
            this.#noDmsUntil.set(agent, now + NO_DMS_RECHECK_MS);
            this.#logger?.info({ agent, path: err.path }, `this Moltbook server has no direct messages (404); asked again in ${NO_DMS_RECHECK_MS / 60_000} minutes`);
          } else if (!(err instanceof HeldBackLocally)) this.#logger?.warn({ agent, err }, 'could not look for direct messages');
        }
      }
    }
    try {
      return (home?.count ?? 0) + (await this.#state.workCount(agent));
    } catch (err) {
      this.#logger?.warn({ agent, err }, 'could not count the agent\'s pending Moltbook work');
      return 0;
    }
  }

  /** New posts in the agent's communities (at most MENTION_COMMUNITIES of them) naming `@agent` become pending mentions. */
  async #scanMentions(agent: string, signal?: AbortSignal): Promise<void> {
    const communities = this.#communities(agent).slice(0, MENTION_COMMUNITIES);
    for (const community of communities) {
      try {
        const posts = await this.#posts(agent, { sort: 'new', limit: 25, submolt: community.replace(/^m\//, '') }, signal, undefined, true);
        const handled = await this.#state.handled(agent, posts.map((p) => mentionId(p.id)));
        await this.#state.addPending(agent, mentionsIn({ agent, posts, handled }));
      } catch (err) {
        if (err instanceof HeldBackLocally) return; // the next round looks again
        this.#logger?.warn({ agent, community, err }, 'could not look for mentions');
      }
    }
  }

  pollAgentsWithWork(): Promise<AgentWithWork[]> {
    return Promise.reject(new HubError({ method: 'GET', path: '/notifications/poll', status: 404, detail: 'Moltbook has no long-poll', retryable: false }));
  }

  async listNotifications(agent: string, opts: NotificationQuery = {}): Promise<NotificationPage> {
    const rechecks = await this.#state.rechecks(agent, this.#now());
    for (const post of rechecks.expired) this.#logger?.warn({ agent, post }, `a thread marked read could not be read again for ${THREAD_RECHECK_GIVE_UP_MS / 3_600_000} h; a comment written just before its mark may be missed`);
    for (const [postId, since] of rechecks.due) await this.#recheck(agent, postId, since, opts.signal);
    const pending = await this.#state.pending(agent);
    let home: Home | undefined;
    try {
      if (!this.#homeMayBeRead(agent)) throw new HubError({ method: 'GET', path: '/home', detail: 'failing lately; waiting before reading it again', retryable: true });
      home = (await this.#home(agent, opts.signal)).home;
    } catch (err) {
      // The mentions found meanwhile are answered all the same; with nothing pending the failure is the answer.
      if (pending.length === 0 || (err instanceof HubError && err.status === 401)) throw err;
      this.#logger?.warn({ agent, err }, 'could not read the agent\'s Moltbook home; answering the work found elsewhere');
    }
    for (const activity of home?.activity_on_your_posts ?? []) {
      const postId = activity.post_id;
      const fresh = activity.new_notification_count ?? 1;
      if (fresh <= 0) continue;
      // Paged until as many unanswered replies to the agent are found as /home counts new.
      const enough = async (cs: readonly Comment[]): Promise<boolean> => (await this.#unanswered(agent, postId, this.#postAuthors.get(postId), cs, fresh)).length >= fresh;
      const { author, comments } = await this.#thread(agent, postId, opts.signal, enough);
      const work = await this.#unanswered(agent, postId, author, comments, fresh);
      await this.#state.addPending(agent, work);
      if (work.length === 0 && !pending.some((n) => n.post_id === postId)) {
        // Nothing on it warren answers (e.g. a vote): read on the hub, or it would wake the agent for ever.
        const newest = Math.max(0, ...comments.map((c) => Date.parse(c.created_at) || 0));
        await this.#markPostRead(agent, postId, newest, opts.signal);
      }
    }
    const all = await this.#state.pending(agent);
    return { notifications: all.slice(0, opts.limit ?? 50), skipped: [], nextCursor: null, unreadCount: all.length };
  }

  async markRead(agent: string, notificationIds: readonly string[], opts: WriteOptions = {}): Promise<number> {
    if (notificationIds.length === 0) return 0;
    const before = new Map((await this.#state.pending(agent)).map((n) => [n.id, n]));
    await this.#state.markHandled(agent, notificationIds);
    this.#homes.delete(agent);
    const left = await this.#state.pending(agent);
    // A DM conversation was marked read on Moltbook when it was read, and a mention is warren's own find in a post
    // (no notification on the hub): only the threads of reply notifications have read state to set.
    const replyIds = notificationIds.filter((id) => { const p = postOfNotification(id); return p !== undefined && !isConversation(p) && id !== mentionId(p); });
    const posts = new Set(replyIds.flatMap((id) => postOfNotification(id) ?? []));
    for (const postId of posts) {
      if (left.some((n) => n.post_id === postId)) continue;
      const since = Math.min(...notificationIds.filter((id) => postOfNotification(id) === postId).map((id) => Date.parse(before.get(id)?.created_at ?? '') || 0));
      await this.#markPostRead(agent, postId, since, opts.signal);
    }
    return notificationIds.length;
  }

  /**
   * Marks a post read on the hub. Moltbook marks every comment on it at once, so a comment written after warren last
   * read the thread would be read unseen: the thread is read again after the mark and what came is kept pending.
   * The intent is in Redis before the mark, so a read that fails (or a daemon that dies) leaves it for the next run.
   */
  async #markPostRead(agent: string, postId: string, since: number, signal?: AbortSignal): Promise<void> {
    const from = await this.#state.recheckLater(agent, postId, since, this.#now() + THREAD_RECHECK_GIVE_UP_MS);
    try {
      await this.#call(agent, 'read', { method: 'POST', path: `/notifications/read-by-post/${encodeURIComponent(postId)}`, signal });
    } catch (err) {
      // Handled is kept in Redis all the same; a server without read state (404) only keeps counting the post.
      if (!(err instanceof HubError && err.status === 404)) throw err;
      this.#logger?.info({ agent, post: postId }, 'this Moltbook server keeps no read state (404 on read-by-post); what was handled is kept by warren');
      await this.#state.recheckDone(agent, postId); // nothing was marked read: the hub still counts what comes
      return;
    }
    await this.#recheck(agent, postId, from, signal);
  }

  /** Which of a thread's `comments` answer the agent and are not handled yet, newest `limit` of them, as notifications. */
  async #unanswered(agent: string, postId: string, postAuthor: string | undefined, comments: readonly Comment[], limit: number): Promise<Notification[]> {
    const handled = await this.#state.handled(agent, comments.map((c) => notificationId(postId, c.id)));
    return workOnThread({ agent, postId, postAuthor, comments, handled, limit });
  }

  /** Reads a thread marked read again: its unhandled comments from `since` on become pending, then the intent is done. */
  async #recheck(agent: string, postId: string, since: number, signal?: AbortSignal): Promise<void> {
    try {
      const { author, comments } = await this.#thread(agent, postId, signal);
      const arrived = comments.filter((c) => (Date.parse(c.created_at) || 0) >= since);
      await this.#state.addPending(agent, await this.#unanswered(agent, postId, author, arrived, Number.MAX_SAFE_INTEGER));
    } catch (err) {
      // The hub's refusal (a deleted post: 404; 403, 410…) is final; a failure that may pass (a 5xx, a 429, the local
      // pace, the network) is tried again at the agent's next run, until the intent's deadline.
      const final = err instanceof HubError && err.status !== undefined && err.status >= 400 && err.status < 500 && err.status !== 429;
      if (!final) {
        this.#logger?.warn({ agent, post: postId, err }, 'could not read a thread again after marking it read; it is read at the agent\'s next run');
        return;
      }
      if (err.status !== 404) this.#logger?.warn({ agent, post: postId, err }, 'the hub refused to read a thread again after marking it read; a comment written just before its mark may be missed');
    }
    await this.#state.recheckDone(agent, postId);
  }

  async markAllRead(agent: string, opts: WriteOptions = {}): Promise<number> {
    const pending = await this.#state.pending(agent);
    await this.#state.markHandled(agent, pending.map((n) => n.id));
    await this.#call(agent, 'read', { method: 'POST', path: '/notifications/read-all', signal: opts.signal });
    this.#homes.delete(agent);
    return pending.length;
  }

  async notificationCount(agent: string, signal?: AbortSignal): Promise<NotificationCount> {
    const { count } = await this.#home(agent, signal);
    const n = count + (await this.#state.workCount(agent));
    return { unread: n, total: n };
  }

  // ---- writes ----

  async createComment(comment: NewComment, opts: WriteOptions = {}): Promise<Comment> {
    const { agent, postId, content } = comment;
    invalidComment(content, agent, postId);
    if (isConversation(postId)) return this.#dms.send(agent, postId, content, comment.parentId ?? null, opts.idempotencyKey ?? moltbookLedgerKey(agent, postId, contentHash(content)), opts.signal);
    const hash = contentHash(content);
    const wkey = opts.idempotencyKey ?? moltbookLedgerKey(agent, postId, hash);
    const parentId = comment.parentId ?? null;
    // The write's identity is its post and parent (and, in the ledger, its idempotency key): the same answer to
    // another comment of the thread is another write, never a duplicate of this one.
    const isMine = (c: Comment): boolean => c.author.name === agent && (c.parent_id ?? null) === parentId && contentHash(c.content) === hash;
    const mine = async (): Promise<Comment | undefined> => (await this.#comments(agent, postId, { signal: opts.signal, enough: (cs) => Promise.resolve(cs.some(isMine)) })).find(isMine);
    return this.#write<Comment>(agent, 'comment', wkey, { agent, kind: 'comment', postId, contentHash: hash }, mine, {
      method: 'POST',
      path: `/posts/${encodeURIComponent(postId)}/comments`,
      body: { content, ...(comment.parentId ? { parent_id: comment.parentId } : {}) },
      signal: opts.signal,
    }, (body) => {
      const c = WireCommentSchema.safeParse(unwrapMoltbookObject(body, ['comment']));
      if (!c.success) throw new HubError({ method: 'POST', path: `/posts/${postId}/comments`, detail: 'unexpected comment shape', retryable: false });
      return flattenComments([{ ...c.data, replies: [] }], postId, comment.parentId ?? null)[0]!;
    });
  }

  async createPost(post: NewPost, opts: WriteOptions = {}): Promise<Post> {
    const submolt = (post.community ?? 'general').replace(/^m\//, '');
    const title = post.title?.trim() || post.content.split('\n')[0]!.slice(0, 120) || 'untitled';
    // Moltbook's limiter runs before its validation: a post it refuses still costs the 30 minutes. Checked here first.
    invalidPost({ submolt, title, content: post.content }, post.agent);
    const hash = contentHash(`${title}\n${post.content}`);
    const wkey = opts.idempotencyKey ?? moltbookLedgerKey(post.agent, 'post', hash);
    const mine = async (): Promise<Post | undefined> => {
      const body = await this.#call(post.agent, 'read', { method: 'GET', path: '/posts', query: { sort: 'new', submolt, limit: 50 }, signal: opts.signal });
      const posts = (unwrapMoltbookList(body, ['posts']) ?? []).flatMap((p) => {
        const w = WirePostSchema.safeParse(p);
        return w.success ? [toPost(w.data)] : [];
      });
      return posts.find((p) => p.author.name === post.agent && contentHash(`${p.title ?? ''}\n${p.content}`) === hash);
    };
    return this.#write<Post>(post.agent, 'post', wkey, { agent: post.agent, kind: 'post', contentHash: hash }, mine, {
      method: 'POST',
      path: '/posts',
      // Both names clients send: the published API reads `submolt_name`, the open-source server `submolt`.
      body: { submolt_name: submolt, submolt, title, content: post.content },
      signal: opts.signal,
    }, (body) => {
      const p = WirePostSchema.safeParse(unwrapMoltbookObject(body, ['post']));
      if (!p.success) throw new HubError({ method: 'POST', path: '/posts', detail: 'unexpected post shape', retryable: false });
      return toPost(p.data);
    });
  }

  /**
   * One write, at most once: a finished write is answered from the ledger; before any POST the thread is looked
   * at for the agent's own text (an earlier attempt whose answer was lost, or the same text from elsewhere);
   * a POST that may have happened (5xx, cut connection) is left as `sending` and never repeated blindly.
   */
  async #write<T extends { id: string }>(agent: string, kind: 'comment' | 'post', wkey: string, entry: Omit<LedgerEntry, 'state'>, findMine: () => Promise<T | undefined>, req: Omit<MoltbookRequest, 'key'>, parse: (body: unknown) => T): Promise<T> {
    const prior = await this.#state.ledger(wkey);
    if (prior?.state === 'unverified' && prior.verificationCode && prior.challenge && prior.id) {
      const still = !prior.expiresAt || Date.parse(prior.expiresAt) > this.#now();
      if (still) {
        await this.#verify(agent, wkey, { ...entry, ...prior }, { verification_code: prior.verificationCode, challenge_text: prior.challenge, expires_at: prior.expiresAt });
        const found = await findMine();
        if (found) return found;
      }
    }
    const existing = await findMine();
    if (existing) {
      await this.#state.setLedger(wkey, { ...entry, state: 'done', id: existing.id });
      if (entry.postId) await this.#state.markAnswered(agent, entry.postId);
      if (prior?.state !== 'done') this.#logger?.info({ agent, kind, id: existing.id, post: entry.postId, key: wkey }, `the write is already on Moltbook as ${kind} ${existing.id}; not writing again`);
      return existing;
    }
    const day = await this.#admit(agent, kind, req.signal);
    await this.#state.setLedger(wkey, { ...entry, state: 'sending' });
    let body: unknown;
    try {
      body = await this.#call(agent, kind, req);
    } catch (err) {
      // Refused by the hub (4xx, 429): nothing was created, a later attempt may write. Otherwise it may have been.
      if (err instanceof HubError && err.status !== undefined && err.status < 500) {
        await this.#state.forgetLedger(wkey);
        await this.#state.releaseWrite(agent, kind, day);
      }
      throw err;
    }
    const created = parse(body);
    const verification = verificationOf(body, [kind]);
    if (verification) {
      const unverified: LedgerEntry = { ...entry, state: 'unverified', id: created.id, verificationCode: verification.verification_code, challenge: verification.challenge_text, ...(verification.expires_at ? { expiresAt: verification.expires_at } : {}) };
      await this.#state.setLedger(wkey, unverified);
      await this.#verify(agent, wkey, unverified, verification);
    } else {
      await this.#state.setLedger(wkey, { ...entry, state: 'done', id: created.id });
    }
    if (entry.postId) await this.#state.markAnswered(agent, entry.postId); // published: exploration leaves the post alone
    return created;
  }

  async #limitsOf(agent: string, signal?: AbortSignal): Promise<WriteLimits> {
    if (!this.#createdAt.has(agent)) {
      try {
        const body = await this.#call(agent, 'read', { method: 'GET', path: '/agents/me', signal });
        const ms = createdAtOf(unwrapMoltbookObject(body, ['agent']));
        this.#createdAt.set(agent, ms);
        const limits = limitsForAge(ms, this.#now(), this.#writeLimits);
        const tier = limits === this.#writeLimits.established ? 'established' : 'new';
        this.#logger?.info({ agent, tier, createdAt: ms === undefined ? null : new Date(ms).toISOString(), commentsPerDay: limits.commentsPerDay },
          ms === undefined ? `${agent}: /agents/me names no creation time; Moltbook's limits for new agents apply` : `${agent}: Moltbook's posting limits for ${tier === 'new' ? 'agents younger than 24 h' : 'established agents'} apply`);
      } catch (err) {
        this.#logger?.warn({ agent, err }, 'could not read the agent\'s age from /agents/me; the limits for new agents apply');
        return limitsForAge(undefined, this.#now(), this.#writeLimits);
      }
    }
    return limitsForAge(this.#createdAt.get(agent), this.#now(), this.#writeLimits);
  }

  /**
   * Moltbook's posting limits, locally: waits out a cooldown up to maxWaitMs, else fails with it (retryable,
   * with the time to wait); a comment over the day's cap is refused until the next UTC day. Returns the day
   * the write was counted in.
   */
  async #admit(agent: string, kind: 'post' | 'comment', signal?: AbortSignal): Promise<string> {
    const limits = await this.#limitsOf(agent, signal);
    const path = kind === 'post' ? '/posts' : '/posts/-/comments';
    for (;;) {
      const now = this.#now();
      const day = new Date(now).toISOString().slice(0, 10);
      const verdict = writeVerdict(kind, await this.#state.writeHistory(agent, day), limits, now);
      if (verdict.kind === 'capped') {
        throw new HubError({ method: 'POST', path, status: 429, detail: `${agent}: ${limits.commentsPerDay} comments today already (Moltbook's daily cap)`, retryable: true, retryAfterMs: verdict.untilMs - now });
      }
      if (verdict.kind === 'wait') {
        if (verdict.ms > this.#maxWaitMs) throw new HubError({ method: 'POST', path, status: 429, detail: `${agent}: next ${kind} allowed in ${Math.ceil(verdict.ms / 1000)} s (Moltbook's cooldown)`, retryable: true, retryAfterMs: verdict.ms });
        await sleep(verdict.ms, signal);
        if (signal?.aborted) throw new HubError({ method: 'POST', path, detail: 'aborted', retryable: false });
        continue;
      }
      if (await this.#state.reserveWrite(agent, kind, now, day, limits.commentsPerDay)) return day;
    }
  }

  /** The agent's model asked for the number, within the challenge's time; undefined: no model, too late, or no plain number. */
  async #modelAnswer(agent: string, v: Verification): Promise<string | undefined> {
    if (!this.#askModel) return undefined;
    const ms = timeToAsk(v.expires_at, this.#now());
    if (ms === undefined) return undefined;
    try {
      const reply = await this.#askModel(agent, challengeQuestion(v.challenge_text), AbortSignal.timeout(ms));
      const answer = parseModelAnswer(reply);
      this.#logger?.info({ agent, usable: answer !== undefined }, 'Moltbook challenge: the solver was unsure; asked the agent\'s model');
      return answer;
    } catch (err) {
      this.#logger?.warn({ agent, err }, 'Moltbook challenge: the agent\'s model could not be asked');
      return undefined;
    }
  }

  /** Comments the agent may still write today under Moltbook's limits (exploration skips an agent with none). */
  async commentsLeftToday(agent: string, signal?: AbortSignal): Promise<number> {
    const limits = await this.#limitsOf(agent, signal);
    return commentsLeft(await this.#state.writeHistory(agent, new Date(this.#now()).toISOString().slice(0, 10)), limits);
  }

  async #verify(agent: string, wkey: string, entry: LedgerEntry, v: Verification): Promise<void> {
    const solved = solveChallenge(v.challenge_text);
    let answer: string;
    if (solved.kind === 'answer') answer = solved.answer;
    else {
      const fromModel = await this.#modelAnswer(agent, v);
      if (fromModel === undefined) {
        const n = await this.#challengeFailed(agent);
        await this.#state.forgetLedger(wkey);
        this.#logger?.warn({ agent, reason: solved.reason, consecutive: n }, 'Moltbook challenge not answered: the solver is unsure and the model gave no usable number (the content stays unpublished)');
        throw new MoltbookChallengeError(agent, v.challenge_text, `unsure: ${solved.reason}`, n);
      }
      answer = fromModel;
    }
    try {
      await this.#call(agent, 'read', { method: 'POST', path: '/verify', body: { verification_code: v.verification_code, answer } });
    } catch (err) {
      if (err instanceof HubError && err.status === 409) {
        // Used already: an earlier attempt verified it and its answer was lost.
        await this.#state.setLedger(wkey, { ...entry, state: 'done' });
        return;
      }
      if (err instanceof HubError && err.status !== undefined && err.status < 500 && err.status !== 429) {
        await this.#state.forgetLedger(wkey); // expired or wrong: never published, a later attempt writes anew
        if (err.status === 410) throw new HubError({ method: 'POST', path: '/verify', status: 410, detail: `${agent}: the verification challenge expired before it was answered`, retryable: true });
        const n = await this.#challengeFailed(agent);
        throw new MoltbookChallengeError(agent, v.challenge_text, `answer ${answer} refused: ${err.detail}`, n);
      }
      throw err;
    }
    await this.#state.challengePassed(agent);
    await this.#state.setLedger(wkey, { ...entry, state: 'done' });
    this.#logger?.info({ agent, kind: entry.kind, id: entry.id }, 'Moltbook challenge solved and verified');
  }

  // ---- social (hub-client/social.ts) ----

  /** A one-off POST (vote, follow, subscribe) at most once per idempotency key: a claim first, never sent twice. */
  async #once(agent: string, path: string, opts: SocialWrite): Promise<void> {
    const wkey = opts.idempotencyKey;
    if (wkey && !(await this.#state.claimAction(wkey))) {
      this.#logger?.info({ agent, path, key: wkey }, 'already done (or under way) for this call; not sent again');
      return;
    }
    try {
      await this.#call(agent, 'read', { method: 'POST', path, signal: opts.signal });
    } catch (err) {
      // Refused (4xx): nothing happened, a retry may try again; otherwise it may have happened and stays claimed.
      if (wkey && err instanceof HubError && err.status !== undefined && err.status < 500) await this.#state.forgetLedger(wkey);
      throw err;
    }
  }

  vote(agent: string, target: { kind: 'post' | 'comment'; id: string }, direction: 'up' | 'down', opts: SocialWrite = {}): Promise<void> {
    return this.#once(agent, `/${target.kind === 'post' ? 'posts' : 'comments'}/${encodeURIComponent(target.id)}/${direction === 'up' ? 'upvote' : 'downvote'}`, opts);
  }

  follow(agent: string, name: string, opts: SocialWrite = {}): Promise<void> {
    return this.#once(agent, `/agents/${encodeURIComponent(name)}/follow`, opts);
  }

  subscribe(agent: string, community: string, opts: SocialWrite = {}): Promise<void> {
    return this.#once(agent, `/submolts/${encodeURIComponent(community.replace(/^m\//, ''))}/subscribe`, opts);
  }

  async feed(agent: string, query: { sort?: 'new' | 'hot' | 'top'; limit?: number; signal?: AbortSignal } = {}): Promise<FeedPost[]> {
    const body = await this.#call(agent, 'read', { method: 'GET', path: '/feed', query: { sort: query.sort ?? 'new', limit: query.limit ?? 15 }, signal: query.signal });
    return (unwrapMoltbookList(body, ['posts']) ?? []).flatMap((p) => {
      const w = WirePostSchema.safeParse(p);
      if (!w.success) return [];
      const post = toPost(w.data);
      return [{ id: post.id, title: post.title ?? null, author: post.author.name, community: post.community ?? null, content: post.content }];
    });
  }

  async searchComments(agent: string, q: string, query: { limit?: number; signal?: AbortSignal } = {}): Promise<FoundComment[]> {
    const body = await this.#call(agent, 'read', { method: 'GET', path: '/search', query: { q, type: 'comments', limit: query.limit ?? 10 }, signal: query.signal });
    return (unwrapMoltbookList(body, ['results', 'comments']) ?? []).flatMap((c) => {
      const w = WireCommentSchema.safeParse(c);
      if (!w.success || !w.data.post_id) return [];
      const postId = w.data.post_id;
      const [flat] = flattenComments([{ ...w.data, replies: [] }], postId);
      return flat ? [{ id: flat.id, post_id: postId, author: flat.author.name, content: flat.content }] : [];
    });
  }

  // ---- reads ----

  async getPost(id: string, opts: { includeComments?: boolean; signal?: AbortSignal } = {}): Promise<Post> {
    if (isConversation(id)) return this.#dms.thread(id, opts.signal);
    const { agent, key } = await this.#readKey();
    const post = await this.#getPost(agent, id, opts.signal, key);
    this.#postAuthors.set(post.id, post.author.name);
    if (!opts.includeComments) return post;
    const comments = (await this.#comments(agent, id, { signal: opts.signal, key })).sort((a, b) => a.created_at.localeCompare(b.created_at));
    return { ...post, comments, comment_count: comments.length };
  }

  async listPosts(query: PostQuery = {}): Promise<PostPage> {
    const { agent, key } = await this.#readKey();
    const posts = await this.#posts(agent, { sort: query.sort === 'rising' ? 'hot' : (query.sort ?? 'new'), limit: query.limit, submolt: query.community?.replace(/^m\//, '') }, query.signal, key);
    return { posts, total: posts.length, offset: 0, limit: query.limit ?? posts.length };
  }

  async #posts(agent: string, query: Record<string, string | number | undefined>, signal?: AbortSignal, key?: string, poll = false): Promise<Post[]> {
    const body = await this.#call(agent, 'read', { method: 'GET', path: '/posts', query, signal }, key ?? this.#keyOf(agent), poll);
    return (unwrapMoltbookList(body, ['posts']) ?? []).flatMap((p) => {
      const w = WirePostSchema.safeParse(p);
      return w.success ? [toPost(w.data)] : [];
    });
  }

  async search(q: string, query: SearchQuery = {}): Promise<Post[]> {
    const { agent, key } = await this.#readKey();
    const body = await this.#call(agent, 'read', { method: 'GET', path: '/search', query: { q, type: 'posts', limit: query.limit }, signal: query.signal }, key);
    return (unwrapMoltbookList(body, ['results', 'posts']) ?? []).flatMap((p) => {
      const w = WirePostSchema.safeParse(p);
      return w.success ? [toPost(w.data)] : [];
    });
  }

  async discover(agent: string, query: DiscoverQuery = {}): Promise<Post[]> {
    const communities = query.communities?.length ? query.communities.map((c) => c.replace(/^m\//, '')) : [undefined];
    const seen = new Map<string, Post>();
    for (const submolt of communities) {
      for (const p of await this.#posts(agent, { sort: 'new', limit: query.limit ?? 10, submolt }, query.signal)) seen.set(p.id, p);
    }
    const mine = [...seen.values()].filter((p) => p.author.name !== agent);
    const answered = query.excludeResponded ? await this.#state.answered(agent, mine.map((p) => p.id)) : new Set<string>();
    return mine.filter((p) => !answered.has(p.id)).slice(0, query.limit ?? 10);
  }

  async listCommunities(signal?: AbortSignal): Promise<Community[]> {
    const { agent, key } = await this.#readKey();
    const body = await this.#call(agent, 'read', { method: 'GET', path: '/submolts', signal }, key);
    return (unwrapMoltbookList(body, ['submolts']) ?? []).flatMap((s) => {
      const name = (s as { name?: unknown } | null)?.name;
      return typeof name === 'string' ? [{ name: name.replace(/^m\//, '') }] : [];
    });
  }

  async getAgent(nameOrId: string): Promise<Agent> {
    const body = await this.#call(nameOrId, 'read', { method: 'GET', path: '/agents/me' });
    const a = unwrapMoltbookObject(body, ['agent']) as { id?: unknown; name?: unknown; description?: unknown; created_at?: unknown };
    const id = typeof a.id === 'string' || typeof a.id === 'number' ? String(a.id) : nameOrId;
    return { id, name: typeof a.name === 'string' ? a.name : nameOrId, type: 'native', description: typeof a.description === 'string' ? a.description : null };
  }

  async listAgents(): Promise<Agent[]> {
    return Promise.all([...this.#keys.keys()].map((name) => this.getAgent(name)));
  }

  async health(signal?: AbortSignal): Promise<boolean> {
    try {
      const { agent, key } = await this.#readKey();
      await this.#call(agent, 'read', { method: 'GET', path: '/agents/status', signal: signal ?? AbortSignal.timeout(5_000) }, key);
      return true;
    } catch {
      return false;
    }
  }

  /** No budget endpoint on Moltbook: the local ledger answers, by the local hub's rules. */
  budgetHealth(agent: string): Promise<BudgetHealth> {
    return this.#budget.health(agent);
  }

  reportConsumption(report: ConsumptionReport, opts: WriteOptions = {}): Promise<void> {
    return this.#budget.record(report.agent, report.costUsd, opts.idempotencyKey);
  }

  /** Staleness is kept by warren itself (agent state in Redis); Moltbook has nothing to tell. */
  markActivated(): Promise<void> {
    return Promise.resolve();
  }

  staleAgents(): Promise<StaleAgent[]> {
    return Promise.resolve([]);
  }

  me(): Promise<Agent> {
    return Promise.reject(notOffered('a key of its own to the adapter (use getAgent with an agent name)'));
  }

  registerAgent(): Promise<RegisteredAgent> {
    return Promise.reject(notOffered('registration through warren (an owner registers and claims each agent)'));
  }

  regenerateKey(): Promise<KeyRotation> {
    return Promise.reject(notOffered('key rotation (only the owner rotates keys)'));
  }

  createCommunity(): Promise<Community> {
    return Promise.reject(notOffered('creating communities through warren'));
  }
}

