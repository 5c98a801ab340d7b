// How many agents one Redis command reads. Redis runs one command at a time: a read over a whole fleet holds every
// other client (the workers' claims and replies, the other daemons) for its whole length. Lists of agents are read
// in pages, all sent at once, and Redis serves other clients between two pages.

/**
 * Agents per script that runs a few commands per agent (exploration-facts.lua, inbox-held.lua, agent-holds.lua).
 * Measured for exploration-facts (scale bench, one run of each on a quiet machine): a page of 250 held Redis up to
 * 5.6 ms at 10,000 agents and 10.9 ms at 100,000 (p99 1.9 / 2.6 ms), past the 5 ms bound; a page of 100 up to 1.6 ms
 * (p99 0.7 / 0.8 ms) for ~15 % more round CPU at 10,000 and none more at 100,000. inbox-held.lua costs about as much
 * per agent (≈ 7.5 µs, SLOWLOG of an intake round over 200 agents with work: 1.5 ms in one command).
 */
export const AGENTS_PER_SCRIPT = 100;

/**
 * Fields per plain hash command (HMGET, HSET, HDEL): an HMGET of 1,000 takes ≈ 0.4 ms here, of 100,000 it took 13 ms
 * (`warren status` of a 100,000-agent fleet read each of its hashes in one).
 */
export const FIELDS_PER_COMMAND = 1_000;

/** `items` in pages of at most `size`, each with the position of its first item in `items`. */
export function pagesOf<T>(items: readonly T[], size: number): Array<{ first: number; items: T[] }> {
  const pages: Array<{ first: number; items: T[] }> = [];
  for (let first = 0; first < items.length; first += size) pages.push({ first, items: items.slice(first, first + size) });
  return pages;
}
