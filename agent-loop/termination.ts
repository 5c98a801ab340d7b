/** Every run ends with exactly one of these (docs/agent-loop.md R1). */
export type TerminationReason =
  | 'final'
  | 'stop_tool'
  | 'no_action'
  | 'max_steps'
  | 'budget'
  | 'deadline'
  | 'aborted'
  | 'loop_detected'
  | 'circuit_open'
  | 'error'
  /** Stopped before a call that waits for a person's yes (approval-gate.ts); goes on from its state. */
  | 'awaiting_approval';

/** Replies that mean "nothing to do" in the wild (the original's SKIP and friends, OpenClaw's HEARTBEAT_OK). */
export const DEFAULT_NO_ACTION_SENTINELS: readonly string[] = ['NO_ACTION', 'SKIP', 'HEARTBEAT_OK', 'No response needed.', 'Nothing to engage with right now.'];

export function isNoActionSentinel(text: string, sentinels: readonly string[] = DEFAULT_NO_ACTION_SENTINELS): boolean {
  const t = text.trim();
  return sentinels.some((s) => s === t);
}
