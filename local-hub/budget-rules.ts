// Budget arithmetic (docs/hub-api.md §5.6), pure: limits and usage in, the budget-health answer out.

export type BudgetStatus = 'healthy' | 'warning' | 'throttle' | 'critical';

export interface BudgetThresholds {
  warnPct: number;
  throttlePct: number;
  criticalPct: number;
}

export const DEFAULT_THRESHOLDS: BudgetThresholds = { warnPct: 80, throttlePct: 90, criticalPct: 100 };

/** Hub configuration: limits in USD per agent (by name or id) with defaults; 0 or absent = unlimited. */
export interface BudgetConfig {
  defaultDailyLimitUsd?: number;
  defaultMonthlyLimitUsd?: number;
  perAgent?: Record<string, { daily?: number; monthly?: number }>;
  /** Limits on everyone's spend together (the fleet); past them every agent's status is the fleet's. */
  fleetDailyLimitUsd?: number;
  fleetMonthlyLimitUsd?: number;
  warnPct?: number;
  throttlePct?: number;
  criticalPct?: number;
}

export function thresholdsOf(config: BudgetConfig): BudgetThresholds {
  return {
    warnPct: config.warnPct ?? DEFAULT_THRESHOLDS.warnPct,
    throttlePct: config.throttlePct ?? DEFAULT_THRESHOLDS.throttlePct,
    criticalPct: config.criticalPct ?? DEFAULT_THRESHOLDS.criticalPct,
  };
}

/** An agent's own limits where configured (by name, then id), else the defaults. */
export function limitsFor(config: BudgetConfig, agent: { id: string; name: string }): { daily?: number; monthly?: number } {
  const own = config.perAgent?.[agent.name] ?? config.perAgent?.[agent.id];
  return { daily: own?.daily ?? config.defaultDailyLimitUsd, monthly: own?.monthly ?? config.defaultMonthlyLimitUsd };
}

/** A limit of 0 or none means unlimited, which is 0 % used. */
export function percentUsed(used: number, limit: number | undefined): number {
  if (limit === undefined || limit <= 0) return 0;
  return round((used / limit) * 100, 2);
}

export function statusFor(usedPct: number, t: BudgetThresholds = DEFAULT_THRESHOLDS): BudgetStatus {
  if (usedPct >= t.criticalPct) return 'critical';
  if (usedPct >= t.throttlePct) return 'throttle';
  if (usedPct >= t.warnPct) return 'warning';
  return 'healthy';
}

/** What an agent should do at each level (the `budget-check` skill's advice). */
export function recommendationFor(status: BudgetStatus): string {
  return { healthy: 'normal', warning: 'normal', throttle: 'reduce', critical: 'pause' }[status];
}

export interface BillingCycle {
  started: string;
  ends: string;
  days_remaining: number;
}

/** The calendar month in UTC: usage resets on day 1. */
export function billingCycle(now: Date): BillingCycle {
  const started = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const ends = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  return { started: iso(started), ends: iso(ends), days_remaining: Math.ceil((ends.getTime() - now.getTime()) / 86_400_000) };
}

/** The ledger's buckets for a moment: its UTC day and month. */
export function usageBuckets(now: Date): { day: string; month: string } {
  const day = now.toISOString().slice(0, 10);
  return { day, month: day.slice(0, 7) };
}

export interface BudgetInput {
  agentRef: string;
  limits: { daily?: number; monthly?: number };
  used: { daily: number; monthly: number };
  /** Spend per tool today (tool_type of the consumption records; `default` when none was given). */
  toolsToday: Record<string, number>;
  collective: { budget: number; used: number };
  /** The fleet's limits and everyone's spend today and this month. */
  fleet: { limits: { daily?: number; monthly?: number }; used: { daily: number; monthly: number } };
  thresholds: BudgetThresholds;
  now: Date;
}

/** The superset answer of `GET /system/budget-health`. */
export function budgetHealth(input: BudgetInput): Record<string, unknown> {
  const { limits, used, fleet, thresholds: t } = input;
  const fleetPct = Math.max(percentUsed(fleet.used.daily, fleet.limits.daily), percentUsed(fleet.used.monthly, fleet.limits.monthly));
  // An agent within its own limits still stops when the fleet as a whole is at its limit.
  const usedPct = Math.max(percentUsed(used.daily, limits.daily), percentUsed(used.monthly, limits.monthly), fleetPct);
  const status = statusFor(usedPct, t);
  const cycle = billingCycle(input.now);
  const dailyLimit = limits.daily ?? 0;
  const tools: Record<string, unknown> = {};
  // Each tool is shown against the agent's daily limit, as in the example of docs/hub-api.md §5.6.
  for (const [tool, spent] of Object.entries(input.toolsToday)) {
    const pct = percentUsed(spent, dailyLimit);
    const toolStatus = statusFor(pct, t);
    tools[tool] = {
      status: toolStatus,
      used_pct: pct,
      remaining_usd: dailyLimit > 0 ? round(Math.max(0, dailyLimit - spent), 6) : null,
      days_remaining: cycle.days_remaining,
      recommendation: recommendationFor(toolStatus),
      used: round(spent, 6),
      limit: dailyLimit,
      percentage: pct,
    };
  }
  const collectivePct = percentUsed(input.collective.used, input.collective.budget);
  return {
    agent_id: input.agentRef,
    daily_limit: dailyLimit,
    daily_used: round(used.daily, 6),
    monthly_limit: limits.monthly ?? 0,
    monthly_used: round(used.monthly, 6),
    healthy: status !== 'critical',
    status,
    used_pct: usedPct,
    used: round(used.daily, 6),
    limit: dailyLimit,
    percentage: usedPct,
    recommendation: recommendationFor(status),
    tools,
    collective: {
      total_budget_usd: round(input.collective.budget, 6),
      total_used_usd: round(input.collective.used, 6),
      overall_health: statusFor(Math.max(collectivePct, fleetPct), t),
    },
    fleet: {
      daily_limit: fleet.limits.daily ?? 0,
      daily_used: round(fleet.used.daily, 6),
      monthly_limit: fleet.limits.monthly ?? 0,
      monthly_used: round(fleet.used.monthly, 6),
      used_pct: fleetPct,
      status: statusFor(fleetPct, t),
    },
    billing_cycle: cycle,
  };
}

function round(n: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

function iso(d: Date): string {
  return d.toISOString().replace('.000Z', 'Z');
}
