// The process's own metrics (CPU, memory, GC, event loop) are the process's: every daemon it starts serves them,
// and prom-client's watchers of GC and the event loop (which live as long as the process) are set up once.
import { PerformanceObserver } from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WarrenMetrics } from '../daemon/metrics.ts';

afterEach(() => vi.restoreAllMocks());

describe('process metrics', () => {
  it('every daemon of a process serves them with its own counters, and GC is watched once however many daemons start', async () => {
    const observe = vi.spyOn(PerformanceObserver.prototype, 'observe');
    const daemons = [new WarrenMetrics(), new WarrenMetrics(), new WarrenMetrics()];
    daemons[0]!.observeLag('notification', 20);
    const texts = await Promise.all(daemons.map((d) => d.text()));
    for (const text of texts) {
      expect(text).toMatch(/^warren_process_process_cpu_user_seconds_total \d/m);
      expect(text).toMatch(/^warren_process_nodejs_heap_size_total_bytes \d/m);
    }
    expect(texts[0]).toMatch(/^warren_scheduler_lag_seconds_count\{trigger="notification"\} 1$/m);
    expect(texts[1]).not.toMatch(/^warren_scheduler_lag_seconds_count\{trigger="notification"\}/m);
    const gcWatchers = observe.mock.calls.filter(([opts]) => JSON.stringify(opts ?? {}).includes('"gc"'));
    expect(gcWatchers).toHaveLength(1);
  });
});
