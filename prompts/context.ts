// Builds what one activation sees (docs/agent-config.md §5), in the design's order: system prompt, skills, budget
// (the system part), then the task (a notification with its thread, or an exploration feed).
import type { BudgetHealth, Notification, Post } from '../hub-client/types.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { MemoryEntry } from '../memory/memory-store.ts';
import { renderBudget, type RemainingToday } from './budget.ts';
import { memoryTokenBudget, renderMemories } from './memories.ts';
import { renderSkills, selectSkills, type TaskSignals } from './skills.ts';
import { fill, loadTemplate } from './template.ts';
import { formatTime, quote, renderThread } from './thread.ts';
import { DEFAULT_TASK_TOKENS, estimateTokens } from './tokens.ts';

export interface BuiltContext {
  system: string;
  task: string;
}

/** What the activation knows beyond the definition and the task. All optional: missing parts are left out. */
export interface ContextOptions {
  /** The hub's budget-health for the agent; renders the System Resource Status block. */
  budget?: BudgetHealth;
  /** Posts and comments the agent may still write today. */
  remainingToday?: RemainingToday;
  /** Token budget of the task part (thread or feed). */
  taskTokens?: number;
  /** Whether a program is installed here; skills whose `requires_cli` is not are left out. Unset: not checked. */
  cliAvailable?: (cli: string) => boolean;
  /** What the agent recalled for this task, best first (memory/); rendered within the task's token budget. */
  memories?: readonly MemoryEntry[];
  /** Notes for this run from warren (what became of the agent's proposals of new agents), shown before the budget. */
  notes?: readonly string[];
}

const TYPE_LABELS: Record<Notification['type'], string> = {
  mention: 'You were mentioned',
  reply: 'Someone replied to you',
  follow: 'Someone followed you',
  like: 'Someone liked your post',
  dm: 'Someone sent you a direct message',
};

/** The agent's system-prompt.md with {{name}} and {{description}} filled; the default template when empty. */
export function renderSystemPrompt(def: AgentDefinition): string {
  const { grants, skills } = def.config.capabilities;
  const vars = {
    name: def.config.display_name ?? def.name,
    description: def.config.description ?? '',
    grants: grants.length ? grants.join(', ') : 'none',
    skills: skills.length ? skills.join(', ') : 'none listed',
  };
  const own = def.systemPrompt.trim();
  return fill(own === '' ? loadTemplate('default-system', def.shared?.templates) : own, vars).trim();
}

/**
 * System prompt, then the skills this task gets, then what the agent remembers, then the budget block. Memory
 * shares the task's token budget: `taskUsed` is what the rendered task (thread, feed) already takes of it.
 */
export function renderSystem(def: AgentDefinition, task: TaskSignals, opts: ContextOptions = {}, taskUsed = 0): string {
  const skills = renderSkills(selectSkills(def.shared?.skills ?? [], def.config, task, opts.cliAvailable));
  const memory = renderMemories(opts.memories ?? [], memoryTokenBudget(opts.taskTokens ?? DEFAULT_TASK_TOKENS, taskUsed));
  const budget = opts.budget ? renderBudget(opts.budget, opts.remainingToday) : '';
  const notes = opts.notes?.length ? `## Notes for you\n${opts.notes.map((n) => `- ${n}`).join('\n')}` : '';
  return [renderSystemPrompt(def), skills, memory, notes, budget].filter(Boolean).join('\n\n');
}

export function buildNotificationContext(def: AgentDefinition, post: Post, notification: Notification, opts: ContextOptions = {}): BuiltContext {
  const thread = renderThread(post, { newCommentId: notification.comment_id, tokenBudget: opts.taskTokens ?? DEFAULT_TASK_TOKENS });
  const task = fill(loadTemplate('notification-task', def.shared?.templates), {
    thread,
    type_label: TYPE_LABELS[notification.type],
    from: notification.from.name,
    time: formatTime(notification.created_at),
    content: notification.content ? quote(notification.content) : '(none)',
  });
  const signals: TaskSignals = {
    text: [post.title ?? '', post.content, notification.content ?? ''].join('\n'),
    communities: post.community ? [post.community] : [],
  };
  return { system: renderSystem(def, signals, opts, estimateTokens(thread)), task: task.trim() };
}
