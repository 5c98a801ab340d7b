// How long the event loop was held during a piece of a test, beside what the machine itself did meanwhile: an idle
// worker thread measures its own loop's delay over the same window. A stall of the test's code (a long
// synchronous call, a GC of its garbage) shows on the main thread only; a busy machine descheduling the process
// shows on both, so a bound on the main thread's delay can be asked beyond that noise instead of failing on it.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

export interface LagProbe {
  /**
   * Ends the window: the main thread's longest delay in it, and the noise, in ms: the longer of the idle thread's
   * over the window and the main thread's own over a quiet second before it (a busy thread is preempted for longer
   * than an idle one that only wakes up).
   */
  stop(): Promise<{ maxMs: number; noiseMs: number }>;
}

const IDLE_THREAD = `
const { parentPort } = require('node:worker_threads');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const h = monitorEventLoopDelay({ resolution: 10 });
h.enable();
parentPort.postMessage('ready');
parentPort.on('message', () => { h.disable(); parentPort.postMessage(h.max / 1e6); });
`;

/** Measures the main thread's quiet delay for `baselineMs`, then starts both monitors (sampling every 10 ms). */
export async function startLagProbe(baselineMs = 1_000): Promise<LagProbe> {
  const quiet = monitorEventLoopDelay({ resolution: 10 });
  quiet.enable();
  await new Promise((resolve) => setTimeout(resolve, baselineMs));
  quiet.disable();
  const baseline = quiet.max / 1e6;
  const worker = new Worker(IDLE_THREAD, { eval: true });
  worker.unref(); // a test that fails before stop() must not be kept alive by it
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  const main = monitorEventLoopDelay({ resolution: 10 });
  main.enable();
  return {
    async stop() {
      main.disable();
      const noiseMs = await new Promise<number>((resolve, reject) => {
        worker.once('message', (ms: number) => resolve(ms));
        worker.once('error', reject);
        worker.postMessage('stop');
      });
      await worker.terminate();
      return { maxMs: main.max / 1e6, noiseMs: Math.max(noiseMs, baseline) };
    },
  };
}
