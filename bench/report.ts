// Prints the README's performance table from bench/results/*.json (after `npm run bench`).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = Record<string, unknown>;
const dir = join(import.meta.dirname, 'results');
const read = (name: string): Json | undefined => {
  const file = join(dir, `${name}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Json) : undefined;
};
const get = (o: Json | undefined, path: string): string => {
  let v: unknown = o;
  for (const k of path.split('.')) v = v && typeof v === 'object' ? (v as Json)[k] : undefined;
  if (v === undefined || v === null) return 'n/a';
  return typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
};
const verdict = (ok: boolean | undefined): string => (ok === undefined ? '' : ok ? 'met' : '**missed**');
const num = (o: Json | undefined, path: string): number => Number(get(o, path));

const t = read('throughput');
const l = read('latency');
const c = read('concurrency');
const s = read('scale');
const cli = read('cli');
const m = t ?? l ?? c ?? s;
const rows: Array<[string, string, string, string]> = [
  ['throughput: warren activations/s (concurrency 50)', get(t, 'warren_activations_per_s'), '', ''],
  ['throughput: raw BullMQ no-op jobs/s (same Redis, concurrency)', get(t, 'raw_bullmq_jobs_per_s'), '', ''],
  ['throughput: ratio warren / raw', get(t, 'ratio_warren_to_raw'), 'as high as the pipeline allows', ''],
  ['latency: mention → activation start p50 / p95 / p99 (ms)', `${get(l, 'mention_to_start_ms.p50')} / ${get(l, 'mention_to_start_ms.p95')} / ${get(l, 'mention_to_start_ms.p99')}`, 'p99 ≤ 50', verdict(l && num(l, 'mention_to_start_ms.p99') <= 50)],
  ['latency: mention → reply posted p50 / p95 / p99 (ms)', `${get(l, 'mention_to_reply_ms.p50')} / ${get(l, 'mention_to_reply_ms.p95')} / ${get(l, 'mention_to_reply_ms.p99')}`, '', ''],
  ['latency: framework overhead p50 (ms)', get(l, 'overhead_ms.p50'), 'p50 ≤ 5', verdict(l && num(l, 'overhead_ms.p50') <= 5)],
  ['1,000 in flight: % of ideal throughput', get(c, 'percent_of_ideal'), '≥ 95', verdict(c && num(c, 'percent_of_ideal') >= 95)],
  ['1,000 in flight: peak RSS (MB)', get(c, 'peak_rss_mb'), '≤ 512', verdict(c && num(c, 'peak_rss_mb') <= 512)],
  ['1,000 in flight: event-loop lag p50 / p99 (ms)', `${get(c, 'event_loop_lag_ms.p50')} / ${get(c, 'event_loop_lag_ms.p99')}`, 'p99 ≤ 50', verdict(c && num(c, 'event_loop_lag_ms.p99') <= 50)],
  ['10,000 agents: load (s)', get(s, 'load_s'), '≤ 5', verdict(s && num(s, 'load_s') <= 5)],
  ['10,000 agents: RSS (MB)', get(s, 'rss_mb'), '≤ 300', verdict(s && num(s, 'rss_mb') <= 300)],
  ['10,000 agents: exploration round CPU mean (ms)', get(s, 'exploration_tick_cpu_ms.mean'), '≤ 50', verdict(s && num(s, 'exploration_tick_cpu_ms.mean') <= 50)],
  ['10,000 agents: fairness (max gap / mean gap)', get(s, 'fairness.ratio'), '≤ 1.5', verdict(s && num(s, 'fairness.ratio') <= 1.5)],
  ['cli: overhead per activation p50 (ms)', get(cli, 'overhead_ms.p50'), '', ''],
  ['cli: deadline → process group gone, max (ms)', get(cli, 'kill_ms.max'), '≤ grace + 1000', verdict(cli && num(cli, 'kill_ms.max') <= num(cli, 'grace_ms') + 1000)],
];
const machine = m?.machine as { cores?: number; memory_gib?: number; cpu?: string; node?: string } | undefined;
console.log(`Machine: ${machine?.cores ?? '?'} cores (${machine?.cpu ?? '?'}), ${machine?.memory_gib ?? '?'} GiB, Node ${machine?.node ?? '?'}.\n`);
console.log('| figure | value | target | |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
