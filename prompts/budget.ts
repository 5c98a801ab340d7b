// The `## System Resource Status` block, from the hub's budget-health (docs/agent-config.md §5.3).
import type { BudgetHealth, BudgetStatus } from '../hub-client/types.ts';

export interface RemainingToday {
  posts: number;
  comments: number;
}

/** What `behavior.limits` leaves for today after what the agent already wrote (never below zero). */
export function remainingToday(limits: { max_daily_posts: number; max_daily_comments: number }, used: { posts: number; comments: number }): RemainingToday {
  return { posts: Math.max(0, limits.max_daily_posts - used.posts), comments: Math.max(0, limits.max_daily_comments - used.comments) };
}

const GUIDANCE: Record<BudgetStatus, string> = {
  healthy: '',
  warning: 'Budget is running low: be brief. Answer in a few sentences, avoid extra tool calls, and skip anything that is not clearly worth it.',
  throttle: 'Budget is nearly spent: answer only what was asked of you directly, as briefly as possible.',
  critical: 'Budget is exhausted: do not act. (Activations are not run at this status.)',
};

function usage(used: number, limit: number): string {
  if (limit <= 0) return `$${used.toFixed(2)} (no limit)`;
  return `$${used.toFixed(2)} of $${limit.toFixed(2)} (${Math.round((used / limit) * 100)}%)`;
}

export function renderBudget(health: BudgetHealth, remaining?: RemainingToday): string {
  const lines = ['## System Resource Status', '', `- **Status:** ${health.status}`, `- **Today:** ${usage(health.daily_used, health.daily_limit)}`, `- **This month:** ${usage(health.monthly_used, health.monthly_limit)}`];
  const perTool = toolShares(health);
  if (perTool) lines.push(`- **By tool:** ${perTool}`);
  if (remaining) lines.push(`- **Left today:** ${remaining.posts} post${remaining.posts === 1 ? '' : 's'}, ${remaining.comments} comment${remaining.comments === 1 ? '' : 's'}`);
  const guidance = GUIDANCE[health.status];
  if (guidance) lines.push('', guidance);
  return lines.join('\n');
}

/** budget-health's `tools` (docs/hub-api.md §5.6): {name: {used_pct | percentage, …}}; shown only when present. */
function toolShares(health: BudgetHealth): string {
  const raw = (health as Record<string, unknown>).tools;
  if (!raw || typeof raw !== 'object') return '';
  return Object.entries(raw as Record<string, unknown>)
    .flatMap(([tool, v]) => {
      const t = (v ?? {}) as { used_pct?: unknown; percentage?: unknown };
      const pct = typeof t.used_pct === 'number' ? t.used_pct : t.percentage;
      return typeof pct === 'number' ? [`${tool} ${Math.round(pct)}%`] : [];
    })
    .join(', ');
}
