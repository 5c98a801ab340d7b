// The memory settings `warren start` runs the daemon with: bin/warren.js applies them as it starts, and the
// concurrency benchmark (bench/concurrency.ts) measures them beside Node's defaults. Plain JS, because
// bin/warren.js reads it before any TypeScript is loaded.
//
// Why: on a machine with plenty of memory V8 lets the old space grow to about four times what is live before a
// full collection (its growing factor rises with the heap limit it derives from the machine's memory), so a daemon
// with ~110 MB live at 1,000 activations in flight sat at ~700 MB RSS. A fixed growing factor of 1.5 bounds the
// heap relative to what is live, yet sets no limit: a burst grows the heap as before (with more frequent full
// collections), and the hard limit stays V8's own, sized from the machine, so a burst meets no OOM it would not
// have met anyway. A cap (--max-old-space-size) was not chosen: sized for one fleet it would crash a larger one.
//
// The young generation: on such a machine V8 lets each of its two semi-spaces grow to 32 MB, and a daemon with many
// activations in flight allocates fast enough to reach it. 16 MB halves that ceiling. The trade-off is more
// frequent scavenges; each costs what survives it (the activations' live objects), not the space's size, so the
// count rises and the work per activation barely does. Side by side with the growing factor alone on the shared
// 2-core machine (1,000 in flight at 5 s, alternated rounds in one run; three runs, README "Performance"), it took
// 70-110 MB off the peak RSS at a daemon CPU per activation within each run's noise (+2 % in the quietest).

/** The old space may grow to this percentage above what the last full collection left live. */
export const HEAP_GROWING_PERCENT = 50;

/** Each of the young generation's two semi-spaces grows to at most this many MB (V8's own ceiling here: 32). */
export const MAX_SEMI_SPACE_MB = 16;

/**
 * V8 flags and environment for the daemon's process. The same on every machine: the factor is relative to what is
 * live, and V8 still sizes the limit from the machine's memory.
 * @returns {{ execArgv: string[], env: Record<string, string> }}
 */
export function heapSettings() {
  return { execArgv: [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`, `--max-semi-space-size=${MAX_SEMI_SPACE_MB}`], env: {} };
}
