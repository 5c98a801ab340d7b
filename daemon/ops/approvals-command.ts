// `warren approvals list|approve|deny` (README "Approvals"): the command line's side of the approval desk, with the
// hub's admin key, straight against Redis: no daemon needs to run. A decision becomes the agent's task
// `approval:<id>`; the scheduler round of whichever daemon runs next queues the agent, and that activation carries
// the decision out. Exit codes: 0 decided now (or listed), 2 decided before (the first decision stands, printed),
// 1 anything refused (unknown id, an approver the agent does not take, no admin key or a wrong one, Redis down).
import type { Command } from 'commander';
import { loadWarrenConfig } from '../../services/config.ts';
import type { WarrenConfig } from '../../services/config.ts';
import type { OpsServices } from '../../services/composition.ts';
import type { DecideResult } from '../../scheduler/approval-store.ts';
import { layoutOf } from '../../redis/key-layout.ts';

/** The command's refusals (the CLI prints the message, exit 1). */
export class ApprovalsCommandError extends Error {
  override readonly name = 'ApprovalsCommandError';
}

/** Exit code of a decision asked for that was decided before. */
export const ALREADY_DECIDED_EXIT = 2;

/** What the command says of a decision asked for (pure). */
export function decisionMessage(asked: 'approved' | 'denied', r: DecideResult): string {
  const { request, decision } = r.entry;
  const calls = request.calls.map((c) => c.name).join(', ');
  if (r.kind === 'already') {
    const same = decision.kind === asked ? '' : ` (not ${asked}: the first decision stands)`;
    return `${request.id} was already ${decision.kind} by ${decision.by} at ${new Date(decision.at).toISOString()}${decision.note ? ` with the note "${decision.note}"` : ''}${same}`;
  }
  const then = decision.kind === 'approved' ? `its ${calls} is made` : `the model reads ${decision.note ? 'your note' : 'that it was denied'} as the result of ${calls}`;
  return `${request.id} ${decision.kind}: agent ${request.agent} goes on in the next daemon that takes its work, and ${then}`;
}

async function opsServices(config: WarrenConfig): Promise<OpsServices> {
  const { openServices } = await import('../../services/composition.ts');
  return openServices(config, process.env, { name: 'ops' });
}

/**
 * Deciding takes the hub's admin key (the variable, else the embedded hub's key file, as `warren hub user` finds
 * it), and that key must be the right one: the hub is asked, and when it does not answer, the digest every daemon
 * records of its key is (services/admin-key-check.ts). A wrong key, or one nobody can check, decides nothing.
 */
async function requireAdminKey(config: WarrenConfig, services: OpsServices): Promise<void> {
  const { findAdminKey, missingAdminKeyHint } = await import('../../services/hub-admin-key.ts');
  const found = findAdminKey(config.hub, services.secrets);
  if (!found) throw new ApprovalsCommandError(`deciding an approval takes the hub's admin key: ${missingAdminKeyHint(config.hub)}`);
  const { AdminKeyRecord, adminKeyVerdict, askHub } = await import('../../services/admin-key-check.ts');
  // Moltbook and Bluesky have no admin key of their own: only the daemons' record can say.
  const hub = config.hub.type === 'warren' ? await askHub(config.hub.url, found.key) : { kind: 'silent' as const, why: `a ${config.hub.type} hub has no admin key` };
  const record = hub.kind === 'silent' ? await new AdminKeyRecord(await services.redis(), layoutOf(config.redis).home).compare(found.key) : 'none';
  const source = found.from === 'env' ? `in ${config.hub.admin_key_env}` : `in ${found.path}`;
  const verdict = adminKeyVerdict(hub, record, { hubUrl: config.hub.url, source });
  if (!verdict.ok) throw new ApprovalsCommandError(`deciding an approval takes the hub's admin key: ${verdict.message}`);
}

export function registerApprovalsCommand(program: Command): void {
  const approvals = program.command('approvals').description('calls that wait for a person\'s yes: list them, approve or deny one (README "Approvals")');

  approvals
    .command('list', { isDefault: true })
    .description('the requests not yet carried out (waiting, or decided and about to run); --all adds those done in the last 7 days')
    .option('-c, --config <file>', 'warren config file', 'warren.yaml')
    .option('--all', 'also the requests already carried out')
    .option('--json', 'print as JSON')
    .action(async (opts: { config: string; all?: boolean; json?: boolean }) => {
      const config = loadWarrenConfig(opts.config);
      const { ApprovalStore } = await import('../../scheduler/approval-store.ts');
      const { approvalListRows, approvalTable } = await import('./approval-views.ts');
      const services = await opsServices(config);
      try {
        const store = new ApprovalStore(await services.redis(), config.redis.prefix);
        const rows = approvalListRows(await store.open(), opts.all ? await store.done() : []);
        console.log(opts.json ? JSON.stringify(rows, null, 2) : approvalTable(rows).trimEnd());
      } finally {
        await services.close();
      }
    });

  for (const kind of ['approved', 'denied'] as const) {
    const approve = kind === 'approved';
    approvals
      .command(approve ? 'approve' : 'deny')
      .description(approve ? 'let the waiting calls be made (once, in whichever daemon carries it out)' : 'refuse the waiting calls: the model reads your note as their result and goes on')
      .argument('<id>', 'the request id, as `warren approvals list` shows it')
      .option('-c, --config <file>', 'warren config file', 'warren.yaml')
      .option('--note <text>', approve ? 'a note kept with the decision' : 'what the model reads instead of the result (required)')
      .action(async (id: string, opts: { config: string; note?: string }) => {
        if (!approve && !opts.note?.trim()) throw new ApprovalsCommandError('deny needs --note "<text>": the model reads it as the result of the call it may not make');
        const config = loadWarrenConfig(opts.config);
        const { ApprovalStore } = await import('../../scheduler/approval-store.ts');
        const { ApprovalDesk } = await import('../../scheduler/approval-desk.ts');
        const { TaskInbox } = await import('../../scheduler/task-inbox.ts');
        const services = await opsServices(config);
        try {
          await requireAdminKey(config, services);
          const redis = await services.redis();
          const tasks = new TaskInbox(redis, layoutOf(config.redis));
          // No enqueue here: the scheduler round of any daemon queues an agent with a task nobody holds.
          const desk = new ApprovalDesk(new ApprovalStore(redis, config.redis.prefix), { add: (agent, task) => tasks.add(agent, task) });
          const r = await desk.decide(id, kind, { by: 'admin', note: opts.note ?? '' });
          console.log(decisionMessage(kind, r));
          process.exitCode = r.kind === 'already' ? ALREADY_DECIDED_EXIT : 0;
        } finally {
          await services.close();
        }
      });
  }
}
