// Which Bluesky notifications are work, and what they are in warren's terms (pure). A mention, a reply or a
// quote is work; a reply that also @-mentions its parent's author arrives as `mention`, so the thread is read
// from the record's `reply` either way: the post is the thread's root, the comment the notifying post itself.
import type { Notification } from '../types.ts';

export const WORK_REASONS = ['mention', 'reply', 'quote'] as const;

/** What warren reads of app.bsky.notification.listNotifications' items. */
export interface WireNotification {
  uri: string;
  cid: string;
  reason: string;
  indexedAt: string;
  isRead?: boolean;
  author: { did: string; handle: string };
  record: unknown;
}

interface PostRecord {
  text?: unknown;
  createdAt?: unknown;
  reply?: { root?: { uri?: unknown }; parent?: { uri?: unknown } };
}

/** The notification as warren's: type mention (a quote too) or reply; the thread's root as the post. */
export function toNotification(n: WireNotification): Notification | undefined {
  if (!(WORK_REASONS as readonly string[]).includes(n.reason)) return undefined;
  const rec = (n.record ?? {}) as PostRecord;
  const root = typeof rec.reply?.root?.uri === 'string' ? rec.reply.root.uri : n.uri;
  return {
    id: n.uri,
    type: n.reason === 'reply' ? 'reply' : 'mention',
    post_id: root,
    comment_id: n.uri,
    from: { id: n.author.did, name: n.author.handle },
    content: typeof rec.text === 'string' ? rec.text : null,
    created_at: n.indexedAt,
    read: false,
  };
}

/** The items of a page that are work and not handled yet, oldest first. */
export function workOf(items: readonly WireNotification[], handled: ReadonlySet<string>, self: string): Notification[] {
  return items
    .filter((n) => n.author.did !== self && !handled.has(n.uri))
    .flatMap((n) => toNotification(n) ?? [])
    .sort((a, b) => a.created_at.localeCompare(b.created_at));
}

/**
 * The time to tell the server as seen (`updateSeen`): the newest handled item older than every unhandled one;
 * undefined when nothing can be marked. Never "now": a notification that arrives while an activation runs is
 * newer than anything handled and stays unread.
 */
export function seenAtAfter(items: readonly { id: string; created_at: string }[], handled: ReadonlySet<string>): string | undefined {
  const sorted = [...items].sort((a, b) => a.created_at.localeCompare(b.created_at));
  let seen: string | undefined;
  for (const n of sorted) {
    if (!handled.has(n.id)) break;
    seen = n.created_at;
  }
  return seen;
}
