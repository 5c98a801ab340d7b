// Redaction's cost by the number of secrets the daemon knows (issue 32): a fleet with a key per agent knows
// 10,000–100,000, and every record, answer, log line and context of an activation is redacted. µs per redaction
// of a ~1 KB and a ~8 KB text at 1 / 1,000 / 10,000 / 100,000 known secrets, the needle index (services/redact.ts)
// beside the search it replaced (one indexOf scan per form of every secret, kept here only as the reference);
// and the time to learn 100,000 secrets one by one, as agents load. No Redis, no hub: the redactor alone.
import { performance } from 'node:perf_hooks';
import { Redactor } from '../services/redact.ts';
import { ReferenceRedactor as OldRedactor } from '../test/support/reference-redactor.ts';
import { Prng } from '../test/support/prng.ts';
import { liveHeapBytes, printSideBySide, round, summarize, writeResults } from './support/stats.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const COUNTS = [1, 1_000, 10_000, 100_000];
/** Time spent measuring each cell (after a warm-up). */
const CELL_MS = QUICK ? 200 : 600;
const ROUNDS = 8;
/** A reference redaction slower than this is measured once, and not at all beyond the first such count. */
const OLD_SLOW_MS = 2_000;


/** Per-agent keys of one kind: one head, a random tail (the index's hard case is a shared head, see needle-index.ts). */
function fleetKeys(count: number): string[] {
  const rng = new Prng(32);
  const chars = 'abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  return Array.from({ length: count }, (_, i) => `agentkey_${i.toString(36)}_${Array.from({ length: 32 }, () => rng.pick([...chars])).join('')}`);
}

/** An error message, a JSON record and a log excerpt of about `size` characters holding two known keys (plain, base64). */
function textOf(size: number, keys: readonly string[]): string {
  const parts = [
    `model call failed (401): Incorrect API key provided: ${keys[0]}. Retrying in 4 s.`,
    JSON.stringify({ activation: 'a-93k2', agent: 'scout-17', tool: 'hub_get_thread', result: { post: { content: 'The deploy of the search service failed at 12:04 with a timeout talking to the index.', author: 'ops' } } }),
    `auth: Basic ${Buffer.from(`user:${keys.at(-1)}`).toString('base64')}`,
  ];
  const filler = '2026-11-27T08:12:44Z info activation step=3 tool=memory_recall took 12 ms, 4 entries; the thread has 9 comments and one mention.\n';
  let text = parts.join('\n');
  while (text.length < size) text += filler;
  return text.slice(0, size);
}

interface Timing {
  us: number;
  calls: number;
}

/**
 * Median µs per call of each redaction of `text`, the two alternated in rounds (CELL_MS in all) so that the
 * machine's drift hits both; `old` once only when a call takes longer than OLD_SLOW_MS.
 */
function timeBoth(fresh: (t: string) => string, old: ((t: string) => string) | undefined, text: string): [Timing, Timing | undefined] {
  const samples: [number[], number[]] = [[], []];
  const run = (redact: (t: string) => string, into: number[]): void => {
    const s = performance.now();
    redact(text);
    into.push(performance.now() - s);
  };
  let slowOld = false;
  if (old) {
    const t0 = performance.now();
    old(text);
    slowOld = performance.now() - t0 > OLD_SLOW_MS;
    if (slowOld) run(old, samples[1]);
  }
  // Round 0 warms both up (the JIT) and is not counted.
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [i, redact] of [fresh, slowOld ? undefined : old].entries()) {
      if (!redact) continue;
      const end = performance.now() + CELL_MS / ROUNDS / 2;
      do run(redact, round === 0 ? [] : samples[i]!);
      while (performance.now() < end);
    }
  }
  const timing = (ms: number[]): Timing => ({ us: summarize(ms).p50 * 1000, calls: ms.length });
  return [timing(samples[0]), old ? timing(samples[1]) : undefined];
}

export function redactBench(): Record<string, unknown> {
  const all = fleetKeys(COUNTS.at(-1)!);
  const sizes = [1_024, 8_192];
  const rows: Array<[string, Array<string | number>, string?]> = [];
  const cells: Array<{ secrets: number; text_chars: number; index_us: number; old_us: number | null }> = [];
  let oldTooSlow = false;
  const skipped: number[] = [];
  for (const count of COUNTS) {
    const keys = all.slice(0, count);
    const redactor = new Redactor(keys);
    const old = oldTooSlow ? undefined : new OldRedactor(keys);
    if (!old) skipped.push(count);
    for (const size of sizes) {
      const text = textOf(size, keys);
      const out = redactor.redact(text);
      if (out.includes(keys[0]!)) throw new Error('the index missed a key');
      if (old && old.redact(text) !== out) throw new Error(`the index and the old search disagree at ${count} secrets`);
      const [fresh, was] = timeBoth((t) => redactor.redact(t), old && ((t) => old.redact(t)), text);
      if (was?.calls === 1) oldTooSlow = true;
      cells.push({ secrets: count, text_chars: size, index_us: round(fresh.us), old_us: was ? round(was.us) : null });
      rows.push([`${count.toLocaleString('en')} secrets, ${size / 1024} KB text (µs)`, [round(fresh.us), was ? `${round(was.us)}${was.calls === 1 ? ' (1 run)' : ''}` : 'skipped', was ? `×${round(was.us / fresh.us)}` : '']]);
    }
  }

  // Learning secrets one by one, as the definitions of a fleet load. The old learn re-sorted every needle on
  // each call (quadratic): timed one by one at 1,000 only, and at 100,000 in one call.
  const gc = (globalThis as { gc?: () => void }).gc;
  const oneByOne = (redactor: { learn(k: string[]): void }, keys: readonly string[]): number => {
    gc?.(); // not the garbage of the cells above
    const t0 = performance.now();
    for (const k of keys) redactor.learn([k]);
    return performance.now() - t0;
  };
  const newOne1k = oneByOne(new Redactor([]), all.slice(0, 1_000));
  const oldOne1k = oneByOne(new OldRedactor([]), all.slice(0, 1_000));
  const before = gc ? liveHeapBytes() : undefined;
  const learned = new Redactor([]);
  const newOne100k = oneByOne(learned, all);
  const heapMb = before === undefined ? undefined : round((liveHeapBytes() - before) / 2 ** 20);
  gc?.();
  let t0 = performance.now();
  const newAll = new Redactor(all);
  const newIn1 = performance.now() - t0;
  gc?.();
  t0 = performance.now();
  const oldAll = new OldRedactor(all);
  const oldIn1 = performance.now() - t0;
  const probe = `x ${all[54_321]} y`;
  if (learned.redact(probe) !== newAll.redact(probe) || newAll.redact(probe) !== oldAll.redact(probe) || probe === oldAll.redact(probe)) throw new Error('a learned key was missed');
  rows.push(
    ['learn 1,000 one by one (ms)', [round(newOne1k), round(oldOne1k), `×${round(oldOne1k / newOne1k)}`]],
    ['learn 100,000 one by one (ms)', [round(newOne100k), 'skipped (quadratic)', '']],
    ['learn 100,000 in one call (ms)', [round(newIn1), round(oldIn1), '']],
  );
  if (heapMb !== undefined) rows.push(['heap held by 100,000 secrets (MB)', [heapMb, '', '']]);

  printSideBySide(
    `redaction by known secrets (${all[0]!.length}-char per-agent keys, ~12 forms each; median over ${CELL_MS} ms per cell, the two alternated in ${ROUNDS} rounds)${skipped.length ? `; old search skipped at ${skipped.map((c) => c.toLocaleString('en')).join(', ')} secrets: one redaction took over ${OLD_SLOW_MS / 1000} s` : ''}`,
    ['index', 'old (indexOf per form)', 'old / index'],
    rows,
  );
  return {
    cell_ms: CELL_MS,
    redaction: cells,
    old_skipped_at: skipped,
    learn_ms: { index_one_by_one_1k: round(newOne1k), old_one_by_one_1k: round(oldOne1k), index_one_by_one_100k: round(newOne100k), index_in_one_call_100k: round(newIn1), old_in_one_call_100k: round(oldIn1) },
    heap_mb_100k: heapMb ?? null,
  };
}

if (import.meta.main) console.log(writeResults(process.env.BENCH_RESULT_NAME ?? 'redact', redactBench()));
