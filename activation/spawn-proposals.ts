// Where `propose_agent` calls are checked and filed (README "Agents that propose agents"). The pure checks
// (template allowed and present, schema, only narrowing: store/agent-templates.ts) come first, then the ones that
// read the fleet: the name must not be an agent's (loaded, on disk, known to the hub, or proposed and waiting), and the proposer may
// have at most `spawning.max_pending` proposals waiting. A proposal that passes becomes an approval request of
// kind `spawn`, its id derived from the call's idempotency key (a retried activation files the same request).
import type { ProposeAgentCall, SpawnProposals } from '../agent-loop/propose-agent.ts';
import type { ToolOutcome } from '../agent-loop/tools.ts';
import { approvalIdOf, shownArguments, type ApprovalRequest, type ApprovalStore } from '../scheduler/approval-store.ts';
import { checkProposal } from '../store/agent-templates.ts';
import type { AgentDefinition } from '../store/definition.ts';

/** Proposals waiting at once when `spawning.max_pending` is not set (the schema's default). */
export const DEFAULT_MAX_PENDING = 3;
/** How long a proposal waits for a decision when the proposer has no `approvals.timeout`. */
export const DEFAULT_SPAWN_TIMEOUT_MS = 86_400_000;

export interface SpawnProposalDeps {
  approvals: Pick<ApprovalStore, 'open' | 'create'>;
  /** Whether an agent of this name is loaded, has a folder in the store, or is known to the hub (a person, another fleet's agent). */
  nameTaken: (name: string) => boolean | Promise<boolean>;
  redact: (text: string) => string;
  /** Told of each request filed (the outbound event, the log). */
  onRequested?: (request: ApprovalRequest) => void;
  now?: () => number;
}

export class SpawnProposalDesk implements SpawnProposals {
  readonly #deps: SpawnProposalDeps;

  constructor(deps: SpawnProposalDeps) {
    this.#deps = deps;
  }

  async propose(req: { proposer: AgentDefinition; call: ProposeAgentCall; callId: string; idempotencyKey: string }): Promise<ToolOutcome> {
    const { proposer, call } = req;
    const spawning = proposer.config.capabilities.spawning;
    if (!spawning?.can_propose) return refused(['this agent may not propose agents (capabilities.spawning.can_propose)']);
    const check = checkProposal(call, { allowed: spawning.allowed_templates, templates: proposer.shared?.agentTemplates ?? {} });
    if (check.kind === 'refused') return refused(check.reasons);
    const id = approvalIdOf({ agent: proposer.name, idempotencyKey: `spawn:${req.idempotencyKey}` });
    const open = await this.#deps.approvals.open();
    const waiting = open.filter((e) => e.request.work.kind === 'spawn' && e.request.id !== id);
    let taken: boolean;
    try {
      taken = await this.#deps.nameTaken(call.name);
    } catch (err) {
      return refused([`could not check whether the name "${call.name}" is free (${this.#deps.redact(err instanceof Error ? err.message : String(err))}); try again later`]);
    }
    if (taken || waiting.some((e) => e.request.work.kind === 'spawn' && e.request.work.name === call.name)) {
      return refused([`name "${call.name}" is taken (an agent has it, or a proposal waiting for approval does): choose another`]);
    }
    const mine = waiting.filter((e) => e.request.agent === proposer.name && e.decision === undefined).length;
    const max = spawning.max_pending ?? DEFAULT_MAX_PENDING;
    if (mine >= max) return refused([`you have ${mine} proposals waiting for a decision already (at most ${max}: capabilities.spawning.max_pending); wait for them`]);
    const now = this.#deps.now?.() ?? Date.now();
    const redact = this.#deps.redact;
    const request: ApprovalRequest = {
      id,
      agent: proposer.name,
      createdAt: now,
      expiresAt: now + (proposer.config.approvals?.timeout ?? DEFAULT_SPAWN_TIMEOUT_MS),
      approvers: proposer.config.approvals?.approvers ?? ['operator', 'admin'],
      calls: [{ id: req.callId, name: 'propose_agent', arguments: shownArguments({ template: call.template, name: call.name, purpose: call.purpose, overrides: call.overrides }, redact) }],
      work: { kind: 'spawn', name: call.name, template: call.template, purpose: redact(call.purpose), config: redact(check.agent.configText), prompt: redact(check.agent.promptText) },
    };
    if ((await this.#deps.approvals.create(request)) === 'created') this.#deps.onRequested?.(request);
    return { status: 'ok', content: JSON.stringify({ approval_id: id, status: 'waiting for approval', name: call.name, template: call.template, note: 'A person decides; a later run of yours is told the outcome.' }) };
  }
}

function refused(reasons: readonly string[]): ToolOutcome {
  return { status: 'error', content: `propose_agent refused:\n${reasons.map((r) => `- ${r}`).join('\n')}` };
}
