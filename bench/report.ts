// Prints the README's performance table from bench/results/*.json (after `npm run bench`): each figure, its
// target, whether it is met, and the same-run reference (the minimal pipeline, or raw BullMQ) where there is one.
// `node bench/report.ts --write` replaces the table between the markers in README.md.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACTIVE_AGENT_REDIS_BOUND } from './support/memory-bounds.ts';

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
const num = (o: Json | undefined, path: string): number => Number(get(o, path));
const verdict = (o: Json | undefined, ok: (o: Json) => boolean): string => (o === undefined ? '' : ok(o) ? 'met' : '**missed**');

const round1 = (n: number): string => (Number.isFinite(n) ? String(Math.round(n * 10) / 10) : 'n/a');
const red = read('redact');
/** A redaction cell of bench/redact.ts: 1 KB of text at `secrets` known secrets. */
const redactionUs = (secrets: number, which: 'index_us' | 'old_us' = 'index_us'): string => {
  const cell = (red?.redaction as Array<Record<string, number>> | undefined)?.find((c) => c.secrets === secrets && c.text_chars === 1024);
  return cell?.[which] === undefined ? 'n/a' : String(cell[which]);
};
const t = read('throughput');
const l = read('latency');
const c1 = read('concurrency-1000x5s');
const c2 = read('concurrency-2000x10s');
const s1 = read('scale-10k');
const s2 = read('scale-100k');
const cli = read('cli');
type Row = [figure: string, value: string, target: string, verdict: string, reference: string];
const rows: Row[] = [
  ['daemon CPU per activation (ms)', get(t, 'daemon_cpu_ms_per_activation'), '≤ 3.0', verdict(t, (o) => num(o, 'daemon_cpu_ms_per_activation') <= 3), `minimal ${get(t, 'minimal_cpu_ms_per_activation')}`],
  ['daemon CPU / minimal pipeline', get(t, 'ratio_daemon_cpu_to_minimal'), '≤ 2.0 (stretch 1.5)', verdict(t, (o) => num(o, 'ratio_daemon_cpu_to_minimal') <= 2), 'alternated rounds, same run'],
  ['steady arrival: daemon CPU per activation (ms)', get(t, 'steady.daemon_cpu_ms_per_activation'), '', '', `minimal ${get(t, 'steady.minimal_cpu_ms_per_activation')}, same arrival`],
  ['steady arrival: daemon CPU / minimal pipeline', get(t, 'steady.ratio_daemon_cpu_to_minimal'), '≤ 2.0', get(t, 'steady') === 'n/a' ? '' : verdict(t, (o) => num(o, 'steady.ratio_daemon_cpu_to_minimal') <= 2), '200 agents, 16 posts at a time, warm after 1,400'],
  ['daemon start CPU (ms, 600 agents, once per start)', get(t, 'daemon_start_cpu_ms'), '', '', 'not counted per activation above'],
  ['hub CPU per activation (ms)', get(t, 'hub_cpu_ms_per_activation'), '≤ 2.0', verdict(t, (o) => num(o, 'hub_cpu_ms_per_activation') <= 2), ''],
  ['hub calls per activation (counted)', get(t, 'hub_calls_per_activation'), '', '', `minimal ${get(t, 'minimal_hub_calls_per_activation')}; steady ${get(t, 'steady.hub_calls_per_activation')}, minimal ${get(t, 'steady.minimal_hub_calls_per_activation')}`],
  ['activations/s (concurrency 50, zero-latency model)', get(t, 'warren_activations_per_s'), '', '', `minimal ${get(t, 'minimal_activations_per_s')}; raw BullMQ no-op ${get(t, 'raw_bullmq_jobs_per_s')} jobs/s`],
  ['overhead (end to end − model) p50 / p99 (ms)', `${get(l, 'overhead_ms.p50')} / ${get(l, 'overhead_ms.p99')}`, 'p50 ≤ 4, p99 ≤ 15', verdict(l, (o) => num(o, 'overhead_ms.p50') <= 4 && num(o, 'overhead_ms.p99') <= 15), `minimal pipeline ${get(l, 'minimal.overhead_ms.p50')} / ${get(l, 'minimal.overhead_ms.p99')}, same mentions`],
  ['mention → activation start p50 / p99 (ms)', `${get(l, 'mention_to_start_ms.p50')} / ${get(l, 'mention_to_start_ms.p99')}`, 'p99 ≤ 20', verdict(l, (o) => num(o, 'mention_to_start_ms.p99') <= 20), ''],
  ['1,000 in flight at 5 s: % of ideal (200/s)', get(c1, 'percent_of_ideal'), '≥ 95', verdict(c1, (o) => num(o, 'percent_of_ideal') >= 95), `hub ${get(c1, 'hub_process_cpu_share')} cores, model ${get(c1, 'model_process_cpu_share')}`],
  ['1,000 in flight at 5 s: peak RSS (MB)', get(c1, 'peak_rss_mb'), '≤ 450', verdict(c1, (o) => num(o, 'peak_rss_mb') <= 450), `Node defaults ${get(c1, 'heap_settings.0.peak_rss_mb')}; CPU/activation ${get(c1, 'cpu_change_percent')} % vs them`],
  ['1,000 in flight at 5 s: event-loop lag p99 (ms)', get(c1, 'event_loop_lag_ms.p99'), '≤ 30', verdict(c1, (o) => num(o, 'event_loop_lag_ms.p99') <= 30), `daemon ${get(c1, 'daemon_process_cpu_share')} cores`],
  ['2,000 in flight at 10 s: % of ideal (200/s)', get(c2, 'percent_of_ideal'), '≥ 95', verdict(c2, (o) => num(o, 'percent_of_ideal') >= 95), `hub ${get(c2, 'hub_process_cpu_share')} cores, model ${get(c2, 'model_process_cpu_share')}`],
  ['2,000 in flight at 10 s: peak RSS (MB)', get(c2, 'peak_rss_mb'), '≤ 600', verdict(c2, (o) => num(o, 'peak_rss_mb') <= 600), `daemon ${get(c2, 'daemon_process_cpu_share')} cores`],
  ['10,000 agents: exploration round CPU mean (ms)', get(s1, 'exploration_tick_cpu_ms.mean'), '≤ 30', verdict(s1, (o) => num(o, 'exploration_tick_cpu_ms.mean') <= 30), ''],
  ['10,000 agents: load (s) / RSS (MB)', `${get(s1, 'load_s')} / ${get(s1, 'rss_mb')}`, '', '', ''],
  ['10,000 agents: Redis bytes per idle agent', get(s1, 'redis_bytes_per_agent.idle'), '≤ 20480', verdict(s1, (o) => num(o, 'redis_bytes_per_agent.idle') <= 20_480), 'a day: explored once'],
  ['10,000 agents: Redis bytes per active agent', get(s1, 'redis_bytes_per_agent.active'), `≤ ${ACTIVE_AGENT_REDIS_BOUND} (bound)`, verdict(s1, (o) => num(o, 'redis_bytes_per_agent.active') <= ACTIVE_AGENT_REDIS_BOUND), 'a day: 48 runs'],
  ['10,000 agents: fairness (max gap / mean gap)', get(s1, 'fairness.ratio'), '≤ 1.5', verdict(s1, (o) => num(o, 'fairness.ratio') <= 1.5), ''],
  ['100,000 agents: load (s)', get(s2, 'load_s'), '≤ 5', verdict(s2, (o) => num(o, 'load_s') <= 5), ''],
  ['100,000 agents: Redis bytes per idle agent', get(s2, 'redis_bytes_per_agent.idle'), '≤ 20480', verdict(s2, (o) => num(o, 'redis_bytes_per_agent.idle') <= 20_480), 'a day: explored once'],
  ['100,000 agents: Redis bytes per active agent', get(s2, 'redis_bytes_per_agent.active'), `≤ ${ACTIVE_AGENT_REDIS_BOUND} (bound)`, verdict(s2, (o) => num(o, 'redis_bytes_per_agent.active') <= ACTIVE_AGENT_REDIS_BOUND), 'a day: 48 runs'],
  ['100,000 agents: slowest Redis call of an exploration round (ms)', get(s2, 'exploration_slowest_redis_call_ms'), '≤ 5', verdict(s2, (o) => num(o, 'exploration_slowest_redis_call_ms') <= 5), `Redis on its own core; p99 ${get(s2, 'exploration_redis_call_p99_ms')} ms (SLOWLOG); cores shared with daemon and hub: ${get(s2, 'exploration_slowest_redis_call_shared_cores_ms')} ms, p99 ${get(s2, 'exploration_redis_call_p99_shared_cores_ms')}`],
  ['100,000 agents: RSS (MB)', get(s2, 'rss_mb'), '≤ 1536', verdict(s2, (o) => num(o, 'rss_mb') <= 1536), ''],
  ['100,000 agents: exploration round CPU mean (ms)', get(s2, 'exploration_tick_cpu_ms.mean'), '≤ 300', verdict(s2, (o) => num(o, 'exploration_tick_cpu_ms.mean') <= 300), ''],
  ['100,000 agents: fairness', get(s2, 'fairness.ratio'), '≤ 1.5', verdict(s2, (o) => num(o, 'fairness.ratio') <= 1.5), ''],
  ['100,000 agents: store check (ms) / its interval (s) / share of a core (%)', `${get(s2, 'store_check.wall_ms')} / ${round1(num(s2, 'store_check.interval_ms') / 1000)} / ${get(s2, 'store_check.core_share_pct')}`, '', '', `at a fixed 2 s: ${get(s2, 'store_check.fixed_interval_core_share_pct')} % of a core`],
  ['redaction of 1 KB, 100,000 known secrets (µs)', redactionUs(100_000), '', '', `1 secret: ${redactionUs(1)}; one search per secret (before): ${redactionUs(100_000, 'old_us')}`],
  ['cli: overhead per activation p50 (ms)', get(cli, 'overhead_ms.p50'), '', '', ''],
  ['cli: deadline → process group gone, max (ms)', get(cli, 'kill_ms.max'), '≤ grace + 1000', verdict(cli, (o) => num(o, 'kill_ms.max') <= num(o, 'grace_ms') + 1000), ''],
];
const all = [t, l, c1, c2, s1, s2, cli, red].filter((o): o is Json => o !== undefined);
const m = all[0]?.machine as { cores?: number; memory_gib?: number; cpu?: string; node?: string } | undefined;
const dates = [...new Set(all.map((o) => String(o.at).slice(0, 10)))].sort();
const lines = [
  `Run of ${dates.join(', ') || '?'} on ${m?.cores ?? '?'} cores (${m?.cpu ?? '?'}), ${m?.memory_gib ?? '?'} GiB, Node ${m?.node ?? '?'}.`,
  '',
  '| figure | value | target | | same-run reference |',
  '|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.join(' | ')} |`),
];
const table = lines.join('\n');
console.log(table);

const BEGIN = '<!-- bench/report.ts: begin -->';
const END = '<!-- bench/report.ts: end -->';
if (process.argv.includes('--write')) {
  const readme = join(import.meta.dirname, '..', 'README.md');
  const text = readFileSync(readme, 'utf8');
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`README.md has no ${BEGIN} … ${END} markers`);
  writeFileSync(readme, `${text.slice(0, a + BEGIN.length)}\n${table}\n${text.slice(b)}`);
}
