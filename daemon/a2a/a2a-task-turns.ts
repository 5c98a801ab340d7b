// The worker's side of an A2A task, in whichever daemon runs it: the turn's start marks the task WORKING (and
// listens for its caller's cancel, which aborts the turn), its end writes COMPLETED with the answer as the artifact,
// or FAILED with the reason. Both go through the store's forward-only write, so a retried or doubled turn
// (SIGKILL mid-task) answers the caller once; each change is then announced to the daemon holding the request.
import type { Task } from '@a2a-js/sdk';
import type { Logger } from 'pino';
import type { TaskEnded, TaskEndingHandler, TaskStartHandler, TaskWaitHandler, TaskWatch } from '../../activation/activation.ts';
import type { AgentTask } from '../../scheduler/task-inbox.ts';
import { TaskState } from './a2a-enums.ts';
import { agentMessage, answerArtifact, ended } from './a2a-messages.ts';
import type { A2ANews } from './a2a-news.ts';
import { PartialAnswer } from './a2a-partial-answer.ts';
import { TERMINAL_STATES, type RedisA2ATaskStore } from './a2a-task-store.ts';

export interface A2ATaskTurnsDeps {
  store: RedisA2ATaskStore;
  news: A2ANews;
  /** Applied to what a turn says before it is sent on. */
  redact: (text: string) => string;
  logger: Logger;
}

/** The task as it ends: the answer as one artifact (ids derived from the task: the same on every retry). Pure. */
export function endedTask(task: Task, how: TaskEnded, now: Date): Task {
  if (how.kind === 'failed') return ended(task, TaskState.TASK_STATE_FAILED, how.message, now);
  const answer = agentMessage(task, how.text, `${task.id}:answer`);
  return {
    ...task,
    artifacts: [answerArtifact(task, how.text)],
    status: { state: TaskState.TASK_STATE_COMPLETED, message: answer, timestamp: now.toISOString() },
  };
}

export class A2ATaskTurns {
  readonly #d: A2ATaskTurnsDeps;

  constructor(deps: A2ATaskTurnsDeps) {
    this.#d = deps;
  }

  /** activation deps' `taskStarts.a2a`. */
  readonly start: TaskStartHandler = async (agent, task) => {
    const { store, news, logger } = this.#d;
    const cancel = new AbortController();
    const taskId = a2aTaskId(task);
    const stop = news.listen(taskId, (n) => {
      if (n.kind === 'cancel') cancel.abort();
    });
    // What the turn says as it goes, to the request that streams it (wherever it is held).
    const partial = new PartialAnswer((text) => void news.publish({ kind: 'partial', taskId, text }).catch((err: unknown) => logger.debug({ err, task: taskId }, 'a partial answer was not sent')), this.#d.redact);
    const watch: TaskWatch = {
      cancelled: cancel.signal,
      close: () => {
        partial.stop();
        stop();
      },
      onEvent: (e) => {
        if (e.type === 'model_call') partial.reset();
        else if (e.type === 'model_delta') partial.push(e.text);
      },
    };
    const got = await store.read(taskId);
    if (!got) {
      logger.warn({ agent, task: taskId }, 'an A2A task is not in the store (expired?); it runs without a caller to tell');
      return watch;
    }
    const state = got.task.status?.state;
    // Cancelled (or ended) while it waited: the turn is not run.
    if (state !== undefined && TERMINAL_STATES.includes(state)) cancel.abort();
    else if (state !== TaskState.TASK_STATE_WORKING) {
      const working: Task = { ...got.task, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: new Date().toISOString() } };
      if (await store.write(working, got.agent, got.caller)) await news.publish({ kind: 'changed', taskId });
    }
    return watch;
  };

  /** activation deps' `taskEndings.a2a`. */
  readonly end: TaskEndingHandler = async (agent, task, how) => {
    const { store, news, logger } = this.#d;
    const taskId = a2aTaskId(task);
    const got = await store.read(taskId);
    if (!got) return void logger.warn({ agent, task: taskId }, 'an A2A task ended but is not in the store (expired?); its caller is not told');
    const written = await store.write(endedTask(got.task, how, new Date()), got.agent, got.caller);
    if (!written) return; // it ended before (answered by an earlier run, or cancelled): told once
    logger.info({ agent, task: taskId, caller: got.caller, outcome: how.kind }, 'A2A task ended');
    await news.publish({ kind: 'changed', taskId });
  };

  /** activation deps' `taskWaits.a2a`: the task stays WORKING, its status message saying what waits for approval. */
  readonly waits: TaskWaitHandler = async (agent, task, wait) => {
    const { store, news, logger } = this.#d;
    const taskId = a2aTaskId(task);
    const got = await store.read(taskId);
    if (!got) return void logger.warn({ agent, task: taskId }, 'an A2A task waits for approval but is not in the store (expired?)');
    const written = await store.write(waitingTask(got.task, wait.approvalId, wait.tools, new Date()), got.agent, got.caller);
    if (!written) return; // ended meanwhile (cancelled by its caller): nothing to say
    logger.info({ agent, task: taskId, approval: wait.approvalId }, 'A2A task waits for approval');
    await news.publish({ kind: 'changed', taskId });
  };
}

/** The task while a call of its run waits for a person's approval: still WORKING, and saying so. Pure. */
export function waitingTask(task: Task, approvalId: string, tools: readonly string[], now: Date): Task {
  const text = `waiting for a person's approval of ${tools.join(', ')} (approval ${approvalId}); the task goes on once someone decides`;
  return { ...task, status: { state: TaskState.TASK_STATE_WORKING, message: agentMessage(task, text, `${task.id}:approval:${approvalId}`), timestamp: now.toISOString() } };
}

/** The A2A task id behind an inbox task (`a2a:<taskId>`). */
function a2aTaskId(task: AgentTask): string {
  return task.meta?.taskId ?? task.id.replace(/^a2a:/, '');
}
