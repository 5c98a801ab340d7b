// The watch page's reading of the daemon beside the hub: each agent's state and the daemon's health, each bounded
// in time (a Redis that is down must not hang the page), with the last good reading kept and shown, marked stale,
// while a new one cannot be had (outages.ts decides the banners).
import type { FleetAgent, FleetHealth, FleetSource } from './fleet.ts';
import { outagesOf, type Outage } from './outages.ts';

/** What GET /watch/api/fleet answers. */
export interface FleetReport {
  /** False on a hub started on its own (no daemon beside it). */
  available: boolean;
  agents: FleetAgent[];
  /** True when `agents` are the last known states, not now's. */
  stale: boolean;
  /** When `agents` were read; null before any reading. */
  as_of: string | null;
  outages: Outage[];
}

/** How long one reading may take before it counts as failed (Redis down answers nothing). */
export const FLEET_READING_MS = 2_500;

const NOTHING_KNOWN: FleetHealth = { redis: null, definitions_with_errors: 0 };

export class FleetReadings {
  readonly #source: FleetSource | undefined;
  readonly #timeoutMs: number;
  #last: { agents: FleetAgent[]; at: string } | undefined;

  constructor(source: FleetSource | undefined, timeoutMs = FLEET_READING_MS) {
    this.#source = source;
    this.#timeoutMs = timeoutMs;
  }

  async report(): Promise<FleetReport> {
    const source = this.#source;
    if (!source) return { available: false, agents: [], stale: false, as_of: null, outages: [] };
    const [agents, health] = await Promise.allSettled([bounded(source.agents(), this.#timeoutMs, 'the agents'), bounded(source.health?.() ?? Promise.resolve(NOTHING_KNOWN), this.#timeoutMs, 'the daemon\'s health')]);
    if (agents.status === 'fulfilled') this.#last = { agents: agents.value, at: new Date().toISOString() };
    const { outages, stale } = outagesOf({
      health: health.status === 'fulfilled' ? health.value : asError(health.reason),
      reading: agents.status === 'fulfilled' ? 'ok' : asError(agents.reason),
    });
    return { available: true, agents: this.#last?.agents ?? [], stale, as_of: this.#last?.at ?? null, outages };
  }
}

function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}

function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`reading ${what} took over ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
