// `propose_agent` (capabilities.spawning.can_propose): the agent proposes a new agent from one of its allowed
// templates (README "Agents that propose agents"). The call is checked at once and the model reads every problem
// as the tool's result; a proposal that passes is filed as an approval request of kind `spawn` and nothing more
// happens until a person approves it. What checking and filing need (the templates, the names in use, the
// approvals) is the daemon's, reached through SpawnProposals (the LLM loop, in the daemon) or the daemon's hub
// gateway (a CLI agent's `warren mcp hub --spawning`); the tool only reads its arguments.
import { z } from 'zod';
import type { AgentDefinition } from '../store/definition.ts';
import type { Tool, ToolContext, ToolOutcome } from './tools.ts';

export const PROPOSE_AGENT_TOOL = 'propose_agent';

export const ProposeAgentArgs = z.object({
  template: z.string({ error: 'template: expected the name of one of your allowed templates' }).min(1, 'template: must not be empty'),
  name: z.string({ error: 'name: expected the new agent\'s name' }).min(1, 'name: must not be empty'),
  purpose: z.string({ error: 'purpose: expected a string' }).trim().min(1, 'purpose: must not be empty').max(1_000, 'purpose: at most 1,000 characters'),
  overrides: z.record(z.string(), z.unknown(), { error: 'overrides: expected an object of config keys' }).default({}),
});
export type ProposeAgentCall = z.infer<typeof ProposeAgentArgs>;

/** Where a proposal is checked and filed (activation/spawn-proposals.ts). */
export interface SpawnProposals {
  /** Checks the proposal and files it; the outcome is what the model reads. Never throws for a refused proposal. */
  propose(req: { proposer: AgentDefinition; call: ProposeAgentCall; callId: string; idempotencyKey: string }): Promise<ToolOutcome>;
}

export function proposeAgentTool(opts: { proposer: AgentDefinition; proposals: SpawnProposals }): Tool {
  const allowed = opts.proposer.config.capabilities.spawning?.allowed_templates ?? [];
  return proposalTool(allowed, (call, ctx) => opts.proposals.propose({ proposer: opts.proposer, call, callId: ctx.callId, idempotencyKey: ctx.idempotencyKey }));
}

/** The tool over any filer: `allowed` only shapes what the model is shown; the filer checks the proposal again. */
export function proposalTool(allowed: readonly string[], file: (call: ProposeAgentCall, ctx: ToolContext) => Promise<ToolOutcome>): Tool {
  return {
    definition: {
      name: PROPOSE_AGENT_TOOL,
      description:
        `Propose a new agent made from a template (yours: ${allowed.join(', ') || 'none'}). A person decides; you are told the outcome in a later run. ` +
        'The new agent may only narrow its template: overrides may lower limits, drop grants, tools or skills, change interests and temperature, never add to them.',
      parameters: {
        type: 'object',
        properties: {
          template: { type: 'string', enum: allowed.length ? [...allowed] : undefined, description: 'the template it starts from' },
          name: { type: 'string', description: 'its name: 3-50 lowercase letters, digits and inner dashes; must not be taken' },
          purpose: { type: 'string', maxLength: 1000, description: 'what it is for, in a sentence or two (its description)' },
          overrides: { type: 'object', description: 'config keys to change in the template, as in config.yaml (e.g. {"interests": {"topics": ["rust"]}})' },
        },
        required: ['template', 'name', 'purpose'],
        additionalProperties: false,
      },
    },
    readOnly: false,
    execute: async (args, ctx) => {
      const parsed = ProposeAgentArgs.safeParse(args);
      if (!parsed.success) return { status: 'error', content: `propose_agent: ${parsed.error.issues.map((i) => i.message).join('; ')}` };
      return file(parsed.data, ctx);
    },
  };
}

/** Whether the agent is offered propose_agent (pure): the switch on and at least one template allowed. */
export function offersProposals(def: AgentDefinition): boolean {
  const s = def.config.capabilities.spawning;
  return s?.can_propose === true && s.allowed_templates.length > 0;
}
