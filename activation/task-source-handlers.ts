// What a task's source hears as the task goes (README "Approvals", "A2A"): how it ended, and that it waits for a
// person's approval. The A2A server answers its caller from these; a schedule or a webhook has nobody to tell.
import type { AgentTask } from '../scheduler/task-inbox.ts';

/** How a task ended, as its source hears it: an answer (maybe empty), or why it failed for good. */
export type TaskEnded = { kind: 'answered'; text: string; activationId: string } | { kind: 'failed'; message: string; activationId: string };
export type TaskEndingHandler = (agent: string, task: AgentTask, ended: TaskEnded) => Promise<void>;

/** A task whose run stopped for approval: the request that waits, and the tools it names. */
export interface TaskWait {
  approvalId: string;
  tools: readonly string[];
  activationId: string;
}
/** Told each time a task's run stops for approval; the task is still under way (answered after the decision). */
export type TaskWaitHandler = (agent: string, task: AgentTask, wait: TaskWait) => Promise<void>;

/** The task a paused run was answering, as its source knows it (rebuilt from the approval request's origin; pure). */
export function pausedTask(origin: { taskId: string; source: AgentTask['source']; name: string; meta?: Record<string, string> | undefined }): AgentTask {
  return { id: origin.taskId, source: origin.source, name: origin.name, text: '', createdAt: 0, ...(origin.meta ? { meta: origin.meta } : {}) };
}
