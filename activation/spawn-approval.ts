// A decided `spawn` approval carried out (README "Agents that propose agents"), in the proposer's activation that
// took the task `approval:<id>`. Approved: the proposal's files are checked against the schema once more and
// written to the store's agents folder, and every daemon is asked to reload, which loads the new agent, registers
// it on the hub and runs it. Either way the proposer's next run is told what became of its proposal. The request
// leaves the open set once that is done; a retry after a crash finds the folder written (`same`) and goes on.
import type { Logger } from 'pino';
import type { ApprovalDecisionRecord, ApprovalRequest, ApprovalStore } from '../scheduler/approval-store.ts';
import { parseDefinition } from '../store/parse-definition.ts';
import type { SpawnWrite } from '../store/spawned-agent-folder.ts';

export interface SpawnOutcomes {
  /** Where approved agents are written; absent (an S3 store): approved proposals cannot be carried out here. */
  folder?: { write(name: string, configText: string, promptText: string): Promise<SpawnWrite> };
  /** Whether a loaded agent has the name (a folder of that name is the folder's to say). */
  loaded: (name: string) => boolean;
  notes: { add(agent: string, approvalId: string, text: string): Promise<void> };
  /** Asks every daemon to load the store again (`warren reload`). */
  reload: () => Promise<void>;
}

export type SpawnCarriedOut = 'created' | 'denied' | 'not_created';

/** The note the proposer reads (pure). */
export function spawnNote(request: ApprovalRequest & { work: { kind: 'spawn' } }, decision: ApprovalDecisionRecord, result: SpawnCarriedOut, why?: string): string {
  const what = `Your proposal of a new agent "${request.work.name}" (template ${request.work.template}, approval ${request.id})`;
  const note = decision.note ? ` Their note: ${decision.note}` : '';
  switch (result) {
    case 'created':
      return `${what} was approved by the ${decision.by}; the agent was created and runs as @${request.work.name}.${note}`;
    case 'denied':
      return `${what} was denied${decision.by === 'timeout' ? ': nobody decided in time' : ` by the ${decision.by}`}.${note}`;
    case 'not_created':
      return `${what} was approved by the ${decision.by}, but the agent could not be created: ${why ?? 'unknown reason'}.${note}`;
    default: {
      const never: never = result;
      throw new Error(`unknown spawn result ${String(never)}`);
    }
  }
}

export async function carryOutSpawn(deps: SpawnOutcomes | undefined, store: Pick<ApprovalStore, 'finish'>, request: ApprovalRequest & { work: { kind: 'spawn' } }, decision: ApprovalDecisionRecord, log: Logger): Promise<SpawnCarriedOut> {
  if (!deps) throw new Error('spawn approvals cannot be carried out by this process (no spawning services)');
  const { work } = request;
  let result: SpawnCarriedOut = decision.kind === 'approved' ? 'created' : 'denied';
  let why: string | undefined;
  if (decision.kind === 'approved') {
    const parsed = parseDefinition({ folder: work.name, configFile: `approval ${request.id}`, configText: work.config, promptFile: `approval ${request.id}`, promptText: work.prompt });
    const errors = parsed.problems.filter((p) => p.severity === 'error');
    if (errors.length) [result, why] = ['not_created', `its definition no longer passes the schema (${errors.map((p) => p.message).join('; ')})`];
    else if (!deps.folder) [result, why] = ['not_created', 'the definitions store is not a local folder this daemon can write to'];
    else {
      const written = deps.loaded(work.name) ? 'taken' : await deps.folder.write(work.name, work.config, work.prompt);
      if (written === 'taken') [result, why] = ['not_created', `an agent named ${work.name} exists already`];
      else {
        await deps.reload();
        log.info({ approval: request.id, agent: work.name, template: work.template }, 'proposed agent created after approval');
      }
    }
  }
  await deps.notes.add(request.agent, request.id, spawnNote(request, decision, result, why));
  await store.finish(request.id);
  if (result !== 'created') log.info({ approval: request.id, agent: work.name, result, why }, 'proposed agent not created');
  return result;
}
