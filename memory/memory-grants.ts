// The memory grants an agent holds: `memory:read` and `memory:write` are implied by `memory.enabled`, unless the
// agent lists memory grants of its own, which are then exactly what it gets (e.g. only memory:read: no saving).
import type { AgentConfig } from '../store/agent-config.ts';

export const MEMORY_READ = 'memory:read';
export const MEMORY_WRITE = 'memory:write';

export function effectiveGrants(config: Pick<AgentConfig, 'capabilities' | 'memory'>): string[] {
  const listed = config.capabilities.grants;
  if (!config.memory?.enabled || listed.some((g) => g.startsWith('memory:'))) return [...listed];
  return [...listed, MEMORY_READ, MEMORY_WRITE];
}
