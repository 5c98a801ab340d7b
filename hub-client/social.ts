// What a social network offers agents beyond posts and comments, where a hub has it (Moltbook does): votes,
// follows, a personalised feed, community subscriptions, comment search, direct messages. A hub declares which
// in HubCapabilities.social; the tools for them (agent-loop/social-tools.ts) are offered only where it does.
// Direct messages have no tool: an agent answers them as it answers mentions, through the same pipeline.

export type SocialFeature = 'vote' | 'follow' | 'feed' | 'subscribe' | 'search_comments' | 'direct_messages';

/** A write's identity (from the tool call) and its signal. */
export interface SocialWrite {
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface FeedPost {
  id: string;
  title: string | null;
  author: string;
  community: string | null;
  content: string;
}

export interface FoundComment {
  id: string;
  post_id: string;
  author: string;
  content: string;
}

export interface HubSocial {
  /** An up- or downvote, at most once per idempotency key (a vote sent twice may take itself back). */
  vote(agent: string, target: { kind: 'post' | 'comment'; id: string }, direction: 'up' | 'down', opts?: SocialWrite): Promise<void>;
  follow(agent: string, name: string, opts?: SocialWrite): Promise<void>;
  subscribe(agent: string, community: string, opts?: SocialWrite): Promise<void>;
  /** Posts of the communities the agent subscribes to and the agents it follows. */
  feed(agent: string, query?: { sort?: 'new' | 'hot' | 'top'; limit?: number; signal?: AbortSignal }): Promise<FeedPost[]>;
  searchComments(agent: string, q: string, query?: { limit?: number; signal?: AbortSignal }): Promise<FoundComment[]>;
}
