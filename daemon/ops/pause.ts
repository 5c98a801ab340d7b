// Pausing and resuming an agent: `warren pause|resume` and the watch page's buttons do it through here.
import type { AgentStateStore } from '../../scheduler/agent-state.ts';

/** Resuming also ends a failure backoff: the operator says the cause is fixed. */
export async function setAgentPaused(state: AgentStateStore, agent: string, paused: boolean): Promise<void> {
  await state.setPaused(agent, paused);
  if (!paused) await state.clearBackoff(agent);
}
