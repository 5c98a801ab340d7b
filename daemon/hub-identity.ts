// Whether the hub entry under an agent's name is the agent's own. A human created on the watch page (or by
// anyone with the admin key) under a name an agent is defined with later takes that name: the hub never wakes
// a human for its mentions, and everything the agent wrote would be written as that human. Such an agent must
// not run, and must say why.
import type { Agent } from '../hub-client/types.ts';

/** Why the hub entry named like the agent is another identity, or undefined when it is the agent's (pure). */
export function identityConflict(name: string, entry: Pick<Agent, 'type' | 'created_at'> | undefined): string | undefined {
  if (!entry || entry.type !== 'human') return undefined;
  return `the hub name "${name}" belongs to a human${entry.created_at ? ` (created ${entry.created_at})` : ''}, not to this agent: it would never be woken and would write as that human; rename the agent, or free the name on the hub`;
}
