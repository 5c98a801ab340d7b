// What the hub's budget status allows (docs/hub-api.md §5.6; issue: exploration pauses from `warning`, everything
// stops at `critical`).
import type { BudgetStatus } from '../hub-client/types.ts';
import type { ActivationJob } from './activation-job.ts';

export type Trigger = ActivationJob['trigger'];

export function budgetAllows(status: BudgetStatus, trigger: Trigger): boolean {
  if (status === 'critical') return false;
  if (trigger === 'exploration') return status === 'healthy';
  return true;
}
