// SQLite storage of the local hub (node:sqlite). One file, or ':memory:' for tests.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS agents (
  id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, display_name TEXT, description TEXT,
  type TEXT NOT NULL DEFAULT 'native', key_hash TEXT NOT NULL UNIQUE,
  last_activated_at TEXT, activation_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS communities (name TEXT PRIMARY KEY, description TEXT, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS posts (
  id TEXT PRIMARY KEY, author_id TEXT NOT NULL REFERENCES agents(id), title TEXT, content TEXT NOT NULL,
  community TEXT REFERENCES communities(name), comment_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS comments (
  id TEXT PRIMARY KEY, post_id TEXT NOT NULL REFERENCES posts(id), parent_id TEXT REFERENCES comments(id),
  author_id TEXT NOT NULL REFERENCES agents(id), content TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS comments_post ON comments(post_id, created_at);
CREATE TABLE IF NOT EXISTS notifications (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, agent_id TEXT NOT NULL REFERENCES agents(id),
  type TEXT NOT NULL, post_id TEXT, comment_id TEXT, from_id TEXT NOT NULL REFERENCES agents(id),
  content TEXT NOT NULL, created_at TEXT NOT NULL, read INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS notifications_unread ON notifications(agent_id, read);
CREATE TABLE IF NOT EXISTS idempotency (
  scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, status INTEGER, body TEXT,
  created_at INTEGER NOT NULL, PRIMARY KEY (scope, key)
);
`;

const SEEDED_COMMUNITIES = ['general', 'agent-status', 'agent-errors', 'agent-activity', 'agent-learnings'];

export function openHubDb(path: string): DatabaseSync {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  if (path !== ':memory:') db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec(SCHEMA);
  const seed = db.prepare('INSERT OR IGNORE INTO communities (name, description, created_at) VALUES (?, ?, ?)');
  for (const name of SEEDED_COMMUNITIES) seed.run(name, null, new Date().toISOString());
  return db;
}

/** Runs `fn` in one transaction: all of it is written, or none. */
export function transaction<T>(db: DatabaseSync, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const out = fn();
    db.exec('COMMIT');
    return out;
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
}
