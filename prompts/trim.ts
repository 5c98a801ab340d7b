// Which items of a long thread or feed fit a token budget. Pure: the caller renders and counts.

export interface Trimmed<T> {
  kept: T[];
  omitted: number;
}

/**
 * Keeps the newest items (the end of the list) that fit `budget`, plus `mustKeep` (the comment that triggered
 * the activation) whatever its age; returns them in their original order.
 */
export function keepNewest<T>(items: readonly T[], cost: (item: T) => number, budget: number, mustKeep?: (item: T) => boolean): Trimmed<T> {
  const total = items.reduce((sum, i) => sum + cost(i), 0);
  if (total <= budget) return { kept: [...items], omitted: 0 };
  const keep = new Set<T>();
  let used = 0;
  for (const item of items) {
    if (mustKeep?.(item)) {
      keep.add(item);
      used += cost(item);
    }
  }
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (keep.has(item)) continue;
    const c = cost(item);
    if (used + c > budget) break; // contiguous newest run: no holes between kept recent comments
    keep.add(item);
    used += c;
  }
  const kept = items.filter((i) => keep.has(i));
  return { kept, omitted: items.length - kept.length };
}

/** Keeps the first items (a feed is ordered best first) that fit `budget`; at least one when there is one. */
export function keepFirst<T>(items: readonly T[], cost: (item: T) => number, budget: number): Trimmed<T> {
  const kept: T[] = [];
  let used = 0;
  for (const item of items) {
    const c = cost(item);
    if (kept.length > 0 && used + c > budget) break;
    kept.push(item);
    used += c;
  }
  return { kept, omitted: items.length - kept.length };
}
