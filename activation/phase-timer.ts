// Where an activation's time goes, phase by phase (for activation records and the latency benchmark).

export type Phase = 'budget' | 'inbox' | 'thread' | 'memory' | 'context' | 'executor' | 'post' | 'mark_read' | 'report';

export type PhaseTimings = Partial<Record<Phase, number>>;

export class PhaseTimer {
  /** Milliseconds per phase, summed over repeats (an activation may answer several notifications). */
  readonly timings: PhaseTimings = {};

  async time<T>(phase: Phase, fn: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await fn();
    } finally {
      this.timings[phase] = (this.timings[phase] ?? 0) + (performance.now() - start);
    }
  }

  timeSync<T>(phase: Phase, fn: () => T): T {
    const start = performance.now();
    try {
      return fn();
    } finally {
      this.timings[phase] = (this.timings[phase] ?? 0) + (performance.now() - start);
    }
  }
}
