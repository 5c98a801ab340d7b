// Pausing and resuming an agent: `warren pause|resume` and the watch page's buttons do it through here. The pause
// is an operator's decision, so it is kept in the pause file first (pause-file.ts: it outlives Redis), then in
// Redis, where schedulers and workers on every machine read it.
import type { Logger } from 'pino';
import type { AgentStateStore } from '../../scheduler/agent-state.ts';
import type { PauseFile } from './pause-file.ts';

/** Resuming also ends a failure backoff: the operator says the cause is fixed. */
export async function setAgentPaused(state: AgentStateStore, agent: string, paused: boolean): Promise<void> {
  await state.setPaused(agent, paused);
  if (!paused) await state.clearBackoff(agent);
}

/** The pause in the file, then in Redis; `state` undefined (Redis down) records it for the daemon to apply. */
export async function recordPause(file: PauseFile, state: AgentStateStore | undefined, agent: string, paused: boolean): Promise<void> {
  await file.set(agent, paused);
  if (state) await setAgentPaused(state, agent, paused);
}

/**
 * Copies the file's pauses into Redis (only adds: a pause made in Redis alone, e.g. by the Moltbook adapter for a
 * suspended key, stays). Run at start and each time the Redis connection is ready again.
 */
export async function applyPauses(file: PauseFile, state: AgentStateStore, logger: Logger): Promise<string[]> {
  const agents = Object.keys(await file.read());
  await Promise.all(agents.map((a) => state.setPaused(a, true)));
  if (agents.length) logger.info({ agents, file: file.path }, 'operator pauses applied from the pause file');
  return agents;
}
