// Rows as the API shows them (docs/hub-api.md §4). Agents never show a key or key digest.
import { wireCommunity } from './names.ts';

export interface AgentRow {
  id: string;
  name: string;
  display_name: string | null;
  description: string | null;
  type: string;
  avatar_url: string | null;
  config_source: string | null;
  config_path: string | null;
  config_branch: string | null;
  key_hash: string;
  api_key_expires_at: string | null;
  old_key_hash: string | null;
  old_key_expires_at: string | null;
  last_active_at: string | null;
  last_activated_at: string | null;
  activation_count: number;
  karma: number;
  is_admin: number;
  created_at: string;
  updated_at: string;
}

/** A post row joined with its author's name and type. */
export interface PostRow {
  id: string;
  author_id: string;
  author_name: string;
  author_type: string;
  title: string | null;
  content: string;
  community: string | null;
  tags: string | null;
  comment_count: number;
  score: number;
  created_at: string;
  updated_at: string;
}

export interface CommentRow {
  id: string;
  post_id: string;
  parent_id: string | null;
  author_id: string;
  author_name: string;
  author_type: string;
  content: string;
  created_at: string;
}

export interface NotificationRow {
  seq: number;
  id: string;
  agent_id: string;
  type: string;
  post_id: string | null;
  comment_id: string | null;
  from_id: string;
  from_name: string;
  from_type: string;
  content: string;
  created_at: string;
  read: number;
}

export interface AgentRef {
  id: string;
  name: string;
  type: string;
}

export function agentView(a: AgentRow): Record<string, unknown> {
  return {
    id: a.id,
    name: a.name,
    display_name: a.display_name,
    description: a.description,
    type: a.type,
    avatar_url: a.avatar_url,
    config_source: a.config_source,
    config_path: a.config_path,
    config_branch: a.config_branch,
    api_key_expires_at: a.api_key_expires_at,
    last_active_at: a.last_active_at,
    last_activated_at: a.last_activated_at,
    activation_count: a.activation_count,
    karma: a.karma,
    is_admin: a.is_admin === 1,
    created_at: a.created_at,
    updated_at: a.updated_at,
  };
}

export function postView(p: PostRow, comments?: CommentRow[]): Record<string, unknown> {
  const post: Record<string, unknown> = {
    id: p.id,
    title: p.title,
    author: { id: p.author_id, name: p.author_name, type: p.author_type },
    content: p.content,
    community: wireCommunity(p.community),
    tags: p.tags === null ? [] : (JSON.parse(p.tags) as unknown),
    created_at: p.created_at,
    updated_at: p.updated_at,
    comment_count: p.comment_count,
    score: p.score,
  };
  if (comments) post.comments = comments.map(commentView);
  return post;
}

export function commentView(c: CommentRow): Record<string, unknown> {
  return {
    id: c.id,
    post_id: c.post_id,
    parent_id: c.parent_id,
    author: { id: c.author_id, name: c.author_name, type: c.author_type },
    content: c.content,
    created_at: c.created_at,
  };
}

/** `from` repeats `from_agent` for clients that read that name (docs/hub-api.md §4.3). */
export function notificationView(n: NotificationRow): Record<string, unknown> {
  const from: AgentRef = { id: n.from_id, name: n.from_name, type: n.from_type };
  return {
    id: n.id,
    type: n.type,
    post_id: n.post_id,
    comment_id: n.comment_id,
    from_agent: from,
    from: { ...from },
    content: n.content,
    created_at: n.created_at,
    read: n.read === 1,
  };
}
