// Live heap per activation in flight: what one activation waiting on its model keeps alive, in bytes. BENCH_IN_FLIGHT
// agents (default 1,000) are each mentioned once; the model answers after BENCH_MODEL_MS (default 30 s), long
// enough for every activation to reach its model call and wait there, the phase an activation spends most of its
// life in. The live heap (after full collections) with all of them waiting, less the live heap once they have all
// answered, over their number. Unlike RSS and CPU this does not move with the machine's load: it is what to compare
// before and after a change that should make an activation hold less. Its one noisy part is the baseline: the live
// heap with none running moved between 70.7 and 79.9 MB over runs of the same code while the heap with all waiting
// held at 126.3-126.4 MB, so compare several runs, or the two snapshots of one. BENCH_HEAP_SNAPSHOT=<dir> writes a heap
// snapshot at both points (what is retained, and by whom: open them in Chrome's DevTools, Memory tab, comparison).
import { subscribe } from 'node:diagnostics_channel';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { pino } from 'pino';
import { startDaemon } from '../daemon/daemon.ts';
import { liveHeapBytes, printTable, round, writeResults } from './support/stats.ts';
import { BENCH_ENV, benchConfig, inParallel, makeBenchAgents, mentioner, registerAgents, startWorld } from './support/world.ts';

const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 1_000);
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 30_000);

export async function liveHeap(): Promise<Record<string, unknown>> {
  const world = await startWorld({ modelDelayMs: MODEL_MS });
  try {
    const { root, names } = makeBenchAgents(IN_FLIGHT, world.modelUrl);
    await registerAgents(world, names);
    const mention = await mentioner(world);
    await inParallel(names, 16, async (n) => void (await mention(n)));
    let running = 0;
    let answered = 0;
    // Model requests sent (undici's diagnostics channel): each activation waits on its model once all are out.
    let modelCalls = 0;
    const modelOrigin = new URL(world.modelUrl).origin;
    subscribe('undici:request:create', (m) => {
      const { request } = m as { request: { origin?: unknown; path?: unknown } };
      if (String(request.origin) === modelOrigin && String(request.path).includes('/chat/completions')) modelCalls++;
    });
    const config = benchConfig(world, root, (c) => {
      c.workers.concurrency = IN_FLIGHT;
      c.workers.lock_duration = 120_000;
    });
    const daemon = await startDaemon({
      config,
      logger: pino({ level: 'warn' }),
      env: BENCH_ENV(world),
      onActivationStart: () => void running++,
      onOutcome: (o) => {
        running--;
        if (o.outcome.kind === 'answered') answered++;
      },
    });
    const snapshot = (label: string): void => {
      if (process.env.BENCH_HEAP_SNAPSHOT) console.log(`heap snapshot: ${writeHeapSnapshot(join(process.env.BENCH_HEAP_SNAPSHOT, `${label}-${process.pid}.heapsnapshot`))}`);
    };
    const until = async (done: () => boolean, limitMs: number, what: string): Promise<void> => {
      const by = Date.now() + limitMs;
      while (!done()) {
        if (Date.now() > by) throw new Error(`${what}: not within ${limitMs} ms (running ${running}, answered ${answered})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    // Every activation has sent its model call (after its hub reads and its context), and the requests are written.
    await until(() => modelCalls >= IN_FLIGHT, MODEL_MS, 'every model call sent');
    await new Promise((r) => setTimeout(r, 1_000));
    if (answered > 0) throw new Error(`${answered} answered before the measurement: raise BENCH_MODEL_MS`);
    const waiting = { bytes: liveHeapBytes(), inFlight: running };
    snapshot('waiting');
    await until(() => running === 0, MODEL_MS * 3, 'all answered');
    // The last outcomes' bookkeeping (record, state) settles just after them.
    await new Promise((r) => setTimeout(r, 1_000));
    const drained = liveHeapBytes();
    snapshot('drained');
    await daemon.stop();
    const figures = {
      in_flight: waiting.inFlight,
      answered,
      model_latency_ms: MODEL_MS,
      live_heap_waiting_mb: round(waiting.bytes / 2 ** 20),
      live_heap_drained_mb: round(drained / 2 ** 20),
      bytes_per_activation: Math.round((waiting.bytes - drained) / Math.max(1, waiting.inFlight)),
    };
    printTable(`live heap — ${waiting.inFlight} activations waiting on a ${MODEL_MS} ms model`, [
      ['live heap, all waiting (MB)', figures.live_heap_waiting_mb],
      ['live heap, all answered (MB)', figures.live_heap_drained_mb],
      ['live heap per activation in flight (bytes)', figures.bytes_per_activation],
    ]);
    return figures;
  } finally {
    await world.stop();
  }
}

if (import.meta.main) {
  console.log(writeResults(process.env.BENCH_RESULT_NAME ?? 'live-heap', await liveHeap()));
  // Stopped activations' retries against the stopped hub must not hold the process open.
  process.exit(0);
}
