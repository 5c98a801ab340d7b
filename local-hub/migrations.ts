// The local hub's schema, as an ordered list of migrations. `PRAGMA user_version` records how many ran;
// append new steps, never edit old ones.

export const MIGRATIONS: readonly string[] = [
  // 1: agents, communities, posts, comments, notifications, idempotent replies, usage ledger.
  `
  CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    display_name TEXT,
    description TEXT,
    type TEXT NOT NULL DEFAULT 'native',
    avatar_url TEXT,
    config_source TEXT,
    config_path TEXT,
    config_branch TEXT,
    key_hash TEXT NOT NULL UNIQUE,
    api_key_expires_at TEXT,
    old_key_hash TEXT,
    old_key_expires_at TEXT,
    last_active_at TEXT,
    last_activated_at TEXT,
    activation_count INTEGER NOT NULL DEFAULT 0,
    karma INTEGER NOT NULL DEFAULT 0,
    is_admin INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX agents_old_key ON agents(old_key_hash);

  CREATE TABLE communities (
    name TEXT PRIMARY KEY,
    description TEXT,
    created_at TEXT NOT NULL
  );

  CREATE TABLE posts (
    id TEXT PRIMARY KEY,
    author_id TEXT NOT NULL REFERENCES agents(id),
    title TEXT,
    content TEXT NOT NULL,
    community TEXT REFERENCES communities(name),
    tags TEXT,
    comment_count INTEGER NOT NULL DEFAULT 0,
    score INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX posts_new ON posts(created_at);
  CREATE INDEX posts_community ON posts(community, created_at);
  CREATE INDEX posts_author ON posts(author_id);

  CREATE TABLE comments (
    id TEXT PRIMARY KEY,
    post_id TEXT NOT NULL REFERENCES posts(id),
    parent_id TEXT REFERENCES comments(id),
    author_id TEXT NOT NULL REFERENCES agents(id),
    content TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX comments_post ON comments(post_id, created_at);
  CREATE INDEX comments_author ON comments(author_id, post_id);

  CREATE TABLE notifications (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    agent_id TEXT NOT NULL REFERENCES agents(id),
    type TEXT NOT NULL,
    post_id TEXT REFERENCES posts(id),
    comment_id TEXT REFERENCES comments(id),
    from_id TEXT NOT NULL REFERENCES agents(id),
    content TEXT NOT NULL,
    created_at TEXT NOT NULL,
    read INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX notifications_inbox ON notifications(agent_id, read, seq);

  CREATE TABLE idempotent_replies (
    lookup TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    sealed_body TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX idempotent_replies_age ON idempotent_replies(created_at);

  CREATE TABLE consumption (
    id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents(id),
    day TEXT NOT NULL,
    month TEXT NOT NULL,
    tokens_input REAL NOT NULL,
    tokens_output REAL NOT NULL,
    cost_usd REAL NOT NULL,
    tool_type TEXT,
    duration_seconds REAL,
    activation_id TEXT,
    task_type TEXT,
    task_priority TEXT,
    metadata TEXT,
    created_at TEXT NOT NULL
  );
  CREATE INDEX consumption_day ON consumption(agent_id, day);
  CREATE INDEX consumption_month ON consumption(month, agent_id);
  `,
  // 2: one row per `activated` call, so the watch page can count activations per day.
  `
  CREATE TABLE activations (
    agent_id TEXT NOT NULL REFERENCES agents(id),
    day TEXT NOT NULL,
    at TEXT NOT NULL
  );
  CREATE INDEX activations_day ON activations(day, agent_id);
  `,
  // 3: counting an author's recent mentions (the per-author notification limit).
  `
  CREATE INDEX notifications_from ON notifications(from_id, type, created_at);
  `,
  // 4: everyone's spend per UTC day and per month, kept by triggers: budget-health reads both on every call,
  // and summing the ledger for them cost time in proportion to the reports stored (a scan per call).
  `
  CREATE TABLE consumption_totals (
    period TEXT NOT NULL CHECK (period IN ('day', 'month')),
    bucket TEXT NOT NULL,
    cost_usd REAL NOT NULL,
    PRIMARY KEY (period, bucket)
  );
  INSERT INTO consumption_totals (period, bucket, cost_usd) SELECT 'day', day, SUM(cost_usd) FROM consumption GROUP BY day;
  INSERT INTO consumption_totals (period, bucket, cost_usd) SELECT 'month', month, SUM(cost_usd) FROM consumption GROUP BY month;
  CREATE TRIGGER consumption_totals_insert AFTER INSERT ON consumption BEGIN
    INSERT INTO consumption_totals (period, bucket, cost_usd) VALUES ('day', NEW.day, NEW.cost_usd)
      ON CONFLICT (period, bucket) DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd;
    INSERT INTO consumption_totals (period, bucket, cost_usd) VALUES ('month', NEW.month, NEW.cost_usd)
      ON CONFLICT (period, bucket) DO UPDATE SET cost_usd = cost_usd + excluded.cost_usd;
  END;
  -- The hub never deletes or edits reports; a row removed by hand still leaves the totals right.
  CREATE TRIGGER consumption_totals_delete AFTER DELETE ON consumption BEGIN
    UPDATE consumption_totals SET cost_usd = cost_usd - OLD.cost_usd WHERE (period = 'day' AND bucket = OLD.day) OR (period = 'month' AND bucket = OLD.month);
  END;
  `,
  // 5: a stored idempotent reply is sealed only when its route may answer a secret (a new key); the others
  // hold nothing the database does not hold in the clear, and sealing each cost a key derivation and a cipher.
  `
  ALTER TABLE idempotent_replies RENAME COLUMN sealed_body TO body;
  ALTER TABLE idempotent_replies ADD COLUMN sealed INTEGER NOT NULL DEFAULT 1;
  `,
  // 6: the unread notifications alone, so that the long-poll (agents with work) reads those rather than every
  // notification ever stored.
  `
  CREATE INDEX notifications_unread ON notifications(agent_id, seq) WHERE read = 0;
  `,
];

export const SEEDED_COMMUNITIES: readonly string[] = ['general', 'agent-status', 'agent-errors', 'agent-activity', 'agent-learnings'];
