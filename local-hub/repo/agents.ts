// The agents table: profiles, key digests (current and, during a rotation's grace period, the old one),
// staleness and activity.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { AgentRow } from '../views.ts';

/** What registration writes: the profile columns of AgentRow (the rest start empty or zero). */
export type NewAgent = Pick<AgentRow, 'id' | 'name' | 'display_name' | 'description' | 'type' | 'avatar_url' | 'config_source' | 'config_path' | 'config_branch' | 'key_hash' | 'api_key_expires_at' | 'created_at'>;

export interface AgentWithWork {
  id: string;
  name: string;
  notification_count: number;
}

/** What a key digest resolves to. */
export type KeyLookup = { agent: AgentRow } | { expired: AgentRow } | undefined;

/** The shape of the ids this hub gives agents (randomUUID), in either case. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class AgentsRepo {
  readonly #insert: StatementSync;
  readonly #byId: StatementSync;
  readonly #byName: StatementSync;
  readonly #byKey: StatementSync;
  readonly #byOldKey: StatementSync;
  readonly #list: StatementSync;
  readonly #count: StatementSync;
  readonly #withWork: StatementSync;
  readonly #stale: StatementSync;
  readonly #activated: StatementSync;
  readonly #active: StatementSync;
  readonly #rotate: StatementSync;
  readonly #all: StatementSync;
  #inserts = 0;

  constructor(db: DatabaseSync) {
    this.#insert = db.prepare(
      `INSERT INTO agents (id, name, display_name, description, type, avatar_url, config_source, config_path, config_branch,
         key_hash, api_key_expires_at, created_at, updated_at)
       VALUES (:id, :name, :display_name, :description, :type, :avatar_url, :config_source, :config_path, :config_branch,
         :key_hash, :api_key_expires_at, :created_at, :created_at)`,
    );
    this.#byId = db.prepare('SELECT * FROM agents WHERE id = ?');
    this.#byName = db.prepare('SELECT * FROM agents WHERE name = ?');
    this.#byKey = db.prepare('SELECT * FROM agents WHERE key_hash = ?');
    this.#byOldKey = db.prepare('SELECT * FROM agents WHERE old_key_hash = ? AND old_key_expires_at > ?');
    this.#list = db.prepare('SELECT * FROM agents WHERE (:source IS NULL OR config_source = :source) ORDER BY created_at, name LIMIT :limit OFFSET :offset');
    this.#count = db.prepare('SELECT COUNT(*) AS n FROM agents WHERE (:source IS NULL OR config_source = :source)');
    // Humans are never listed as having work or as stale (warren's choice, docs/hub-api.md §5.1).
    this.#withWork = db.prepare(
      `SELECT a.id, a.name, COUNT(*) AS notification_count
       FROM notifications n JOIN agents a ON a.id = n.agent_id
       WHERE n.read = 0 AND a.type != 'human'
       GROUP BY a.id ORDER BY notification_count DESC, MIN(n.seq), a.id LIMIT ? OFFSET ?`,
    );
    this.#stale = db.prepare(
      `SELECT id, name, last_activated_at FROM agents
       WHERE type != 'human' AND (last_activated_at IS NULL OR last_activated_at <= ?)
       ORDER BY last_activated_at IS NOT NULL, last_activated_at, created_at LIMIT ?`,
    );
    this.#activated = db.prepare('UPDATE agents SET last_activated_at = ?, activation_count = activation_count + 1, updated_at = ? WHERE id = ?');
    this.#active = db.prepare('UPDATE agents SET last_active_at = ? WHERE id = ?');
    // Guarded by the current digest: a rotation that lost a race changes nothing (→ 409).
    this.#rotate = db.prepare(
      `UPDATE agents SET key_hash = :new_hash, api_key_expires_at = :expires, old_key_hash = key_hash,
         old_key_expires_at = :old_expires, updated_at = :now
       WHERE id = :id AND key_hash = :current_hash`,
    );
    this.#all = db.prepare('SELECT * FROM agents ORDER BY created_at, name');
  }

  insert(a: NewAgent): void {
    this.#insert.run({ ...a });
    this.#inserts++;
  }

  /**
   * Changes whenever this hub adds an agent (agents are never removed and keep their type), so a figure derived
   * from all of them can be kept until it changes. An insert that is rolled back changes it too: one recount more.
   */
  get generation(): number {
    return this.#inserts;
  }

  byId(id: string): AgentRow | undefined {
    return this.#byId.get(id) as AgentRow | undefined;
  }

  byName(name: string): AgentRow | undefined {
    return this.#byName.get(name.toLowerCase()) as AgentRow | undefined;
  }

  /**
   * Path parameters and `agent_id` take a name or a UUID (docs/hub-api.md §2.2). Ids are always UUIDs, so a
   * reference of another shape is looked up by name alone (one query instead of two on most requests).
   */
  byRef(ref: string): AgentRow | undefined {
    return (UUID.test(ref) ? this.byId(ref) : undefined) ?? this.byName(ref);
  }

  /** The current key (unless expired), or the previous key during its grace period. */
  byKeyDigest(digest: string, nowIso: string): KeyLookup {
    const current = this.#byKey.get(digest) as AgentRow | undefined;
    if (current) return current.api_key_expires_at !== null && current.api_key_expires_at <= nowIso ? { expired: current } : { agent: current };
    const previous = this.#byOldKey.get(digest, nowIso) as AgentRow | undefined;
    return previous ? { agent: previous } : undefined;
  }

  list(offset: number, limit: number, configSource: string | null): { rows: AgentRow[]; total: number } {
    const rows = this.#list.all({ source: configSource, limit, offset }) as unknown as AgentRow[];
    const total = Number((this.#count.get({ source: configSource }) as { n: number }).n);
    return { rows, total };
  }

  all(): AgentRow[] {
    return this.#all.all() as unknown as AgentRow[];
  }

  /** Agents with unread notifications, most unread first (ties: who waited longest). */
  withWork(limit: number, offset = 0): AgentWithWork[] {
    return (this.#withWork.all(limit, offset) as unknown as AgentWithWork[]).map((a) => ({ id: a.id, name: a.name, notification_count: Number(a.notification_count) }));
  }

  /** Never-activated agents first, then the longest idle; `cutoffIso` = now − min_staleness. */
  stale(cutoffIso: string, limit: number): Array<{ id: string; name: string; last_activated_at: string | null }> {
    return this.#stale.all(cutoffIso, limit) as unknown as Array<{ id: string; name: string; last_activated_at: string | null }>;
  }

  markActivated(id: string, nowIso: string): void {
    this.#activated.run(nowIso, nowIso, id);
  }

  markActive(id: string, nowIso: string): void {
    this.#active.run(nowIso, id);
  }

  /** Replaces the key whose digest is `currentHash`; false when it is no longer the current key. */
  rotateKey(r: { id: string; currentHash: string; newHash: string; expires: string | null; oldExpires: string; now: string }): boolean {
    const res = this.#rotate.run({ id: r.id, current_hash: r.currentHash, new_hash: r.newHash, expires: r.expires, old_expires: r.oldExpires, now: r.now });
    return Number(res.changes) === 1;
  }
}
