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

/** How long the health reading waits for Redis's PONG (the page's reading is bounded above this). */
const PING_MS = 1_500;
/** The store is read for the files on disk at most this often (a whole load: a bucket's is requests). */
const DISK_READING_MS = 5_000;

export function fleetSource(opts: {
  sources: StatusSources;
  definitions: () => readonly AgentDefinition[];
  state: AgentStateStore;
  /** Agent definitions that failed to load, for the page's banner. */
  brokenDefinitions?: () => number;
  /** Hash of each agent's files on disk now (the store read anew), to flag a definition that differs from what runs. */
  onDisk?: () => Promise<ReadonlyMap<string, string>>;
  /** Where pauses are kept beside Redis (pauses.file); none: in Redis alone. */
  pauses?: PauseFile;
}): FleetSource {
  let last: { at: number; agents: Promise<FleetAgent[]> } | undefined;
  let disk: { at: number; hashes: Promise<ReadonlyMap<string, string> | undefined> } | undefined;
  const diskHashes = (): Promise<ReadonlyMap<string, string> | undefined> => {
    if (!opts.onDisk) return Promise.resolve(undefined);
    // An unreadable store flags nothing (the daemon's log says why); the page still shows the rest.
    if (!disk || Date.now() - disk.at > DISK_READING_MS) disk = { at: Date.now(), hashes: opts.onDisk().catch(() => undefined) };
    return disk.hashes;
  };
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
    const hashes = await diskHashes();
    // Without a reading of the disk, what runs is compared with itself: nothing is flagged.
    const onDisk = hashes ? (name: string): string | undefined => hashes.get(name) : undefined;
    const { agents, running } = await readAgentStatuses({ ...opts.sources, newestMemories: NEWEST_MEMORIES, onDisk }, opts.definitions());
    return agents.map((a) => {
      const run = running.find((r) => r.agent === a.name);
      return {
        name: a.name,
        state: a.state,
        state_detail: a.state_detail,
        running: run ? { trigger: run.trigger, started_at: run.started_at, doing: describeProgress(run.progress) } : null,
        memory: a.memory ?? null,
        // Only when a daemon said what it runs (the field is optional on the page's rows).
        ...(a.definition ? { definition: a.definition } : {}),
        // Only when mentions are held (the agreed optional field): what they wait for, and when they run.
        ...(a.held ? { held: [{ reason: describeHold(a.name, a.held), runs_at: a.held.runs_at }] } : {}),
        // Only for an agent with schedules (an optional field, like held).
        ...(a.schedules?.length ? { schedules: a.schedules.map(({ name, cron, timezone, next_at, last_at }) => ({ name, cron, timezone, next_at, last_at })) } : {}),
      };
    });
  }
}
