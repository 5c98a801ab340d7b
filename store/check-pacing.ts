// How long a folder store waits between its periodic checks (store/local-store.ts). A check stat()s every file of
// the store, so its cost grows with the store: ~1,200 files take tens of milliseconds, 200,000 take seconds, longer
// than the default 2 s interval, and a fixed interval would then keep a core busy checking an idle store. The wait
// stretches with what the last check cost, so the check stays a bounded share of one core however large the store.

/**
 * The wait is at least this many times the last check's wall time. The check's CPU is about twice its main thread's
 * (the stat calls themselves run on libuv's threads beside it: 4.3 s of CPU, 2.2 s of it the main thread's, at
 * 200,000 files), and the main thread's is at most the wall time, so the check takes at most about 2 / (1 + 100)
 * ≈ 2 % of one core; bench/scale.ts prints the share measured.
 */
export const CHECK_COST_FACTOR = 100;

/**
 * Milliseconds until the next check: the configured interval, stretched to CHECK_COST_FACTOR × the last check's
 * duration when that is longer. Not capped: any cap is a store size past which the check takes more than its share
 * again, and the stretched wait only delays the safety net (fs.watch still reports most saves at once; `warren
 * reload` and SIGHUP always work). A single slow check (the event loop held by a reload) stretches one wait only:
 * the next check is measured anew.
 */
export function nextCheckDelayMs({ configuredMs, lastCheckMs }: { configuredMs: number; lastCheckMs: number }): number {
  const cost = Number.isFinite(lastCheckMs) && lastCheckMs > 0 ? lastCheckMs : 0;
  return Math.max(configuredMs, Math.ceil(cost * CHECK_COST_FACTOR));
}

/**
 * Whether a wait is worth a log line: the first time it is at least twice the configured interval, and again each
 * time it doubles past the last one logged (a store that grew), never at every check nor when it wobbles. A small
 * store's check slowed by a busy moment (the daemon starting: 16 files took 23 ms) stretches the wait a little,
 * once; that is not the store's size, and an operator told so would look for a cause that is not there.
 */
export function stretchWorthLogging({ configuredMs, loggedMs, delayMs }: { configuredMs: number; loggedMs: number | undefined; delayMs: number }): boolean {
  return delayMs >= 2 * (loggedMs ?? configuredMs);
}
