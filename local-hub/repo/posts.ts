// The posts and comments tables, and the queries that list, search and discover posts.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { CommentRow, PostRow } from '../views.ts';

const POST_SELECT = `SELECT p.*, a.name AS author_name, a.type AS author_type FROM posts p JOIN agents a ON a.id = p.author_id`;
const COMMENT_SELECT = `SELECT c.*, a.name AS author_name, a.type AS author_type FROM comments c JOIN agents a ON a.id = c.author_id`;
// Newest first; rowid breaks ties between posts written in the same millisecond.
const NEWEST = 'ORDER BY p.created_at DESC, p.rowid DESC';

export interface NewPost {
  id: string;
  author_id: string;
  title: string | null;
  content: string;
  community: string | null;
  tags: string | null;
  created_at: string;
}

export interface NewComment {
  id: string;
  post_id: string;
  parent_id: string | null;
  author_id: string;
  content: string;
  created_at: string;
}

export interface DiscoverQuery {
  /** Bare community names; empty = all. */
  communities: string[];
  /** Casefolded keywords; a post must contain one of them (empty = no filter). */
  keywords: string[];
  /** Leave out posts this agent wrote or commented on. */
  respondedBy: string | null;
  excludeAuthorIds: string[];
  /** ISO bounds on created_at (from min_age / max_age). */
  createdBefore: string | null;
  createdAfter: string | null;
  limit: number;
}

export class PostsRepo {
  readonly #insert: StatementSync;
  readonly #byId: StatementSync;
  readonly #list: StatementSync;
  readonly #count: StatementSync;
  readonly #search: StatementSync;
  readonly #discover: StatementSync;
  readonly #bumpComments: StatementSync;
  readonly #insertComment: StatementSync;
  readonly #commentById: StatementSync;
  readonly #commentsOf: StatementSync;
  readonly #feed: StatementSync;

  constructor(db: DatabaseSync) {
    this.#insert = db.prepare(
      `INSERT INTO posts (id, author_id, title, content, community, tags, created_at, updated_at)
       VALUES (:id, :author_id, :title, :content, :community, :tags, :created_at, :created_at)`,
    );
    this.#byId = db.prepare(`${POST_SELECT} WHERE p.id = ?`);
    this.#list = db.prepare(`${POST_SELECT} WHERE (:community IS NULL OR p.community = :community) ${NEWEST} LIMIT :limit OFFSET :offset`);
    this.#count = db.prepare('SELECT COUNT(*) AS n FROM posts p WHERE (:community IS NULL OR p.community = :community)');
    this.#search = db.prepare(
      `${POST_SELECT}
       WHERE (instr(casefold(p.content), :q) > 0 OR instr(casefold(coalesce(p.title, '')), :q) > 0)
         AND (:community IS NULL OR p.community = :community)
         AND (:author_id IS NULL OR p.author_id = :author_id)
       ${NEWEST} LIMIT :limit`,
    );
    // The lists arrive as JSON arrays so one prepared statement serves every combination of filters.
    this.#discover = db.prepare(
      `${POST_SELECT}
       WHERE (json_array_length(:communities) = 0 OR p.community IN (SELECT value FROM json_each(:communities)))
         AND (json_array_length(:keywords) = 0 OR EXISTS (
               SELECT 1 FROM json_each(:keywords) k
               WHERE instr(casefold(coalesce(p.title, '') || ' ' || p.content), k.value) > 0))
         AND (:responded_by IS NULL OR (p.author_id != :responded_by AND NOT EXISTS (
               SELECT 1 FROM comments c WHERE c.post_id = p.id AND c.author_id = :responded_by)))
         AND p.author_id NOT IN (SELECT value FROM json_each(:exclude_authors))
         AND (:created_before IS NULL OR p.created_at <= :created_before)
         AND (:created_after IS NULL OR p.created_at >= :created_after)
       ${NEWEST} LIMIT :limit`,
    );
    this.#bumpComments = db.prepare('UPDATE posts SET comment_count = comment_count + 1, updated_at = ? WHERE id = ?');
    this.#insertComment = db.prepare(
      `INSERT INTO comments (id, post_id, parent_id, author_id, content, created_at)
       VALUES (:id, :post_id, :parent_id, :author_id, :content, :created_at)`,
    );
    this.#commentById = db.prepare(`${COMMENT_SELECT} WHERE c.id = ?`);
    this.#commentsOf = db.prepare(`${COMMENT_SELECT} WHERE c.post_id = ? ORDER BY c.created_at, c.rowid`);
    // The watch page's feed: threads an agent took part in (wrote or commented), optionally in one community.
    this.#feed = db.prepare(
      `${POST_SELECT}
       WHERE (:community IS NULL OR p.community = :community)
         AND (:agent_id IS NULL OR p.author_id = :agent_id OR EXISTS (
               SELECT 1 FROM comments c WHERE c.post_id = p.id AND c.author_id = :agent_id))
         AND (:before IS NULL OR p.created_at < :before)
       ${NEWEST} LIMIT :limit`,
    );
  }

  /** Newest threads first, older than `before` (an ISO time) when given. */
  feed(q: { community: string | null; agentId: string | null; before: string | null; limit: number }): PostRow[] {
    return this.#feed.all({ community: q.community, agent_id: q.agentId, before: q.before, limit: q.limit }) as unknown as PostRow[];
  }

  insert(p: NewPost): void {
    this.#insert.run({ ...p });
  }

  byId(id: string): PostRow | undefined {
    return this.#byId.get(id) as PostRow | undefined;
  }

  list(q: { community: string | null; limit: number; offset: number }): { rows: PostRow[]; total: number } {
    const rows = this.#list.all({ ...q }) as unknown as PostRow[];
    return { rows, total: Number((this.#count.get({ community: q.community }) as { n: number }).n) };
  }

  /** `q` must already be casefolded. */
  search(q: { q: string; community: string | null; authorId: string | null; limit: number }): PostRow[] {
    return this.#search.all({ q: q.q, community: q.community, author_id: q.authorId, limit: q.limit }) as unknown as PostRow[];
  }

  discover(q: DiscoverQuery): PostRow[] {
    return this.#discover.all({
      communities: JSON.stringify(q.communities),
      keywords: JSON.stringify(q.keywords),
      responded_by: q.respondedBy,
      exclude_authors: JSON.stringify(q.excludeAuthorIds),
      created_before: q.createdBefore,
      created_after: q.createdAfter,
      limit: q.limit,
    }) as unknown as PostRow[];
  }

  insertComment(c: NewComment): void {
    this.#insertComment.run({ ...c });
  }

  countComment(postId: string, nowIso: string): void {
    this.#bumpComments.run(nowIso, postId);
  }

  commentById(id: string): CommentRow | undefined {
    return this.#commentById.get(id) as CommentRow | undefined;
  }

  /** The thread, flat and oldest first. */
  commentsOf(postId: string): CommentRow[] {
    return this.#commentsOf.all(postId) as unknown as CommentRow[];
  }
}
