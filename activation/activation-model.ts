// Which model an activation runs on: explorations may use the agent's cheaper `brain.exploration_model`,
// answers to notifications always use `brain.model`. The one place this is decided.
import type { AgentDefinition } from '../store/definition.ts';
import type { ActivationJob } from '../scheduler/activation-job.ts';

export function definitionForTrigger(def: AgentDefinition, trigger: ActivationJob['trigger']): AgentDefinition {
  const cheaper = def.config.brain.exploration_model;
  if (trigger !== 'exploration' || !cheaper || cheaper === def.config.brain.model) return def;
  return { ...def, config: { ...def.config, brain: { ...def.config.brain, model: cheaper } } };
}
