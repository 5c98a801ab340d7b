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
// The young generation is left as V8 sizes it. A cap on its semi-spaces (--max-semi-space-size=16, the default
// for a while) took another ~80 MB off the peak, but doubled the scavenges: side by side at 1,000 in flight
// (bench/concurrency.ts, 2-3 alternated rounds each, CPU per activation over the fleet's rate), Node's defaults
// 636-671 MB at 2.72-2.84 ms, this growing factor alone 440-446 MB at 3.14 ms (+11-15 %), with the cap as well
// 357 MB at 3.43 ms (+26 %). The growing factor alone meets the 450 MB bound at the least CPU; README "Performance".
// Since a plain daemon stopped loading peer SDKs it does not use (drained live heap 84 -> 60 MB): 409-419 MB, the
// CPU beside the defaults within the rounds' own spread (+2 % to +26 %); a 100 % factor went past 450 MB (467).

/** The old space may grow to this percentage above what the last full collection left live. */
export const HEAP_GROWING_PERCENT = 50;

/**
 * V8 flags and environment for the daemon's process. The same on every machine: the factor is relative to what is
 * live, and V8 still sizes the limit from the machine's memory.
 * @returns {{ execArgv: string[], env: Record<string, string> }}
 */
export function heapSettings() {
  return { execArgv: [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`], env: {} };
}
