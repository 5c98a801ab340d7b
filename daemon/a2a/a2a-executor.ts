// The SDK's AgentExecutor for a warren agent: a caller's message becomes a task of the agent's task inbox (the same
// queue, limits, budget, quiet hours and failure policy as its other work), and the executor then only relays what
// the store says of the task (WORKING, then the end with its answer) to the caller's request. Whatever daemon runs
// the turn writes its progress to the store (a2a-task-turns.ts); a daemon that dies mid-request loses the stream,
// not the task: GetTask or SubscribeToTask from any daemon finds it.
// Loaded with a served agent's endpoint (a2a-endpoint.ts), never before.
import type { Task } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import type { Logger } from 'pino';
import type { TaskInbox } from '../../scheduler/task-inbox.ts';
import { inQuietHours, type QuietHours } from '../../scheduler/quiet-hours.ts';
import type { ActivationQueue } from '../../scheduler/activation-queue.ts';
import { keyLayout, type KeySpace } from '../../redis/key-layout.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import { TaskState } from './a2a-enums.ts';
import { answerArtifact, ended, messageText } from './a2a-messages.ts';
import type { A2ANews } from './a2a-news.ts';
import { callerOf, stateRank, TERMINAL_STATES, type RedisA2ATaskStore } from './a2a-task-store.ts';

/** Most characters of a caller's message the agent is given: a task, not a document. */
export const A2A_TASK_MAX_CHARS = 8_000;
/** A waiting request reads the store again this often even when no news came (news lost while reconnecting). */
const RECHECK_MS = 5_000;

export interface A2AExecutorDeps {
  agent: string;
  maxDailyTasks: number;
  /** The agent's quiet hours: a task that comes in them is not queued at once. */
  quietHours?: QuietHours;
  store: RedisA2ATaskStore;
  news: A2ANews;
  inbox: Pick<TaskInbox, 'add'>;
  queue: Pick<ActivationQueue, 'enqueue'>;
  redis: RedisClient;
  /** Where the agent's day count lives: its shard's (a plain prefix is one shard). */
  prefix: KeySpace;
  redact: (text: string) => string;
  logger: Logger;
}

export class WarrenAgentExecutor implements AgentExecutor {
  readonly #d: A2AExecutorDeps;
  /** Requests of this daemon waiting for a task's end: stopped by a cancel. */
  readonly #waits = new Map<string, () => void>();

  constructor(deps: A2AExecutorDeps) {
    this.#d = deps;
  }

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const d = this.#d;
    const caller = callerOf(ctx.context);
    const now = new Date();
    const text = d.redact(messageText(ctx.userMessage)).slice(0, A2A_TASK_MAX_CHARS);
    const task: Task = ctx.task ?? { id: ctx.taskId, contextId: ctx.contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now.toISOString() }, artifacts: [], history: [ctx.userMessage], metadata: { agent: d.agent, caller } };
    if (ctx.task) {
      // Warren's tasks end in one turn: a follow-up message to an open task is not taken.
      bus.publish(AgentEvent.task(ended(task, TaskState.TASK_STATE_REJECTED, 'this agent answers each task in one turn; send a new message (without a task id) for more', now)));
      return bus.finished();
    }
    if (!text.trim()) return this.#refuse(ended(task, TaskState.TASK_STATE_REJECTED, 'the message has no text part; send the task as text', now), caller, bus);
    const refusal = await this.#overDailyLimit(now);
    if (refusal) {
      d.logger.info({ agent: d.agent, caller, task: task.id }, 'A2A task rejected: over the daily limit');
      return this.#refuse(ended(task, TaskState.TASK_STATE_REJECTED, refusal, now), caller, bus);
    }
    // Stored before the inbox has it: the turn that marks it WORKING finds it.
    await d.store.write(task, d.agent, caller);
    const added = await d.inbox.add(d.agent, { id: `a2a:${task.id}`, source: 'a2a', name: caller, text, createdAt: now.getTime(), meta: { taskId: task.id, contextId: task.contextId } });
    if (added === 'full') {
      // Refused, so not one of the day's tasks: a caller turned away by a full inbox keeps its share of the day.
      await this.#uncount(now);
      return this.#refuse(ended(task, TaskState.TASK_STATE_REJECTED, `agent ${d.agent} has too many tasks waiting; try again later`, now), caller, bus);
    }
    bus.publish(AgentEvent.task(task));
    d.logger.info({ agent: d.agent, caller, task: task.id }, 'A2A task accepted');
    // In quiet hours the scheduler's task round holds it (and says so); otherwise it is queued now, not a round later
    // (a paused or out-of-budget agent's run is skipped as it starts, and the round holds the task from then on).
    if (inQuietHours(d.quietHours, now)) return this.#relay(task, bus);
    await d.queue.enqueue(d.agent, 'task').catch((err: unknown) => d.logger.warn({ err, agent: d.agent }, 'could not queue the A2A task now; the scheduler round will'));
    await this.#relay(task, bus);
  }

  async cancelTask(taskId: string, bus: ExecutionEventBus): Promise<void> {
    const stored = await this.#d.store.read(taskId);
    this.#waits.get(taskId)?.();
    const task = stored?.task ?? { id: taskId, contextId: '', status: undefined, artifacts: [], history: [], metadata: undefined };
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: task.contextId, status: ended(task, TaskState.TASK_STATE_CANCELED, 'cancelled by its caller', new Date()).status, metadata: undefined }));
    bus.finished();
  }

  /** A new task refused: kept (GetTask, `warren logs`, the watch page show it with its reason) and announced. */
  async #refuse(rejected: Task, caller: string, bus: ExecutionEventBus): Promise<void> {
    const d = this.#d;
    if (await d.store.write(rejected, d.agent, caller)) await d.news.publish({ kind: 'changed', taskId: rejected.id }).catch((err: unknown) => d.logger.warn({ err, agent: d.agent }, 'could not announce a refused A2A task'));
    bus.publish(AgentEvent.task(rejected));
    bus.finished();
  }

  /** The day's refusal, or undefined when the task is counted in. */
  async #overDailyLimit(now: Date): Promise<string | undefined> {
    const d = this.#d;
    const key = keyLayout(d.prefix).of(d.agent).a2aDay(d.agent, now.toISOString().slice(0, 10));
    const [[, count]] = ((await d.redis.multi().incr(key).pexpire(key, 2 * 86_400_000).exec()) ?? []) as [[unknown, number]];
    if (count <= d.maxDailyTasks) return undefined;
    await this.#uncount(now); // a refused task is not one of the day's
    return `agent ${d.agent} has taken its ${d.maxDailyTasks} A2A tasks for today (a2a.max_daily_tasks); try again after midnight UTC`;
  }

  /** Gives back the day's count #overDailyLimit took for a task that is refused after all. */
  async #uncount(now: Date): Promise<void> {
    const d = this.#d;
    await d.redis.decr(keyLayout(d.prefix).of(d.agent).a2aDay(d.agent, now.toISOString().slice(0, 10)));
  }

  /** Streams the task's news from the store to the request until it ends (or is cancelled here). */
  async #relay(task: Task, bus: ExecutionEventBus): Promise<void> {
    const d = this.#d;
    let rank = stateRank(task.status?.state);
    let told = messageText(task.status?.message);
    let wake: () => void = () => undefined;
    let stopped = false;
    const stopListening = d.news.listen(task.id, (n) => {
      if (n.kind !== 'partial') return wake();
      // What the turn has said so far: the answer artifact, replaced by each newer one and at the end by the answer.
      if (rank < 3 && n.text) bus.publish(AgentEvent.artifactUpdate({ taskId: task.id, contextId: task.contextId, artifact: answerArtifact(task, n.text), append: false, lastChunk: false, metadata: undefined }));
    });
    this.#waits.set(task.id, () => {
      stopped = true;
      wake();
    });
    try {
      while (!stopped) {
        const nudged = new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, RECHECK_MS).unref();
        });
        const got = await d.store.read(task.id);
        const now = got?.task;
        // Forward, or a new word at the same stage (why a SUBMITTED task waits).
        const said = messageText(now?.status?.message);
        if (now && (stateRank(now.status?.state) > rank || (stateRank(now.status?.state) === rank && rank < 3 && said !== told))) {
          rank = stateRank(now.status?.state);
          told = said;
          const over = now.status !== undefined && TERMINAL_STATES.includes(now.status.state);
          // The answer comes as the artifact, before the status that ends the task.
          if (over) for (const a of now.artifacts) bus.publish(AgentEvent.artifactUpdate({ taskId: task.id, contextId: task.contextId, artifact: a, append: false, lastChunk: true, metadata: undefined }));
          bus.publish(AgentEvent.statusUpdate({ taskId: task.id, contextId: task.contextId, status: now.status, metadata: undefined }));
          if (over) break;
        }
        await nudged;
      }
    } finally {
      stopListening();
      this.#waits.delete(task.id);
    }
    if (!stopped) bus.finished();
  }
}
