// Figures: percentiles, a plain table, and the JSON results file of a benchmark.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: readonly number[]): Summary {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return { n: s.length, p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99), max: s.at(-1) ?? Number.NaN, mean };
}

export const round = (v: number, digits = 1): number => Math.round(v * 10 ** digits) / 10 ** digits;

/** Prints rows as an aligned table: [label, value, target?, verdict?]. */
export function printTable(title: string, rows: ReadonlyArray<readonly [string, string | number, string?]>): void {
  const w0 = Math.max(...rows.map((r) => r[0].length), 6);
  const w1 = Math.max(...rows.map((r) => String(r[1]).length), 5);
  console.log(`\n${title}`);
  console.log(`${'figure'.padEnd(w0)}  ${'value'.padStart(w1)}  target`);
  for (const [label, value, target] of rows) console.log(`${label.padEnd(w0)}  ${String(value).padStart(w1)}  ${target ?? ''}`);
}

export function machine(): { cores: number; cpu: string; memory_gib: number; node: string } {
  return { cores: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', memory_gib: round(totalmem() / 2 ** 30, 1), node: process.version };
}

export function writeResults(name: string, figures: Record<string, unknown>): string {
  // A quick run's smaller sizes must not replace the full run's figures the README table is made from.
  const dir = join(import.meta.dirname, '..', 'results', ...(process.env.BENCH_QUICK === '1' ? ['quick'] : []));
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.json`);
  writeFileSync(file, `${JSON.stringify({ benchmark: name, at: new Date().toISOString(), machine: machine(), ...figures }, null, 2)}\n`);
  return file;
}

/** Prints rows with one value per column (e.g. the same figures in two modes of one run): [label, values, target?]. */
export function printSideBySide(title: string, columns: readonly string[], rows: ReadonlyArray<readonly [string, ReadonlyArray<string | number>, string?]>): void {
  const w0 = Math.max(...rows.map((r) => r[0].length), 6);
  const widths = columns.map((c, i) => Math.max(c.length, ...rows.map((r) => String(r[1][i]).length)));
  console.log(`\n${title}`);
  console.log(`${'figure'.padEnd(w0)}  ${columns.map((c, i) => c.padStart(widths[i]!)).join('  ')}  target`);
  for (const [label, values, target] of rows) console.log(`${label.padEnd(w0)}  ${values.map((v, i) => String(v).padStart(widths[i]!)).join('  ')}  ${target ?? ''}`);
}

/** Full collections until the live heap stops shrinking (a weak reference or finalizer can free more on the next). */
export function liveHeapBytes(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  let before = Infinity;
  for (let i = 0; i < 4 && process.memoryUsage().heapUsed < before; i++) {
    before = process.memoryUsage().heapUsed;
    gc();
  }
  return process.memoryUsage().heapUsed;
}
