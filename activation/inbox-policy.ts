// Which notifications an agent answers, per its behavior.respond_to_* flags.
import type { Notification } from '../hub-client/types.ts';

export interface RespondFlags {
  respond_to_mentions: boolean;
  respond_to_replies: boolean;
  respond_to_dms: boolean;
}

/** Oldest first, so a conversation is answered in the order it happened. */
export function partitionInbox(notifications: readonly Notification[], flags: RespondFlags): { actionable: Notification[]; ignorable: Notification[] } {
  const actionable: Notification[] = [];
  const ignorable: Notification[] = [];
  const sorted = [...notifications].sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at));
  for (const n of sorted) {
    const wanted = (n.type === 'mention' && flags.respond_to_mentions) || (n.type === 'reply' && flags.respond_to_replies) || (n.type === 'dm' && flags.respond_to_dms);
    (wanted ? actionable : ignorable).push(n);
  }
  return { actionable, ignorable };
}
