// Who has work: the hub's agents with unread notifications, narrowed to the agents this daemon runs.
import type { AgentWithWork } from '../hub-client/types.ts';

/** Most unread first (the hub already orders so; re-sorting keeps the rule local and testable). */
export function selectInboxWork(withWork: readonly AgentWithWork[], runnable: ReadonlySet<string>): AgentWithWork[] {
  return withWork.filter((a) => runnable.has(a.name)).sort((a, b) => b.notification_count - a.notification_count || a.name.localeCompare(b.name));
}
