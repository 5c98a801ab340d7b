// The A2A tasks of every served agent, in Redis: the SDK's TaskStore (so GetTask, ListTasks and CancelTask answer
// from any daemon of the fleet, and tasks outlive a restart), plus what warren itself writes as a task runs. A
// write never moves a task back and never rewrites an ended one (lua/a2a-task-save.lua): a task is answered once,
// however many activations or daemons tell its end. Each task belongs to its caller: another caller sees none of it.
// A task's JSON is the SDK's (its Task codec), loaded with the first task written or read: status and metrics read
// the index alone, so a daemon that serves no A2A agent never loads the SDK.
import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { RedisKeys } from '../../redis/keys.ts';
import { redisScripts, type RedisClient } from '../../redis/scripts.ts';
import { TaskState } from './a2a-enums.ts';

/** How long a task is kept after its last change. */
const TASK_TTL_MS = 7 * 86_400_000;
/** Most tasks one ListTasks page holds, and most tasks looked at per list. */
const MAX_PAGE = 100;
const LIST_SCAN = 1_000;

export const TERMINAL_STATES: readonly TaskState[] = [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED, TaskState.TASK_STATE_REJECTED];

/** A state's rank: a task moves only forward (submitted 1, under way 2, ended 3). Pure. */
export function stateRank(state: TaskState | undefined): number {
  if (state === undefined || state === TaskState.TASK_STATE_UNSPECIFIED) return 1;
  if (state === TaskState.TASK_STATE_SUBMITTED) return 1;
  return TERMINAL_STATES.includes(state) ? 3 : 2;
}

/** A task's facts for status, logs and the watch page. */
export interface A2ATaskSummary {
  id: string;
  agent: string;
  caller: string;
  state: string;
  createdAt: number;
  updatedAt: number;
}

/** Who the task belongs to: the SDK's context names the authenticated caller. */
export function callerOf(context: ServerCallContext | undefined): string {
  return context?.user?.userName ?? '';
}

export class RedisA2ATaskStore implements TaskStore {
  readonly #redis: RedisClient;
  readonly #keys: RedisKeys;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    this.#keys = new RedisKeys(prefix);
  }

  /**
   * The SDK's write: it saves each event warren published, after warren wrote it. Kept only when it moves the task
   * forward (a first write, a cancel's end): a late echo at the same stage must not take back a newer status message.
   */
  async save(task: Task, context: ServerCallContext): Promise<void> {
    const agent = typeof task.metadata?.agent === 'string' ? task.metadata.agent : '';
    await this.write(task, agent, callerOf(context), Date.now(), { forwardOnly: true });
  }

  /** Writes `task` (first write: for `agent` and `caller`); false when refused (it ended before, or it is behind). */
  async write(task: Task, agent: string, caller: string, now = Date.now(), opts: { forwardOnly?: boolean } = {}): Promise<boolean> {
    const state = task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED;
    const { Task: codec } = await import('@a2a-js/sdk');
    return redisScripts(this.#redis).a2aTaskSave([this.#keys.a2aTask(task.id), this.#keys.a2aTasks], task.id, JSON.stringify(codec.toJSON(task)), state, stateRank(state), agent, caller, now, TASK_TTL_MS, opts.forwardOnly ?? false);
  }

  /** The task, when it exists and belongs to the context's caller. */
  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const got = await this.read(taskId);
    if (!got || got.caller !== callerOf(context)) return undefined;
    return got.task;
  }

  /** The task and its owner, whoever asks (warren's own side). */
  async read(taskId: string): Promise<{ task: Task; agent: string; caller: string; createdAt: number; updatedAt: number } | undefined> {
    const h = await this.#redis.hgetall(this.#keys.a2aTask(taskId));
    if (!h.body) return undefined;
    const { Task: codec } = await import('@a2a-js/sdk');
    return { task: codec.fromJSON(JSON.parse(h.body)), agent: h.agent ?? '', caller: h.caller ?? '', createdAt: Number(h.created ?? 0), updatedAt: Number(h.updated ?? 0) };
  }

  /** The caller's tasks, newest first, filtered as asked (context, state); a page token is the offset. */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const caller = callerOf(context);
    const pageSize = Math.min(Math.max(params.pageSize ?? 50, 1), MAX_PAGE);
    const offset = Number(params.pageToken || 0) || 0;
    const mine: Task[] = [];
    for (const s of await this.recent(LIST_SCAN)) {
      if (s.caller !== caller) continue;
      const got = await this.read(s.id);
      if (!got) continue;
      if (params.contextId && got.task.contextId !== params.contextId) continue;
      if (params.status && got.task.status?.state !== params.status) continue;
      mine.push(got.task);
    }
    const page = mine.slice(offset, offset + pageSize);
    return { tasks: page, nextPageToken: offset + pageSize < mine.length ? String(offset + pageSize) : '', pageSize, totalSize: mine.length };
  }

  /** The newest `limit` tasks, as summaries (status, logs, watch page); expired ones are dropped from the index. */
  async recent(limit: number): Promise<A2ATaskSummary[]> {
    const ids = await this.#redis.zrevrange(this.#keys.a2aTasks, 0, limit - 1);
    if (ids.length === 0) return [];
    const pipe = this.#redis.pipeline();
    for (const id of ids) pipe.hmget(this.#keys.a2aTask(id), 'agent', 'caller', 'state', 'created', 'updated');
    const rows = (await pipe.exec()) ?? [];
    const out: A2ATaskSummary[] = [];
    const gone: string[] = [];
    rows.forEach(([, row], i) => {
      const [agent, caller, state, created, updated] = (row ?? []) as (string | null)[];
      if (state === null || state === undefined) return void gone.push(ids[i]!);
      out.push({ id: ids[i]!, agent: agent ?? '', caller: caller ?? '', state: stateName(Number(state)), createdAt: Number(created ?? 0), updatedAt: Number(updated ?? 0) });
    });
    if (gone.length) await this.#redis.zrem(this.#keys.a2aTasks, ...gone);
    return out;
  }
}

/** Each state's name for people, from its constant's: `TASK_STATE_COMPLETED` → `completed`. */
const STATE_NAMES = new Map<number, string>(Object.entries(TaskState).map(([name, state]) => [state, name.replace(/^TASK_STATE_/, '').toLowerCase()]));

/** `TASK_STATE_COMPLETED` → `completed`. Pure. */
export function stateName(state: TaskState): string {
  return STATE_NAMES.get(state) ?? 'unknown';
}
