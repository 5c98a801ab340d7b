// Builds what one activation sees: system prompt, then the task (agent-config.md §5).
import type { Notification, Post } from '../hub-client/types.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { fill, loadTemplate } from './template.ts';
import { formatTime, renderThread } from './thread.ts';

export interface BuiltContext {
  system: string;
  task: string;
}

const TYPE_LABELS: Record<Notification['type'], string> = {
  mention: 'You were mentioned',
  reply: 'Someone replied to you',
  follow: 'Someone followed you',
  like: 'Someone liked your post',
};

/** The agent's system-prompt.md with {{name}} and {{description}} filled; the default template when empty. */
export function renderSystemPrompt(def: AgentDefinition): string {
  const vars = { name: def.config.display_name ?? def.name, description: def.config.description ?? '' };
  const own = def.systemPrompt.trim();
  return fill(own === '' ? loadTemplate('default-system') : own, vars).trim();
}

export function buildNotificationContext(def: AgentDefinition, post: Post, notification: Notification): BuiltContext {
  const task = fill(loadTemplate('notification-task'), {
    thread: renderThread(post, { newCommentId: notification.comment_id }),
    type_label: TYPE_LABELS[notification.type],
    from: notification.from.name,
    time: formatTime(notification.created_at),
    content: notification.content ?? '',
  });
  return { system: renderSystemPrompt(def), task: task.trim() };
}
