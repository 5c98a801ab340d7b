// A served A2A task as the operator reads it (`warren logs`, the watch page): its summary with what its status says
// (why it waits, why it was refused or failed), and how long it took or has been open.
import type { FleetA2ATask } from '../../local-hub/watch/fleet.ts';
import { messageText } from './a2a-messages.ts';
import { stateName, type A2ATaskSummary, type RedisA2ATaskStore } from './a2a-task-store.ts';

export interface A2ATaskEntry extends A2ATaskSummary {
  /** The status message's text ('' when it says nothing). */
  said: string;
}

/** Most tasks the watch page's section lists (the newest). */
export const WATCH_A2A_TASKS = 20;

export const OPEN_A2A_STATES: readonly string[] = ['submitted', 'working', 'input_required', 'auth_required'];

/** The task `id` as the operator reads it; undefined when it is gone. */
export async function readA2ATaskEntry(store: Pick<RedisA2ATaskStore, 'read'>, id: string): Promise<A2ATaskEntry | undefined> {
  const got = await store.read(id);
  if (!got) return undefined;
  return { id, agent: got.agent, caller: got.caller, state: stateName(got.task.status?.state ?? 0), createdAt: got.createdAt, updatedAt: got.updatedAt, said: messageText(got.task.status?.message) };
}

/** Milliseconds a task took (ended) or has been open (`now`). Pure. */
export function a2aTaskTookMs(t: Pick<A2ATaskSummary, 'state' | 'createdAt' | 'updatedAt'>, now: Date): number {
  return Math.max(0, (OPEN_A2A_STATES.includes(t.state) ? now.getTime() : t.updatedAt) - t.createdAt);
}

/** The watch page's row of a task. Pure. */
export function watchA2ATask(t: A2ATaskEntry, now: Date): FleetA2ATask {
  return { id: t.id, agent: t.agent, caller: t.caller, state: t.state, created_at: new Date(t.createdAt).toISOString(), updated_at: new Date(t.updatedAt).toISOString(), took_ms: a2aTaskTookMs(t, now), open: OPEN_A2A_STATES.includes(t.state), said: t.said.slice(0, 300) };
}

/** The newest `limit` tasks as the watch page shows them. */
export async function watchA2ATasks(store: Pick<RedisA2ATaskStore, 'read' | 'recent'>, limit: number, now = new Date()): Promise<FleetA2ATask[]> {
  const entries = await Promise.all((await store.recent(limit)).map((s) => readA2ATaskEntry(store, s.id)));
  return entries.filter((e) => e !== undefined).map((e) => watchA2ATask(e, now));
}
