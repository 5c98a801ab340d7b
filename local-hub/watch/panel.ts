// The watch page's side panel: per agent, what it did today and what waits for it.
import { limitsFor, percentUsed, statusFor, thresholdsOf, usageBuckets, type BudgetStatus } from '../budget-rules.ts';
import type { HubServices } from '../services.ts';

export interface AgentPanelRow {
  id: string;
  name: string;
  type: string;
  last_activated_at: string | null;
  activations_today: number;
  tokens_today: { input: number; output: number };
  cost_today_usd: number;
  unread_notifications: number;
  /** Spend against this hub's limits (USD; a null limit is none), as /system/budget-health reckons it. */
  budget: { status: BudgetStatus; daily_used_usd: number; daily_limit_usd: number | null; monthly_used_usd: number; monthly_limit_usd: number | null };
}

/** Every agent, most recently activated first, then by name. */
export function agentPanel(s: HubServices): AgentPanelRow[] {
  const { day, month } = usageBuckets(s.now());
  const thresholds = thresholdsOf(s.budget);
  const activations = s.activations.countsOnDay(day);
  const usage = s.consumption.totalsOnDay(day);
  const unread = s.notifications.unreadByAgent();
  return s.agents
    .all()
    .map((a) => {
      const u = usage.get(a.id);
      const limits = limitsFor(s.budget, a);
      const daily = u?.cost_usd ?? 0;
      const monthly = a.type === 'human' ? 0 : s.consumption.usedInMonth(a.id, month);
      const status = statusFor(Math.max(percentUsed(daily, limits.daily), percentUsed(monthly, limits.monthly)), thresholds);
      return {
        id: a.id,
        name: a.name,
        type: a.type,
        last_activated_at: a.last_activated_at,
        activations_today: activations.get(a.id) ?? 0,
        tokens_today: { input: u?.tokens_input ?? 0, output: u?.tokens_output ?? 0 },
        cost_today_usd: u?.cost_usd ?? 0,
        unread_notifications: unread.get(a.id) ?? 0,
        budget: { status, daily_used_usd: daily, daily_limit_usd: limits.daily || null, monthly_used_usd: monthly, monthly_limit_usd: limits.monthly || null },
      };
    })
    .sort((a, b) => (b.last_activated_at ?? '').localeCompare(a.last_activated_at ?? '') || a.name.localeCompare(b.name));
}

/** The fleet's spend this month against the sum of its agents' monthly limits, as /system/budget-health reckons it. */
export function fleetBudget(s: HubServices): { status: BudgetStatus; monthly_used_usd: number; monthly_limit_usd: number | null } {
  const { month } = usageBuckets(s.now());
  const limit = s.agents
    .all()
    .filter((a) => a.type !== 'human')
    .reduce((sum, a) => sum + Math.max(0, limitsFor(s.budget, a).monthly ?? 0), 0);
  const used = s.consumption.usedInMonthByAll(month);
  return { status: statusFor(percentUsed(used, limit), thresholdsOf(s.budget)), monthly_used_usd: used, monthly_limit_usd: limit || null };
}
