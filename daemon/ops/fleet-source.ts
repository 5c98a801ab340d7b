// The embedded hub's view of this daemon's agents (local-hub/watch/fleet.ts): `warren status`'s reading, with
// the newest few memory entries, and pause/resume as the CLI does them.
import { UnknownAgentError, type FleetAgent, type FleetSource } from '../../local-hub/watch/fleet.ts';
import type { AgentStateStore } from '../../scheduler/agent-state.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import { readAgentStatuses, type StatusSources } from './agent-statuses.ts';
import { recordPause, setAgentPaused } from './pause.ts';
import type { PauseFile } from './pause-file.ts';
import { describeProgress } from './status.ts';
import { describeHold } from '../../scheduler/held-mentions.ts';

/** How many of an agent's newest memory entries the watch page shows. */
const NEWEST_MEMORIES = 3;

/** Several open pages (and their polls) share one reading for this long. */
const SHARED_READING_MS = 1_000;

export function fleetSource(opts: { sources: StatusSources; definitions: () => readonly AgentDefinition[]; state: AgentStateStore; pauses?: PauseFile }): FleetSource {
  let last: { at: number; agents: Promise<FleetAgent[]> } | undefined;
  return {
    agents(): Promise<FleetAgent[]> {
      if (!last || Date.now() - last.at > SHARED_READING_MS) last = { at: Date.now(), agents: read() };
      return last.agents;
    },
    async setPaused(agent, paused) {
      if (!opts.definitions().some((d) => d.name === agent)) throw new UnknownAgentError(agent);
      // Without a pause file (a config built in code, not read from a warren.yaml) the pause lives in Redis alone.
      if (opts.pauses) await recordPause(opts.pauses, opts.state, agent, paused);
      else await setAgentPaused(opts.state, agent, paused);
      last = undefined; // the next reading shows the change
    },
  };

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
        // Only when mentions are held (the agreed optional field): what they wait for, and when they run.
        ...(a.held ? { held: [{ reason: describeHold(a.name, a.held), runs_at: a.held.runs_at }] } : {}),
      };
    });
  }
}
