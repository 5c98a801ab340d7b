// The memory settings `warren start` runs the daemon with (bin/warren.js applies them when it starts; the
// concurrency benchmark measures them against Node's defaults). Plain JS: bin/warren.js reads it before any
// TypeScript is loaded. Placeholder values: chosen by measurement below.

/**
 * @param {{ totalMemoryBytes: number }} machine
 * @returns {{ execArgv: string[], env: Record<string, string> }}
 */
export function heapSettings(machine) {
  void machine;
  return { execArgv: ['--heap-growing-percent=30'], env: {} };
}
