// The embedded hub's view of this daemon's agents (local-hub/watch/fleet.ts): `warren status`'s reading, with
// the newest few memory entries, and pause/resume as the CLI does them.
import { UnknownAgentError, type FleetAgent, type FleetSource } from '../../local-hub/watch/fleet.ts';
import type { AgentStateStore } from '../../scheduler/agent-state.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { readAgentStatuses, type StatusSources } from './agent-statuses.ts';
import { setAgentPaused } from './pause.ts';
import { describeProgress } from './status.ts';

/** How many of an agent's newest memory entries the watch page shows. */
const NEWEST_MEMORIES = 3;

/** Several open pages (and their polls) share one reading for this long. */
const SHARED_READING_MS = 1_000;

/** How long the health reading waits for Redis's PONG (the page's reading is bounded above this). */
const PING_MS = 1_500;

export function fleetSource(opts: { sources: StatusSources; definitions: () => readonly AgentDefinition[]; state: AgentStateStore; brokenDefinitions?: () => number }): FleetSource {
  let last: { at: number; agents: Promise<FleetAgent[]> } | undefined;
  return {
    agents(): Promise<FleetAgent[]> {
      if (!last || Date.now() - last.at > SHARED_READING_MS) last = { at: Date.now(), agents: read() };
      return last.agents;
    },
    async setPaused(agent, paused) {
      if (!opts.definitions().some((d) => d.name === agent)) throw new UnknownAgentError(agent);
      await setAgentPaused(opts.state, agent, paused);
      last = undefined; // the next reading shows the change
    },
    async health() {
      return { redis: await pingProblem(), definitions_with_errors: opts.brokenDefinitions?.() ?? 0 };
    },
  };

  /** Null when Redis answers PING in time, else why not (as /readyz says it). */
  async function pingProblem(): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([opts.sources.redis.ping(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${PING_MS} ms`)), PING_MS)))]);
      return null;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    } finally {
      clearTimeout(timer);
    }
  }

  async function read(): Promise<FleetAgent[]> {
    const { agents, running } = await readAgentStatuses({ ...opts.sources, newestMemories: NEWEST_MEMORIES }, opts.definitions());
    return agents.map((a) => {
      const run = running.find((r) => r.agent === a.name);
      return {
        name: a.name,
        state: a.state,
        state_detail: a.state_detail,
        running: run ? { trigger: run.trigger, started_at: run.started_at, doing: describeProgress(run.progress) } : null,
        memory: a.memory ?? null,
      };
    });
  }
}
