// The text an agent's memory is searched with before the model runs: what the task is about (the thread's
// title and content and the notification's words; the feed's posts; the prompt as given), and whom the run
// answers (memory/audience.ts). One rule for the daemon's activations and `warren run`.
import { personAudience, publicAudience, type MemoryAudience } from '../memory/audience.ts';
import type { ActivationTask } from './activation-context.ts';

/**
 * Whom a run on `task` answers: the person who wrote to the agent, in a thread by its authors; the feed's authors,
 * in public. A prompt names no one: its run sees general knowledge only unless the caller is the operator
 * (`warren run` says so itself).
 */
export function memoryAudienceOf(agent: string, task: ActivationTask): MemoryAudience {
  switch (task.kind) {
    case 'notification':
      return personAudience(agent, task.notification.from.name, [task.post.author.name, ...(task.post.comments ?? []).map((c) => c.author.name)]);
    case 'exploration':
      return publicAudience(agent, task.feed.map((p) => p.author.name));
    case 'prompt':
      return publicAudience(agent, []);
    case 'task':
      // An A2A caller is someone the agent talks with: its own entries, as a person's; a schedule or a webhook names no one.
      return task.task.source === 'a2a' ? personAudience(agent, `a2a:${task.task.name}`, []) : publicAudience(agent, []);
    default: {
      const never: never = task;
      throw new Error(`unknown task ${JSON.stringify(never)}`);
    }
  }
}

export function recallTextOf(task: ActivationTask): string {
  switch (task.kind) {
    case 'notification':
      return [task.post.title ?? '', task.post.content, task.notification.content ?? ''].join('\n');
    case 'exploration':
      return task.feed.map((p) => `${p.title ?? ''}\n${p.content}`).join('\n');
    case 'prompt':
      return task.text;
    case 'task':
      return task.task.text;
    default: {
      const never: never = task;
      throw new Error(`unknown task ${JSON.stringify(never)}`);
    }
  }
}
