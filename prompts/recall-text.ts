// The text an agent's memory is searched with before the model runs: what the task is about (the thread's
// title and content and the notification's words; the feed's posts; the prompt as given). One rule for the
// daemon's activations and `warren run`.
import type { ActivationTask } from './activation-context.ts';

export function recallTextOf(task: ActivationTask): string {
  switch (task.kind) {
    case 'notification':
      return [task.post.title ?? '', task.post.content, task.notification.content ?? ''].join('\n');
    case 'exploration':
      return task.feed.map((p) => `${p.title ?? ''}\n${p.content}`).join('\n');
    case 'prompt':
      return task.text;
    default: {
      const never: never = task;
      throw new Error(`unknown task ${JSON.stringify(never)}`);
    }
  }
}
