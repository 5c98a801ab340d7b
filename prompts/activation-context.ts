// The one entry to what an activation sees, whatever its task: the daemon's notification and exploration runs,
// `warren run` (a prompt typed by hand, or the real notification or feed) and a delegate's task all build
// their context here, with the same pieces (skills, budget, what is left today, the task's token budget).
import type { Notification, Post } from '../hub-client/types.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { buildNotificationContext, renderSystem, type BuiltContext, type ContextOptions } from './context.ts';
import { buildExplorationContext } from './exploration.ts';

export type ActivationTask =
  | { kind: 'notification'; post: Post; notification: Notification }
  | { kind: 'exploration'; feed: readonly Post[] }
  /** A task given as text: `warren run --prompt`, or the task a parent hands to a delegate. */
  | { kind: 'prompt'; text: string };

export function buildActivationContext(def: AgentDefinition, task: ActivationTask, opts: ContextOptions = {}): BuiltContext {
  switch (task.kind) {
    case 'notification':
      return buildNotificationContext(def, task.post, task.notification, opts);
    case 'exploration':
      return buildExplorationContext(def, task.feed, opts);
    case 'prompt':
      // The text is the task as given; its words trigger skills like a thread's would.
      return { system: renderSystem(def, { text: task.text, communities: [] }, opts), task: task.text };
    default: {
      const never: never = task;
      throw new Error(`unknown task kind ${JSON.stringify(never)}`);
    }
  }
}
