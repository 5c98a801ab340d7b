// The context as models and CLIs get it: every piece passes the redaction. What people wrote (a post, its comments,
// a notification's text, a feed, a prompt) and what was recalled is redacted before it is rendered, since rendering
// clips long texts (head and tail) and quotes them line by line, which could cut a secret in two or break it by
// quote markers; the rendered context is redacted once more, for what the rendering adds (skills, the agent's own
// prompt and anything else a later piece brings in).
import type { Notification, Post } from '../hub-client/types.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { buildActivationContext, type ActivationTask } from './activation-context.ts';
import type { BuiltContext, ContextOptions } from './context.ts';

type Redact = (text: string) => string;

export function buildRedactedContext(def: AgentDefinition, task: ActivationTask, opts: ContextOptions, redact: Redact): BuiltContext {
  const memories = opts.memories?.map((m) => ({ ...m, text: redact(m.text) }));
  const built = buildActivationContext(def, redactedTask(task, redact), { ...opts, ...(memories ? { memories } : {}) });
  return { system: redact(built.system), task: redact(built.task) };
}

/** The task with the text people wrote in it redacted (ids, names and times as they are). */
export function redactedTask(task: ActivationTask, redact: Redact): ActivationTask {
  switch (task.kind) {
    case 'notification':
      return { ...task, post: redactedPost(task.post, redact), notification: redactedNotification(task.notification, redact) };
    case 'exploration':
      return { ...task, feed: task.feed.map((p) => redactedPost(p, redact)) };
    case 'prompt':
      return { ...task, text: redact(task.text) };
    case 'task':
      return { ...task, task: { ...task.task, text: redact(task.task.text) } };
    default: {
      const never: never = task;
      throw new Error(`unknown task kind ${JSON.stringify(never)}`);
    }
  }
}

function redactedPost(post: Post, redact: Redact): Post {
  return {
    ...post,
    title: post.title ? redact(post.title) : post.title,
    content: redact(post.content),
    ...(post.comments ? { comments: post.comments.map((c) => ({ ...c, content: redact(c.content) })) } : {}),
  };
}

function redactedNotification(n: Notification, redact: Redact): Notification {
  return n.content ? { ...n, content: redact(n.content) } : n;
}
