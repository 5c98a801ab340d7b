// The usage ledger (docs/agent-loop.md R9): one entry per model call that returned usage, cost from a price table.
import { addUsage, ZERO_USAGE, type TokenUsage } from './messages.ts';

/** USD per 1M tokens. */
export interface Price {
  input: number;
  output: number;
}

export type PriceTable = Readonly<Record<string, Price>> & { default: Price };

export const DEFAULT_PRICES: PriceTable = {
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-opus-4-5': { input: 15, output: 75 },
  'claude-haiku-3': { input: 0.25, output: 1.25 },
  'gpt-4-turbo': { input: 10, output: 30 },
  'gpt-4o': { input: 5, output: 15 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  default: { input: 3, output: 15 },
};

export interface LedgerEntry extends TokenUsage {
  model: string;
  costUsd: number;
  /** True when the provider reported no usage and the figures are estimates. */
  estimate: boolean;
  latencyMs: number;
  attempt: number;
  wrapUp: boolean;
}

export function priceOf(model: string, prices: PriceTable): Price {
  // Exact name first, then the longest table key the model name starts with (gpt-4o-mini-2024… → gpt-4o-mini).
  // Own keys only: a model name is what the server says, and `__proto__` or `constructor` must not become a price.
  const exact = Object.hasOwn(prices, model) ? prices[model] : undefined;
  if (exact) return exact;
  const prefix = Object.keys(prices).filter((k) => k !== 'default' && model.startsWith(k)).sort((a, b) => b.length - a.length)[0];
  return (prefix ? prices[prefix] : undefined) ?? prices.default;
}

export function costOf(model: string, usage: TokenUsage, prices: PriceTable): number {
  const p = priceOf(model, prices);
  return (usage.inputTokens * p.input + usage.outputTokens * p.output) / 1_000_000;
}

// The ledger is a plain list of entries (it travels in the loop's state, loop-state.ts); totals are computed from it.

/** The entry of one model call, costed from the price table. */
export function ledgerEntry(e: Omit<LedgerEntry, 'costUsd'>, prices: PriceTable = DEFAULT_PRICES): LedgerEntry {
  return { ...e, costUsd: costOf(e.model, e, prices) };
}

export function ledgerUsage(entries: readonly LedgerEntry[]): TokenUsage {
  return entries.reduce<TokenUsage>((acc, e) => addUsage(acc, e), ZERO_USAGE);
}

/** Input plus output tokens: what the run's token budget counts. */
export function ledgerTokens(entries: readonly LedgerEntry[]): number {
  const u = ledgerUsage(entries);
  return u.inputTokens + u.outputTokens;
}

export function ledgerCostUsd(entries: readonly LedgerEntry[]): number {
  return entries.reduce((n, e) => n + e.costUsd, 0);
}
