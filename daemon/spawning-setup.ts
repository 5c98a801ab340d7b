// The daemon's side of agents that propose agents (README "Agents that propose agents"): where proposals are filed
// (the approvals in Redis), where approved ones are written (the store's own agents folder, when the store is a
// local folder: `store.path`, the operator's, never an `include`d one), the proposers' notes, and the reload that
// every daemon on the Redis hears once a new agent is written.
import type { SpawnOutcomes } from '../activation/spawn-approval.ts';
import { SpawnNotes } from '../activation/spawn-notes.ts';
import { SpawnProposalDesk } from '../activation/spawn-proposals.ts';
import type { RedisClient } from '../redis/scripts.ts';
import type { ApprovalRequest, ApprovalStore } from '../scheduler/approval-store.ts';
import type { WarrenConfig } from '../services/config.ts';
import { LocalFolderStore } from '../store/local-store.ts';
import { SpawnedAgentFolder } from '../store/spawned-agent-folder.ts';
import { publishReload } from './reload-signal.ts';
import { layoutOf } from '../redis/key-layout.ts';
import type { HubAdapter } from '../hub-client/adapter.ts';
import { HubError } from '../hub-client/errors.ts';

export interface Spawning {
  desk: SpawnProposalDesk;
  outcomes: SpawnOutcomes;
  takeNotes: (agent: string) => Promise<string[]>;
}

export function startSpawning(opts: {
  config: WarrenConfig;
  redis: RedisClient;
  approvals: ApprovalStore;
  loaded: (name: string) => boolean;
  /** The hub, asked whether a name is someone's already (a person, an agent of another fleet): such a name is refused too. */
  hub?: Pick<HubAdapter, 'getAgent'>;
  redact: (text: string) => string;
  onRequested: (request: ApprovalRequest) => void;
}): Spawning {
  const { config, redis } = opts;
  const folder = config.store.type === 'local' ? new SpawnedAgentFolder(new LocalFolderStore(config.store.path).agentsDir) : undefined;
  const notes = new SpawnNotes(redis, layoutOf(config.redis));
  return {
    desk: new SpawnProposalDesk({ approvals: opts.approvals, nameTaken: async (name) => opts.loaded(name) || (folder?.exists(name) ?? false) || (await knownToHub(opts.hub, name)), redact: opts.redact, onRequested: opts.onRequested }),
    outcomes: { folder, loaded: opts.loaded, notes, reload: async () => void (await publishReload(redis, config.redis.prefix)) },
    takeNotes: (agent) => notes.take(agent),
  };
}

/** Whether the hub knows the name (404: free); any other failure is thrown, and the proposal is refused for now. */
async function knownToHub(hub: Pick<HubAdapter, 'getAgent'> | undefined, name: string): Promise<boolean> {
  if (!hub) return false;
  try {
    await hub.getAgent(name);
    return true;
  } catch (err) {
    if (err instanceof HubError && err.status === 404) return false;
    throw err;
  }
}
