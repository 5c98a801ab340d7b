// What the watch page says about outages: which banners to show and whether the agents' states are stale.
// Decided here from the daemon's health and whether its agents could be read; fleet-readings.ts does the I/O.
import type { FleetHealth } from './fleet.ts';

export type OutageKind = 'redis' | 'definitions' | 'daemon';

export interface Outage {
  kind: OutageKind;
  text: string;
}

export interface OutageFacts {
  /** The daemon's health, or why it could not be had (an error, a timeout). */
  health: FleetHealth | Error;
  /** Whether the agents' states were read now, or why not. */
  reading: 'ok' | Error;
}

/** The banners to show, most serious first, and whether the states shown are the last known rather than now. */
export function outagesOf(f: OutageFacts): { outages: Outage[]; stale: boolean } {
  const outages: Outage[] = [];
  const health = f.health instanceof Error ? undefined : f.health;
  if (health?.redis) outages.push({ kind: 'redis', text: `Redis is down: no agent is scheduled or run until it is back. The agents' states below are as last seen. (${health.redis})` });
  const readFailed = f.reading !== 'ok';
  if (!health?.redis && (readFailed || f.health instanceof Error)) {
    const why = (f.reading instanceof Error ? f.reading : (f.health as Error)).message;
    outages.push({ kind: 'daemon', text: `The daemon's state could not be read (${why}). The agents' states below are as last seen.` });
  }
  const broken = health?.definitions_with_errors ?? 0;
  if (broken > 0) outages.push({ kind: 'definitions', text: `${broken} agent definition${broken === 1 ? ' has errors and is' : 's have errors and are'} not run: \`warren validate\` lists the problems.` });
  return { outages, stale: readFailed || Boolean(health?.redis) };
}
