// What warren says on an A2A task (pure): the text of a message, an agent's message of one text part, a task ended
// with its reason, the answer as the task's one artifact. Plain objects of the SDK's types: nothing here loads it.
import type { Artifact, Message, Task } from '@a2a-js/sdk';
import { Role, type TaskState } from './a2a-enums.ts';

/** The text parts of a message, joined; what the agent reads. Pure. */
export function messageText(message: Message | undefined): string {
  return (message?.parts ?? [])
    .map((p) => (p.content?.$case === 'text' ? p.content.value : p.content?.$case === 'data' ? JSON.stringify(p.content.value) : ''))
    .filter((t) => t.length > 0)
    .join('\n');
}

/** An agent's message of one text part (a status's reason, an answer). */
export function agentMessage(task: Pick<Task, 'id' | 'contextId'>, text: string, messageId: string): Message {
  return { messageId, contextId: task.contextId, taskId: task.id, role: Role.ROLE_AGENT, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] };
}

/** `task` ended in `state` with `reason` said to its caller. Pure. */
export function ended(task: Task, state: TaskState, reason: string, now: Date): Task {
  return { ...task, status: { state, message: agentMessage(task, reason, `${task.id}:status:${state}`), timestamp: now.toISOString() } };
}

/** The task's answer as its one artifact (ids derived from the task: the same on every retry, so a newer one replaces it). Pure. */
export function answerArtifact(task: Pick<Task, 'id' | 'contextId'>, text: string): Artifact {
  return { artifactId: `${task.id}:answer`, name: 'answer', description: "the agent's answer", parts: agentMessage(task, text, `${task.id}:answer`).parts, metadata: undefined, extensions: [] };
}
