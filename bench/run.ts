// `npm run bench` runs every benchmark; `npm run bench -- latency scale-10k` runs those; `npm run bench --
// --quick` runs the quick set with smaller sizes (BENCH_QUICK=1: fewer rounds, shorter windows). Each runs in a
// fresh process (so one's memory is not the next one's RSS), prints its table and writes
// bench/results/<name>.json; each is stopped if it runs past its time limit.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

interface Bench {
  name: string;
  file: string;
  env?: Record<string, string>;
  limitMs: number;
  /** Part of `--quick`. */
  quick: boolean;
}

const BENCHMARKS: Bench[] = [
  { name: 'minimal', file: 'minimal', limitMs: 180_000, quick: true },
  { name: 'throughput', file: 'throughput', limitMs: 480_000, quick: true },
  { name: 'latency', file: 'latency', limitMs: 180_000, quick: true },
  { name: 'concurrency-1000x5s', file: 'concurrency', env: { BENCH_IN_FLIGHT: '1000', BENCH_MODEL_MS: '5000' }, limitMs: 600_000, quick: true },
  { name: 'concurrency-2000x10s', file: 'concurrency', env: { BENCH_IN_FLIGHT: '2000', BENCH_MODEL_MS: '10000' }, limitMs: 900_000, quick: false },
  { name: 'live-heap', file: 'live-heap', limitMs: 300_000, quick: false },
  { name: 'scale-10k', file: 'scale', env: { BENCH_AGENTS: '10000' }, limitMs: 240_000, quick: true },
  { name: 'scale-100k', file: 'scale', env: { BENCH_AGENTS: '100000' }, limitMs: 900_000, quick: false },
  { name: 'cli', file: 'cli', limitMs: 180_000, quick: true },
  { name: 'redact', file: 'redact', limitMs: 120_000, quick: true },
  { name: 'memory', file: 'memory', limitMs: 300_000, quick: false },
  { name: 'memory-recall', file: 'memory-recall/recall-quality', limitMs: 120_000, quick: true },
];

const quick = process.argv.includes('--quick');
const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = asked.filter((a) => !BENCHMARKS.some((b) => b.name === a));
if (unknown.length) {
  console.error(`unknown benchmark: ${unknown.join(', ')} (have: ${BENCHMARKS.map((b) => b.name).join(', ')})`);
  process.exit(2);
}
const chosen = asked.length ? BENCHMARKS.filter((b) => asked.includes(b.name)) : BENCHMARKS.filter((b) => b.quick || !quick);
let failed = 0;
const started = Date.now();
for (const b of chosen) {
  const t0 = Date.now();
  const code = await new Promise<number | null>((resolve) => {
    const env = { ...process.env, ...b.env, BENCH_RESULT_NAME: b.name, ...(quick ? { BENCH_QUICK: '1' } : {}) };
    const child = spawn(process.execPath, ['--expose-gc', join(import.meta.dirname, `${b.file}.ts`)], { stdio: 'inherit', env });
    const timer = setTimeout(() => {
      console.error(`benchmark ${b.name} ran past ${b.limitMs / 1000} s; stopping it`);
      child.kill('SIGKILL');
    }, b.limitMs);
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  console.log(`(${b.name}: ${Math.round((Date.now() - t0) / 1000)} s)`);
  if (code !== 0) {
    failed++;
    console.error(`benchmark ${b.name} failed (exit ${code ?? 'killed'})`);
  }
}
console.log(`\n${chosen.length} benchmarks in ${Math.round((Date.now() - started) / 1000)} s${failed ? `, ${failed} failed` : ''}`);
process.exit(failed ? 1 : 0);
