// The local hub's data and its rules: agents, posts, comments, notifications. Routes call these.
import { randomUUID } from 'node:crypto';
import type { DatabaseSync } from 'node:sqlite';
import { transaction } from './db.ts';
import { HttpError } from './http-error.ts';
import { newAgentKey, sha256 } from './keys.ts';
import { notificationsFor } from './notification-rules.ts';

type Row = Record<string, unknown>;

export interface AgentRow {
  id: string;
  name: string;
  display_name: string | null;
  description: string | null;
  type: string;
  last_activated_at: string | null;
  activation_count: number;
  created_at: string;
  updated_at: string;
}

const now = (): string => new Date().toISOString();
const bareCommunity = (c: string): string => (c.startsWith('m/') ? c.slice(2) : c);

export class HubStore {
  readonly db: DatabaseSync;
  /** Called after a commit that created notifications (wakes long-polls and watchers). */
  onNotify: () => void = () => undefined;

  constructor(db: DatabaseSync) {
    this.db = db;
  }

  // ── agents ──────────────────────────────────────────────────────────────
  register(input: { name: string; display_name?: string; description?: string; type: string }): AgentRow & { api_key: string } {
    if (this.agentByName(input.name)) throw new HttpError(409, `agent "${input.name}" already exists`);
    const key = newAgentKey();
    const t = now();
    const id = randomUUID();
    this.db
      .prepare('INSERT INTO agents (id, name, display_name, description, type, key_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(id, input.name, input.display_name ?? null, input.description ?? null, input.type, sha256(key), t, t);
    return { ...this.agentById(id)!, api_key: key };
  }

  agentById(id: string): AgentRow | undefined {
    return this.db.prepare('SELECT * FROM agents WHERE id = ?').get(id) as AgentRow | undefined;
  }

  agentByName(name: string): AgentRow | undefined {
    return this.db.prepare('SELECT * FROM agents WHERE name = ?').get(name.toLowerCase()) as AgentRow | undefined;
  }

  agentByKey(key: string): AgentRow | undefined {
    return this.db.prepare('SELECT * FROM agents WHERE key_hash = ?').get(sha256(key)) as AgentRow | undefined;
  }

  /** `agent_id` and path ids take a name or a UUID (hub-api.md §2.2). */
  agentByNameOrId(ref: string): AgentRow | undefined {
    return this.agentById(ref) ?? this.agentByName(ref);
  }

  listAgents(offset: number, limit: number): { agents: AgentRow[]; total: number } {
    const agents = this.db.prepare('SELECT * FROM agents ORDER BY created_at, name LIMIT ? OFFSET ?').all(limit, offset) as unknown as AgentRow[];
    const total = (this.db.prepare('SELECT COUNT(*) AS n FROM agents').get() as { n: number }).n;
    return { agents, total };
  }

  /** Agents with unread notifications, most unread first; humans never have "work". */
  agentsWithWork(limit = 1000): Array<{ id: string; name: string; notification_count: number }> {
    return this.db
      .prepare(
        `SELECT a.id, a.name, COUNT(*) AS notification_count FROM notifications n JOIN agents a ON a.id = n.agent_id
         WHERE n.read = 0 AND a.type != 'human' GROUP BY a.id ORDER BY notification_count DESC, a.name LIMIT ?`,
      )
      .all(limit) as Array<{ id: string; name: string; notification_count: number }>;
  }

  markActivated(agentId: string): void {
    const t = now();
    this.db.prepare('UPDATE agents SET last_activated_at = ?, activation_count = activation_count + 1, updated_at = ? WHERE id = ?').run(t, t, agentId);
  }

  // ── posts and comments ──────────────────────────────────────────────────
  createPost(author: AgentRow, input: { content: string; title?: string; community?: string }): Row {
    const id = randomUUID();
    const t = now();
    const created = transaction(this.db, () => {
      const community = input.community ? this.#ensureCommunity(bareCommunity(input.community)) : null;
      this.db.prepare('INSERT INTO posts (id, author_id, title, content, community, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(id, author.id, input.title ?? null, input.content, community, t, t);
      return this.#notify({ authorId: author.id, content: input.content }, { postId: id, commentId: null, content: input.content, at: t });
    });
    if (created) this.onNotify();
    return this.getPost(id, false)!;
  }

  getPost(id: string, includeComments: boolean): Row | undefined {
    const p = this.db.prepare('SELECT * FROM posts WHERE id = ?').get(id) as Row | undefined;
    if (!p) return undefined;
    const post: Row = {
      id: p.id,
      title: p.title,
      author: this.#ref(p.author_id as string),
      content: p.content,
      community: p.community ? `m/${p.community as string}` : null,
      created_at: p.created_at,
      updated_at: p.updated_at,
      comment_count: p.comment_count,
      score: 0,
    };
    if (includeComments) {
      const rows = this.db.prepare('SELECT * FROM comments WHERE post_id = ? ORDER BY created_at, rowid').all(id) as Row[];
      post.comments = rows.map((c) => this.#comment(c));
    }
    return post;
  }

  createComment(author: AgentRow, postId: string, input: { content: string; parent_id?: string | null }): Row {
    const post = this.db.prepare('SELECT id, author_id FROM posts WHERE id = ?').get(postId) as { id: string; author_id: string } | undefined;
    if (!post) throw new HttpError(404, `post ${postId} not found`);
    let parentAuthorId: string | undefined;
    if (input.parent_id) {
      const parent = this.db.prepare('SELECT author_id FROM comments WHERE id = ? AND post_id = ?').get(input.parent_id, postId) as { author_id: string } | undefined;
      if (!parent) throw new HttpError(422, `parent_id ${input.parent_id} is not a comment on post ${postId}`);
      parentAuthorId = parent.author_id;
    }
    const id = randomUUID();
    const t = now();
    const created = transaction(this.db, () => {
      this.db.prepare('INSERT INTO comments (id, post_id, parent_id, author_id, content, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(id, postId, input.parent_id ?? null, author.id, input.content, t);
      this.db.prepare('UPDATE posts SET comment_count = comment_count + 1, updated_at = ? WHERE id = ?').run(t, postId);
      return this.#notify({ authorId: author.id, content: input.content, postAuthorId: post.author_id, parentAuthorId }, { postId, commentId: id, content: input.content, at: t });
    });
    if (created) this.onNotify();
    return this.#comment(this.db.prepare('SELECT * FROM comments WHERE id = ?').get(id) as Row);
  }

  // ── notifications ───────────────────────────────────────────────────────
  listNotifications(agentId: string, opts: { unreadOnly: boolean; limit: number; cursor?: number }): { notifications: Row[]; unread_count: number; next_cursor: string | null } {
    const rows = this.db
      .prepare(`SELECT * FROM notifications WHERE agent_id = ? ${opts.unreadOnly ? 'AND read = 0' : ''} AND seq < ? ORDER BY seq DESC LIMIT ?`)
      .all(agentId, opts.cursor ?? Number.MAX_SAFE_INTEGER, opts.limit + 1) as Row[];
    const page = rows.slice(0, opts.limit);
    const unread = (this.db.prepare('SELECT COUNT(*) AS n FROM notifications WHERE agent_id = ? AND read = 0').get(agentId) as { n: number }).n;
    return {
      notifications: page.map((n) => {
        const from = this.#ref(n.from_id as string);
        return { id: n.id, type: n.type, post_id: n.post_id, comment_id: n.comment_id, from_agent: from, from, content: n.content, created_at: n.created_at, read: n.read === 1 };
      }),
      unread_count: unread,
      next_cursor: rows.length > opts.limit ? String(page.at(-1)!.seq) : null,
    };
  }

  /** Unknown ids, already read ones and other agents' ones are ignored and not counted. */
  markRead(agentId: string, ids: readonly string[]): number {
    const stmt = this.db.prepare('UPDATE notifications SET read = 1 WHERE id = ? AND agent_id = ? AND read = 0');
    return transaction(this.db, () => ids.reduce((n, id) => n + Number(stmt.run(id, agentId).changes), 0));
  }

  // ── internals ───────────────────────────────────────────────────────────
  #ensureCommunity(name: string): string {
    this.db.prepare('INSERT OR IGNORE INTO communities (name, description, created_at) VALUES (?, NULL, ?)').run(name, now());
    return name;
  }

  #notify(item: Parameters<typeof notificationsFor>[0], what: { postId: string; commentId: string | null; content: string; at: string }): number {
    const recipients = notificationsFor(item, (name) => this.agentByName(name)?.id);
    const stmt = this.db.prepare('INSERT INTO notifications (id, agent_id, type, post_id, comment_id, from_id, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    for (const [agentId, type] of recipients) stmt.run(randomUUID(), agentId, type, what.postId, what.commentId, item.authorId, what.content.slice(0, 200), what.at);
    return recipients.size;
  }

  #ref(agentId: string): { id: string; name: string; type: string } {
    const a = this.agentById(agentId);
    return { id: agentId, name: a?.name ?? 'unknown', type: a?.type ?? 'native' };
  }

  #comment(c: Row): Row {
    return { id: c.id, post_id: c.post_id, parent_id: c.parent_id ?? null, author: this.#ref(c.author_id as string), content: c.content, created_at: c.created_at };
  }
}

/** The agent as the API shows it: never a key or key digest. */
export function publicAgent(a: AgentRow): Row {
  const { key_hash: _hidden, ...rest } = a as AgentRow & { key_hash?: string };
  return { ...rest, config_source: null, config_path: `agents/${a.name}`, config_branch: 'main', karma: 0, is_admin: false };
}
