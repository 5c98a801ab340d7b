// Work that does not come from the hub's inbox: a schedule's tick, a webhook's delivery, an A2A caller's task, an
// approved call to resume. The hub keeps notifications until they are read; these have no such home, so each is
// kept here in Redis until an activation has answered it (never lost), and its id is remembered so a second
// delivery of the same thing adds nothing (never doubled). The queue's job only says "this agent has tasks": the
// activation takes the task from here (activation/activation.ts), and the scheduler's round queues agents whose
// tasks nobody holds (scheduler.ts), so an enqueue BullMQ absorbs into another job loses nothing.
//
// With shards (redis/key-layout.ts) an agent's tasks, their bodies, claims and seen ids are in its shard, and each
// shard keeps the set of its own agents with tasks.
import { z } from 'zod';
import type { ActivationJob } from './activation-job.ts';
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisKeys } from '../redis/keys.ts';
import { redisScripts, type RedisClient } from '../redis/scripts.ts';

export const TASK_SOURCES = ['schedule', 'webhook', 'a2a', 'approval'] as const;

/** The BullMQ job name of a `task` activation (its trigger: scheduler/activation-queue.ts names jobs by it). */
const TASK_JOB_NAME: ActivationJob['trigger'] = 'task';
export type TaskSource = (typeof TASK_SOURCES)[number];

export const AgentTaskSchema = z.strictObject({
  /** Stable identity from what it answers: `schedule:<name>:<tick ms>`, `webhook:<hook>:<delivery>`, `a2a:<task>`, `approval:<id>`. */
  id: z.string().min(1).max(512),
  source: z.enum(TASK_SOURCES),
  /** The schedule's or hook's name, the A2A caller, the approval's id. */
  name: z.string().max(256),
  /** The task as the agent reads it: already capped and redacted by whoever adds it. */
  text: z.string(),
  /** Epoch ms it came. */
  createdAt: z.number(),
  /** Small facts for whoever answers it (an A2A task's ids); never secrets. */
  meta: z.record(z.string(), z.string()).optional(),
});
export type AgentTask = z.infer<typeof AgentTaskSchema>;

/** A task as an activation holds it: how many activations have claimed it (this one included). */
export interface ClaimedTask {
  task: AgentTask;
  claims: number;
}

export type TaskAdded = 'added' | 'duplicate' | 'full';

export interface TaskInboxOptions {
  /** How long an id is remembered after it came (a redelivery within it adds nothing). Default 7 days. */
  seenTtlMs?: number;
  /** Tasks one agent may have waiting or running; more are refused (`full`). Default 100. */
  maxPending?: number;
}

const DAY_MS = 86_400_000;

export class TaskInbox {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;
  readonly #seenTtlMs: number;
  readonly #maxPending: number;

  /** `space`: the daemon's key layout, or a prefix (one shard). */
  constructor(redis: RedisClient, space: KeySpace, opts: TaskInboxOptions = {}) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
    this.#seenTtlMs = opts.seenTtlMs ?? 7 * DAY_MS;
    this.#maxPending = opts.maxPending ?? 100;
  }

  /** Keeps `task` for `agent` unless its id came before (`duplicate`) or the agent has `maxPending` waiting (`full`). */
  async add(agent: string, task: AgentTask): Promise<TaskAdded> {
    const t = AgentTaskSchema.parse(task);
    const k = this.#of(agent);
    const code = await redisScripts(this.#redis).taskAdd([k.tasks(agent), k.taskBodies(agent), k.taskSeen(agent, t.id), k.agentsWithTasks], t.id, t.createdAt, JSON.stringify(t), agent, this.#seenTtlMs, this.#maxPending);
    return code === 1 ? 'added' : code === 0 ? 'duplicate' : 'full';
  }

  /**
   * The task `activationId` works on: the one it claimed before (a retried activation keeps its task), else the
   * oldest nobody holds. The claim lapses after `claimTtlMs` (a crashed run's task returns to the others).
   */
  async next(agent: string, activationId: string, claimTtlMs: number, now = Date.now()): Promise<ClaimedTask | undefined> {
    const k = this.#of(agent);
    const got = await redisScripts(this.#redis).taskNext([k.tasks(agent), k.taskBodies(agent), k.taskClaims(agent)], activationId, now, claimTtlMs);
    if (!got) return undefined;
    const parsed = got.body === null ? undefined : AgentTaskSchema.safeParse(parseJson(got.body));
    if (!parsed?.success) {
      // A body that is gone or unreadable cannot be run: settled, so it does not block the agent's other tasks.
      await this.settle(agent, got.id);
      throw new TaskUnreadable(agent, got.id);
    }
    return { task: parsed.data, claims: got.claims };
  }

  /** The task is done (answered or given up): never offered again; its id is still remembered. */
  async settle(agent: string, taskId: string): Promise<void> {
    const k = this.#of(agent);
    await redisScripts(this.#redis).taskSettle([k.tasks(agent), k.taskBodies(agent), k.taskClaims(agent), k.taskSeen(agent, taskId), k.agentsWithTasks], taskId, agent, this.#seenTtlMs);
  }

  /** `activationId` did not get to the task: the next activation takes it, and this claim does not count. */
  async release(agent: string, taskId: string, activationId: string): Promise<void> {
    await redisScripts(this.#redis).taskRelease(this.#of(agent).taskClaims(agent), taskId, activationId);
  }

  /** Tasks waiting or running for `agent`. */
  async pending(agent: string): Promise<number> {
    return this.#redis.zcard(this.#of(agent).tasks(agent));
  }

  /**
   * Agents with a task nobody holds now, beyond what the `task` activations already queued or starting will claim
   * (of every shard): the scheduler's round queues an activation for each.
   */
  async agentsWithTasks(now = Date.now()): Promise<string[]> {
    const scripts = redisScripts(this.#redis);
    const found = await Promise.all(
      this.#layout.shards.map((k) =>
        scripts.tasksWaiting(k.agentsWithTasks, { pending: k.tasksPrefix, claims: k.taskClaimsPrefix, job: k.dedup('').jobPrefix, dedupCurrent: k.dedupCurrentPrefix, dedupNext: k.dedupNextPrefix, jobName: TASK_JOB_NAME }, now),
      ),
    );
    return found.flat();
  }

  #of(agent: string): RedisKeys {
    return this.#layout.of(agent);
  }
}

/** `text` as JSON, or undefined when it is not. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A task's stored body could not be read back (an edited key, a partial write): it is dropped, the others run. */
export class TaskUnreadable extends Error {
  override readonly name = 'TaskUnreadable';
  readonly agent: string;
  readonly taskId: string;
  constructor(agent: string, taskId: string) {
    super(`task ${taskId} of agent ${agent} could not be read back from Redis; it was dropped`);
    this.agent = agent;
    this.taskId = taskId;
  }
}
