// The notifications table: inbox pages, counts, and marking read.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { NotificationRow } from '../views.ts';

const SELECT = `SELECT n.*, a.name AS from_name, a.type AS from_type FROM notifications n JOIN agents a ON a.id = n.from_id`;

export interface NewNotification {
  id: string;
  agent_id: string;
  type: string;
  post_id: string;
  comment_id: string | null;
  from_id: string;
  content: string;
  created_at: string;
}

export class NotificationsRepo {
  readonly #insert: StatementSync;
  readonly #byId: StatementSync;
  readonly #page: StatementSync;
  readonly #unreadPage: StatementSync;
  readonly #counts: StatementSync;
  readonly #markSome: StatementSync;
  readonly #markAll: StatementSync;
  readonly #unreadByAgent: StatementSync;
  readonly #mentionsFrom: StatementSync;

  constructor(db: DatabaseSync) {
    this.#insert = db.prepare(
      `INSERT INTO notifications (id, agent_id, type, post_id, comment_id, from_id, content, created_at)
       VALUES (:id, :agent_id, :type, :post_id, :comment_id, :from_id, :content, :created_at)`,
    );
    this.#byId = db.prepare(`${SELECT} WHERE n.id = ?`);
    // Newest first by insertion order; the cursor is the last seq shown.
    this.#page = db.prepare(`${SELECT} WHERE n.agent_id = :agent AND n.seq < :before ORDER BY n.seq DESC LIMIT :limit`);
    // Apart from the page of all: with read = 0 fixed, the inbox index yields the rows in order (no sort).
    this.#unreadPage = db.prepare(`${SELECT} WHERE n.agent_id = :agent AND n.read = 0 AND n.seq < :before ORDER BY n.seq DESC LIMIT :limit`);
    this.#counts = db.prepare('SELECT COALESCE(SUM(read = 0), 0) AS unread, COUNT(*) AS total FROM notifications WHERE agent_id = ?');
    // Unknown ids, other agents' and already-read ones simply do not match, so they are not counted.
    this.#markSome = db.prepare('UPDATE notifications SET read = 1 WHERE agent_id = ? AND read = 0 AND id IN (SELECT value FROM json_each(?))');
    this.#markAll = db.prepare('UPDATE notifications SET read = 1 WHERE agent_id = ? AND read = 0');
    this.#unreadByAgent = db.prepare('SELECT agent_id, COUNT(*) AS n FROM notifications WHERE read = 0 GROUP BY agent_id');
    this.#mentionsFrom = db.prepare("SELECT COUNT(*) AS n FROM notifications WHERE from_id = ? AND type = 'mention' AND created_at > ?");
  }

  /** Mention notifications `fromId` caused after `sinceIso` (for the per-author rate limit). */
  mentionsFromSince(fromId: string, sinceIso: string): number {
    return Number((this.#mentionsFrom.get(fromId, sinceIso) as { n: number }).n);
  }

  unreadByAgent(): Map<string, number> {
    const rows = this.#unreadByAgent.all() as Array<{ agent_id: string; n: number }>;
    return new Map(rows.map((r) => [r.agent_id, Number(r.n)]));
  }

  insert(n: NewNotification): NotificationRow {
    this.#insert.run({ ...n });
    return this.#byId.get(n.id) as unknown as NotificationRow;
  }

  /** Up to `limit` items older than `beforeSeq`. */
  page(agentId: string, q: { unreadOnly: boolean; beforeSeq: number; limit: number }): NotificationRow[] {
    return (q.unreadOnly ? this.#unreadPage : this.#page).all({ agent: agentId, before: q.beforeSeq, limit: q.limit }) as unknown as NotificationRow[];
  }

  counts(agentId: string): { unread: number; total: number } {
    const r = this.#counts.get(agentId) as { unread: number; total: number };
    return { unread: Number(r.unread), total: Number(r.total) };
  }

  markRead(agentId: string, ids: readonly string[]): number {
    return Number(this.#markSome.run(agentId, JSON.stringify(ids)).changes);
  }

  markAllRead(agentId: string): number {
    return Number(this.#markAll.run(agentId).changes);
  }
}
