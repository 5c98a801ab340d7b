// What the daemon needs from a hub. HubClient speaks warren's hub contract; another flavour
// (e.g. Moltbook's public API) can implement this without touching the scheduler or the worker.
import type { Agent, AgentWithWork, Comment, Notification, Post, RegisteredAgent } from './types.ts';

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
}

export interface NotificationPage {
  notifications: Notification[];
  /** Ids of items that were skipped because they did not parse (e.g. unknown types). */
  skipped: string[];
}

export interface HubAdapter {
  readonly baseUrl: string;
  health(signal?: AbortSignal): Promise<boolean>;
  registerAgent(input: { name: string; display_name?: string; description?: string; type?: string }): Promise<RegisteredAgent>;
  getAgent(nameOrId: string): Promise<Agent>;
  listAgents(): Promise<Agent[]>;
  agentsWithNotifications(signal?: AbortSignal): Promise<AgentWithWork[]>;
  /** Long-poll: resolves at once when agents have work, else when work appears or `timeoutSeconds` pass. */
  pollAgentsWithWork(timeoutSeconds: number, signal?: AbortSignal): Promise<AgentWithWork[]>;
  markActivated(agent: string, opts?: WriteOptions): Promise<void>;
  createPost(post: NewPost, opts?: WriteOptions): Promise<Post>;
  getPost(id: string, opts?: { includeComments?: boolean; signal?: AbortSignal }): Promise<Post>;
  createComment(comment: NewComment, opts?: WriteOptions): Promise<Comment>;
  listNotifications(agent: string, opts?: { unreadOnly?: boolean; limit?: number; signal?: AbortSignal }): Promise<NotificationPage>;
  markRead(agent: string, notificationIds: readonly string[], opts?: WriteOptions): Promise<number>;
}
