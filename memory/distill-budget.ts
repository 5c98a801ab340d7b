// How many tokens the distiller's reply may take: distillation runs within the activation's token budget
// (behavior.max_tokens, of which the turn spent some) and is charged to it. Pure.

/** A distillation's reply is a few short facts. */
export const DISTILL_REPLY_TOKENS = 800;
/** Less room than this for the reply is no distillation worth asking for. */
export const MIN_DISTILL_REPLY_TOKENS = 150;

export type DistillAllowance = { ok: true; maxTokens: number } | { ok: false; why: string };

/**
 * `budget`: behavior.max_tokens; `spent`: what the activation's turn used (input + output); `prompt`: the
 * distillation request's estimate; `brainMax`: brain.max_tokens, the most one reply may cost.
 */
export function distillAllowance(budget: number, spent: number, prompt: number, brainMax: number): DistillAllowance {
  const left = budget - spent - prompt;
  const maxTokens = Math.min(DISTILL_REPLY_TOKENS, brainMax, left);
  if (maxTokens < MIN_DISTILL_REPLY_TOKENS) return { ok: false, why: `token budget: ${spent} of ${budget} used; distilling needs about ${prompt + MIN_DISTILL_REPLY_TOKENS}` };
  return { ok: true, maxTokens };
}
