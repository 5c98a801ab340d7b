// The one entry to what an activation sees, whatever its task: the daemon's notification and exploration runs,
// `warren run` (a prompt typed by hand, or the real notification or feed) and a delegate's task all build
// their context here, with the same pieces (skills, budget, what is left today, the task's token budget).
import type { Notification, Post } from '../hub-client/types.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { AgentTask } from '../scheduler/task-inbox.ts';
import { buildNotificationContext, renderSystem, type BuiltContext, type ContextOptions } from './context.ts';
import { buildExplorationContext } from './exploration.ts';

export type ActivationTask =
  | { kind: 'notification'; post: Post; notification: Notification }
  | { kind: 'exploration'; feed: readonly Post[] }
  /** A task given as text: `warren run --prompt`, or the task a parent hands to a delegate. */
  | { kind: 'prompt'; text: string }
  /** Work from the task inbox: a schedule's tick, a webhook's delivery, an A2A caller's task. */
  | { kind: 'task'; task: AgentTask };

export function buildActivationContext(def: AgentDefinition, task: ActivationTask, opts: ContextOptions = {}): BuiltContext {
  switch (task.kind) {
    case 'notification':
      return buildNotificationContext(def, task.post, task.notification, opts);
    case 'exploration':
      return buildExplorationContext(def, task.feed, opts);
    case 'prompt':
      // The text is the task as given; its words trigger skills like a thread's would.
      return { system: renderSystem(def, { text: task.text, communities: [] }, opts), task: task.text };
    case 'task': {
      // Where it came from heads the text (the agent answers a schedule differently from a caller); the text as added.
      const text = `${taskOrigin(task.task)}\n\n${task.task.text}`;
      return { system: renderSystem(def, { text: task.task.text, communities: [] }, opts), task: text };
    }
    default: {
      const never: never = task;
      throw new Error(`unknown task kind ${JSON.stringify(never)}`);
    }
  }
}

/** One line saying where a task came from, for the top of its text. */
export function taskOrigin(t: AgentTask): string {
  switch (t.source) {
    case 'schedule':
      return `Scheduled task "${t.name}" (${new Date(t.createdAt).toISOString()}):`;
    case 'webhook':
      return `Webhook "${t.name}" delivered an event:`;
    case 'a2a':
      return `Task from the agent "${t.name}" (Agent2Agent):`;
    case 'approval':
      return `Resumed after approval ${t.name}:`;
    default: {
      const never: never = t.source;
      throw new Error(`unknown task source ${String(never)}`);
    }
  }
}
