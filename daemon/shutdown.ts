// Bounded shutdown: each cleanup step gets its own time limit and the whole an overall deadline, so a stop
// always ends whatever Redis, the hub or a subprocess is doing. Unfinished steps are named, not waited for.
import type { Logger } from 'pino';

/**
 * When a step runs: stages go in this order, the steps of one stage side by side.
 * `work`: intake stops and running activations drain; `clients`: what uses the connections;
 * `connections`: Redis; `services`: store, gateway, embedded hub; `last`: tracing flush and health probes,
 * which keep answering while the rest drains.
 */
export const SHUTDOWN_STAGES = ['work', 'clients', 'connections', 'services', 'last'] as const;
export type ShutdownStage = (typeof SHUTDOWN_STAGES)[number];

export interface ShutdownStep {
  name: string;
  stage: ShutdownStage;
  /** How long this step may take; the overall deadline may cut it shorter. */
  boundMs: number;
  run(): Promise<unknown>;
}

export interface ShutdownReport {
  /** Steps still running when their bound or the overall deadline passed. */
  unfinished: string[];
  /** Steps that threw (logged with their error). */
  failed: string[];
  durationMs: number;
}

/** How long a step may run when started at `now`: its own bound, cut by the overall deadline. */
export function stepBudget(boundMs: number, now: number, deadline: number): number {
  return Math.max(0, Math.min(boundMs, deadline - now));
}

/** Runs the steps stage by stage within `deadlineMs`; never rejects. Steps past the deadline are not started. */
export async function runShutdown(steps: readonly ShutdownStep[], deadlineMs: number, logger: Logger): Promise<ShutdownReport> {
  const started = Date.now();
  const deadline = started + deadlineMs;
  const unfinished: string[] = [];
  const failed: string[] = [];
  for (const stage of SHUTDOWN_STAGES) {
    const now = Date.now();
    await Promise.all(
      steps
        .filter((s) => s.stage === stage)
        .map(async (step) => {
          const result = await bounded(step, stepBudget(step.boundMs, now, deadline));
          if (result === 'timeout') unfinished.push(step.name);
          else if (result !== 'done') {
            failed.push(step.name);
            logger.warn({ err: result.error, step: step.name }, 'error during shutdown');
          }
        }),
    );
  }
  return { unfinished, failed, durationMs: Date.now() - started };
}

async function bounded(step: ShutdownStep, ms: number): Promise<'done' | 'timeout' | { error: unknown }> {
  if (ms <= 0) return 'timeout';
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    // A step that throws synchronously is a failed step, not a failed shutdown.
    const run = Promise.resolve().then(() => step.run());
    return await Promise.race([run.then(() => 'done' as const, (error: unknown) => ({ error })), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
