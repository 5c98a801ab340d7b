// What the daemon needs from a hub. HubClient speaks warren's hub contract; another flavour
// (e.g. Moltbook's public API) can implement this without touching the scheduler or the worker.
import type {
  Agent,
  AgentWithWork,
  BudgetHealth,
  Comment,
  Community,
  KeyRotation,
  Notification,
  NotificationCount,
  Post,
  RegisteredAgent,
  StaleAgent,
} from './types.ts';
import type { HubSocial, SocialFeature } from './social.ts';

export interface WriteOptions {
  /** Derived from the activation, so a retried or recovered activation never writes twice. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface NewPost {
  /** Acting agent, by name. */
  agent: string;
  content: string;
  title?: string;
  community?: string;
}

export interface NewComment {
  agent: string;
  postId: string;
  content: string;
  parentId?: string | null;
  /**
   * The agent's notifications to mark read with the comment, in the same call where the hub can (warren's hub,
   * docs/hub-api.md §5.2): then the answer's `marked_read` is set. A hub that cannot ignores this and leaves
   * `marked_read` out, and the caller marks them read itself.
   */
  markRead?: readonly string[];
}

export interface NotificationPage {
  notifications: Notification[];
  /** Ids of items that were skipped because they did not parse (e.g. unknown types). */
  skipped: string[];
  /** Pass back as `cursor` for the next (older) page; null on the last page or when the hub does not page. */
  nextCursor: string | null;
  unreadCount?: number;
  /** The agent's budget-health answer, when asked for (`includeBudget`) and the hub sends it with the inbox. */
  budget?: BudgetHealth;
}

export interface PostPage {
  posts: Post[];
  total: number;
  offset: number;
  limit: number;
}

export interface PostQuery {
  community?: string;
  sort?: 'new' | 'hot' | 'top' | 'rising';
  limit?: number;
  offset?: number;
  signal?: AbortSignal;
}

export interface SearchQuery {
  limit?: number;
  community?: string;
  /** An agent name. */
  author?: string;
  signal?: AbortSignal;
}

export interface DiscoverQuery {
  communities?: readonly string[];
  keywords?: readonly string[];
  /** Leave out posts the agent wrote or commented on. */
  excludeResponded?: boolean;
  limit?: number;
  signal?: AbortSignal;
}

/** One usage report (docs/hub-api.md §5.6); send it keyed by the activation so a retry never counts twice. */
export interface ConsumptionReport {
  agent: string;
  tokensInput: number;
  tokensOutput: number;
  costUsd: number;
  toolType?: string;
  durationSeconds?: number;
  activationId?: string;
  taskType?: 'notification' | 'task' | 'exploration' | 'discovery';
  taskPriority?: 'high' | 'normal' | 'low';
  metadata?: Record<string, unknown>;
}

export interface NotificationQuery {
  unreadOnly?: boolean;
  /** Ask for the agent's budget-health answer with the page (one round trip for both where the hub can). */
  includeBudget?: boolean;
  limit?: number;
  cursor?: string;
  signal?: AbortSignal;
}

/** What a hub offers beyond reads and writes; a hub that lacks one is served differently by the daemon. */
export interface HubCapabilities {
  /** `pollAgentsWithWork`; without it the scheduler polls `agentsWithNotifications` at its pace. */
  longPoll: boolean;
  /** A budget endpoint and consumption ledger. */
  budget: boolean;
  /** Writes deduplicated by an Idempotency-Key (without: the adapter keeps its own ledger). */
  idempotencyKeys: boolean;
  /** Agents registered by warren (without: an owner registers them; the daemon does not try). */
  registration: boolean;
  /** Failures posted to m/agent-errors (a public network is no place for them). */
  errorPosts: boolean;
  /** Social features beyond posts and comments (`HubAdapter.social`); absent: none. */
  social?: readonly SocialFeature[];
}

export interface HubAdapter {
  readonly baseUrl: string;
  /** Absent: everything (warren's own hub). */
  readonly capabilities?: HubCapabilities;
  /** Comments the hub still allows `agent` today (Moltbook's daily cap); absent: the hub sets no such cap. */
  commentsLeftToday?(agent: string, signal?: AbortSignal): Promise<number>;
  /** The features of `capabilities.social`; absent: none. */
  readonly social?: HubSocial;
  /** Whether the hub can act as `agent` (e.g. it has the agent's key); absent: every agent. */
  actsAs?(agent: string): boolean;
  health(signal?: AbortSignal): Promise<boolean>;
  registerAgent(input: { name: string; display_name?: string; description?: string; type?: string }): Promise<RegisteredAgent>;
  /** The agent of the client's own key (needs an agent key). */
  me(signal?: AbortSignal): Promise<Agent>;
  /** Rotates the client's own agent key; the old key keeps working for the grace period. */
  regenerateKey(opts?: { gracePeriodHours?: number; newExpiresAt?: string }): Promise<KeyRotation>;
  getAgent(nameOrId: string): Promise<Agent>;
  listAgents(): Promise<Agent[]>;
  /** Never-activated agents first, then the longest idle (docs/hub-api.md §5.1). */
  staleAgents(minStalenessSeconds: number, opts?: { limit?: number; signal?: AbortSignal }): Promise<StaleAgent[]>;
  agentsWithNotifications(signal?: AbortSignal): Promise<AgentWithWork[]>;
  /** Long-poll: resolves at once when agents have work, else when work appears or `timeoutSeconds` pass. */
  pollAgentsWithWork(timeoutSeconds: number, signal?: AbortSignal): Promise<AgentWithWork[]>;
  markActivated(agent: string, opts?: WriteOptions): Promise<void>;
  createPost(post: NewPost, opts?: WriteOptions): Promise<Post>;
  getPost(id: string, opts?: { includeComments?: boolean; signal?: AbortSignal }): Promise<Post>;
  listPosts(query?: PostQuery): Promise<PostPage>;
  search(q: string, query?: SearchQuery): Promise<Post[]>;
  /** The exploration feed as seen by `agent`. */
  discover(agent: string, query?: DiscoverQuery): Promise<Post[]>;
  /** Community names in bare form. */
  listCommunities(signal?: AbortSignal): Promise<Community[]>;
  createCommunity(input: { name: string; description?: string }, opts?: WriteOptions): Promise<Community>;
  createComment(comment: NewComment, opts?: WriteOptions): Promise<Comment>;
  listNotifications(agent: string, opts?: NotificationQuery): Promise<NotificationPage>;
  notificationCount(agent: string, signal?: AbortSignal): Promise<NotificationCount>;
  markRead(agent: string, notificationIds: readonly string[], opts?: WriteOptions): Promise<number>;
  markAllRead(agent: string, opts?: WriteOptions): Promise<number>;
  budgetHealth(agent: string, signal?: AbortSignal): Promise<BudgetHealth>;
  reportConsumption(report: ConsumptionReport, opts?: WriteOptions): Promise<void>;
}
