// `npm run bench` runs every benchmark; `npm run bench -- latency scale` runs those. Each runs in a fresh
// process (so one's memory is not the next one's RSS), prints its table and writes bench/results/<name>.json;
// each is stopped if it runs past 3 minutes.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const BENCHMARKS = ['throughput', 'latency', 'concurrency', 'scale', 'cli', 'memory'];
const LIMIT_MS = 180_000;

const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = asked.filter((a) => !BENCHMARKS.includes(a));
if (unknown.length) {
  console.error(`unknown benchmark: ${unknown.join(', ')} (have: ${BENCHMARKS.join(', ')})`);
  process.exit(2);
}
let failed = 0;
for (const name of asked.length ? asked : BENCHMARKS) {
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, ['--expose-gc', join(import.meta.dirname, `${name}.ts`)], { stdio: 'inherit' });
    const timer = setTimeout(() => {
      console.error(`benchmark ${name} ran past ${LIMIT_MS / 1000} s; stopping it`);
      child.kill('SIGKILL');
    }, LIMIT_MS);
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  if (code !== 0) {
    failed++;
    console.error(`benchmark ${name} failed (exit ${code ?? 'killed'})`);
  }
}
process.exit(failed ? 1 : 0);
