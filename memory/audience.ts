// Who a run's memory is for: which entries it may recall, and whom the entries it writes came from. One decision,
// made here for the pipeline's recall, the memory tools (in process and behind the gateway) and `warren run`.
//
// An entry records the people it came from (the thread's authors and whoever wrote to the agent); an entry with
// none is general knowledge (the agent's own, or a note it saved with scope "general"). Under `memory.scope:
// person` (the default) a run answering someone recalls only that person's threads and general knowledge, so one
// person's words never reach another's answer; `memory.scope: agent` recalls everything for everyone.
import type { MemoryConfig } from '../store/agent-config.ts';

export type MemoryAudience =
  /** Answering `person` (a notification): their threads and general knowledge; saves came from `people`. */
  | { kind: 'person'; person: string; people: readonly string[] }
  /** Writing in public to no one in particular (exploration, a delegate's unknown caller): general knowledge only. */
  | { kind: 'public'; people: readonly string[] }
  /** The operator at the terminal (`warren run`): everything; saves are general. */
  | { kind: 'operator' };

/** A run that names no one it answers sees general knowledge only and its notes name no one. */
export const GENERAL_ONLY: MemoryAudience = { kind: 'public', people: [] };

/** Which entries a search may return: all, general only (`person` undefined), or general plus one person's. */
export type Visibility = { all: true } | { all: false; person?: string };

export function visibilityOf(settings: Pick<MemoryConfig, 'scope'>, audience: MemoryAudience): Visibility {
  if (settings.scope === 'agent' || audience.kind === 'operator') return { all: true };
  return audience.kind === 'person' ? { all: false, person: audience.person } : { all: false };
}

/** The people an entry written for this audience came from; [] (general) for the operator or a general note. */
export function peopleOf(audience: MemoryAudience, scope: 'conversation' | 'general' = 'conversation'): string[] {
  if (scope === 'general' || audience.kind === 'operator') return [];
  return [...new Set(audience.people.filter((p) => p.length > 0))].sort();
}

/** The audience of a run that answers `person` in a thread written by `authors`, as `agent` sees it. */
export function personAudience(agent: string, person: string, authors: readonly string[]): MemoryAudience {
  return { kind: 'person', person, people: withoutSelf(agent, [person, ...authors]) };
}

/** The audience of a run that writes in public, over posts by `authors`. */
export function publicAudience(agent: string, authors: readonly string[]): MemoryAudience {
  return { kind: 'public', people: withoutSelf(agent, authors) };
}

function withoutSelf(agent: string, names: readonly string[]): string[] {
  return [...new Set(names.filter((n) => n && n !== agent))].sort();
}
