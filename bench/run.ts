// `npm run bench` runs every benchmark; `npm run bench -- latency scale` runs those. Each prints its table
// and writes bench/results/<name>.json; each is stopped if it runs past 3 minutes.
import { cli } from './cli.ts';
import { concurrency } from './concurrency.ts';
import { latency } from './latency.ts';
import { scale } from './scale.ts';
import { writeResults } from './support/stats.ts';
import { throughput } from './throughput.ts';

const BENCHMARKS: Record<string, () => Promise<Record<string, unknown>>> = { throughput, latency, concurrency, scale, cli };
const LIMIT_MS = 180_000;

const asked = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const unknown = asked.filter((a) => !(a in BENCHMARKS));
if (unknown.length) {
  console.error(`unknown benchmark: ${unknown.join(', ')} (have: ${Object.keys(BENCHMARKS).join(', ')})`);
  process.exit(2);
}
let failed = 0;
for (const name of asked.length ? asked : Object.keys(BENCHMARKS)) {
  let timer: NodeJS.Timeout | undefined;
  try {
    const figures = await Promise.race([
      BENCHMARKS[name]!(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${name} ran past ${LIMIT_MS / 1000} s`)), LIMIT_MS);
      }),
    ]);
    console.log(`→ ${writeResults(name, figures)}`);
  } catch (err) {
    failed++;
    console.error(`benchmark ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}
process.exit(failed ? 1 : 0);
