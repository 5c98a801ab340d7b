// A2A tasks that wait for their agent (paused, a failure backoff, quiet hours, the hub's budget at critical) are not
// refused: they stay SUBMITTED and say why, in their status message, to a caller that streams or asks GetTask. The
// scheduler's task round tells each hold (onTasksHeld); a task's message is written only when it says something new
// (the store's forward-only write keeps it from overwriting a task that started meanwhile).
import type { Task } from '@a2a-js/sdk';
import type { Logger } from 'pino';
import { describeHold, type Hold } from '../../scheduler/held-mentions.ts';
import { TaskState } from './a2a-enums.ts';
import { agentMessage, messageText } from './a2a-messages.ts';
import type { A2ANews } from './a2a-news.ts';
import type { RedisA2ATaskStore } from './a2a-task-store.ts';

/** The same hold of one agent is looked at again after this long (tasks that came meanwhile hear of it then). */
export const WAIT_NOTE_MS = 5_000;
/** Most of the newest tasks looked through for an agent's waiting ones. */
const WAITING_SCAN = 1_000;

/** What a waiting task tells its caller. Pure. */
export function waitingText(agent: string, hold: Hold): string {
  return `waiting, not refused: ${describeHold(agent, { reason: hold.reason, runs_at: hold.runsAt === null ? null : new Date(hold.runsAt).toISOString() })}`;
}

/** `task` still SUBMITTED, saying `text`; undefined when it is under way or ended, or says it already. Pure. */
export function waitingTask(task: Task, text: string, now: Date): Task | undefined {
  const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
  if (state !== TaskState.TASK_STATE_SUBMITTED && state !== TaskState.TASK_STATE_UNSPECIFIED) return undefined;
  if (messageText(task.status?.message) === text) return undefined;
  return { ...task, status: { state: TaskState.TASK_STATE_SUBMITTED, message: agentMessage(task, text, `${task.id}:waiting:${now.getTime()}`), timestamp: now.toISOString() } };
}

export interface A2AWaitingDeps {
  store: RedisA2ATaskStore;
  news: A2ANews;
  /** Whether the agent is served over A2A (only then are its tasks looked for). */
  serves: (agent: string) => boolean;
  logger: Logger;
}

export class A2AWaiting {
  readonly #d: A2AWaitingDeps;
  /** Per agent, the hold last written and when. */
  readonly #last = new Map<string, { text: string; at: number }>();

  constructor(deps: A2AWaitingDeps) {
    this.#d = deps;
  }

  /** The scheduler's `onTasksHeld`: the agent's waiting tasks say why (at most every WAIT_NOTE_MS per hold). */
  note(agent: string, hold: Hold, now = Date.now()): void {
    if (!this.#d.serves(agent)) return;
    const text = waitingText(agent, hold);
    const last = this.#last.get(agent);
    if (last && last.text === text && now - last.at < WAIT_NOTE_MS) return;
    this.#last.set(agent, { text, at: now });
    void this.#mark(agent, text, new Date(now)).catch((err: unknown) => this.#d.logger.warn({ err, agent }, 'could not tell waiting A2A tasks why they wait'));
  }

  async #mark(agent: string, text: string, now: Date): Promise<void> {
    const { store, news, logger } = this.#d;
    for (const s of await store.recent(WAITING_SCAN)) {
      if (s.agent !== agent || s.state !== 'submitted') continue;
      const got = await store.read(s.id);
      const next = got && waitingTask(got.task, text, now);
      if (!next || !(await store.write(next, got.agent, got.caller))) continue;
      logger.info({ agent, task: s.id, caller: got.caller }, `A2A task ${text}`);
      await news.publish({ kind: 'changed', taskId: s.id });
    }
  }
}
