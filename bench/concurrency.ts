// Concurrency: BENCH_IN_FLIGHT activations (default 1,000) in flight in one worker process, each waiting
// BENCH_MODEL_MS (default 5 s) on the model. Each agent is mentioned again as soon as its activation ends, so the
// workers stay full; throughput is compared with the ideal (in flight / model latency). The daemon runs in this
// process, the hub and the model server in their own: this process's memory, event-loop lag and CPU are the
// daemon's (plus the light mention generator), and the hub's and the model server's CPU are reported apart.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { heapSettings } from '../bin/heap-settings.js';
import { pino } from 'pino';
import { startDaemon } from '../daemon/daemon.ts';
import { liveHeapBytes, printSideBySide, printTable, round, writeResults } from './support/stats.ts';
import { BENCH_ENV, benchConfig, inParallel, makeBenchAgents, mentioner, processCpuMs, registerAgents, startWorld } from './support/world.ts';

const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 1_000);
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 5_000);
// Past the first wave (every agent started once) and into the steady state before measuring.
const WARMUP_MS = Math.round(MODEL_MS * 1.5 + 3_000);
const MEASURE_MS = Number(process.env.BENCH_MEASURE_MS ?? MODEL_MS * (process.env.BENCH_QUICK === '1' ? 2 : 3));
const RSS_TARGET_MB = IN_FLIGHT > 1_000 ? 600 : 450;

export async function concurrency(): Promise<Record<string, unknown>> {
  const world = await startWorld({ modelDelayMs: MODEL_MS });
  try {
    const { root, names } = makeBenchAgents(IN_FLIGHT, world.modelUrl);
    await registerAgents(world, names);
    const mention = await mentioner(world);
    await inParallel(names, 16, async (n) => void (await mention(n)));

    let running = 0;
    let peakRunning = 0;
    let stopMentioning = false;
    const finishes: number[] = [];
    // Each agent's time from one answer to its next (mention, intake, queue, activation): its cycle. Completions
    // counted in a window come in waves (every agent starts at once and the model's latency is fixed), so a
    // window holds one wave more or less depending on where it falls; the mean cycle does not.
    const lastFinish = new Map<string, number>();
    const cycles: number[] = [];
    // The measured window, once the warm-up is over.
    let from = Infinity;
    let until = Infinity;
    const config = benchConfig(world, root, (c) => {
      c.workers.concurrency = IN_FLIGHT;
      c.workers.lock_duration = 60_000;
    });
    const daemon = await startDaemon({
      config,
      logger: pino({ level: 'warn' }),
      env: BENCH_ENV(world),
      onActivationStart: () => {
        peakRunning = Math.max(peakRunning, ++running);
      },
      onOutcome: (o) => {
        running--;
        if (o.outcome.kind !== 'answered') return;
        const now = Date.now();
        finishes.push(now);
        const previous = lastFinish.get(o.agent);
        // A cycle counts when it ends inside the window (wherever it began, after a first answer).
        if (previous !== undefined && now >= from && now < until) cycles.push(now - previous);
        lastFinish.set(o.agent, now);
        // Keep this agent busy: its next mention arrives as soon as it is done.
        if (!stopMentioning) void mention(o.agent).catch(() => undefined);
      },
    });
    const started = Date.now();
    await new Promise((r) => setTimeout(r, WARMUP_MS));
    const lag = monitorEventLoopDelay({ resolution: 1 });
    lag.enable();
    let peakRss = process.memoryUsage().rss;
    let atPeak = process.memoryUsage();
    // V8's spaces at the peak: how much of the RSS is heap V8 holds (committed) and how much of that is in use.
    let spacesAtPeak = getHeapSpaceStatistics();
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      if (m.rss > peakRss) [peakRss, atPeak, spacesAtPeak] = [m.rss, m, getHeapSpaceStatistics()];
    }, 100);
    const hubCpu0 = processCpuMs(world.hubProcess.pid!);
    const modelCpu0 = processCpuMs(world.modelProcess.pid!);
    // The garbage collector's pauses in the window, by kind: what a heap setting costs, apart from the rest.
    const gc = { minorMs: 0, minor: 0, majorMs: 0, major: 0 };
    const gcObserver = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
        if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) [gc.minorMs, gc.minor] = [gc.minorMs + e.duration, gc.minor + 1];
        else [gc.majorMs, gc.major] = [gc.majorMs + e.duration, gc.major + 1];
      }
    });
    gcObserver.observe({ entryTypes: ['gc'] });
    const cpu0 = process.cpuUsage();
    from = Date.now();
    await new Promise((r) => setTimeout(r, MEASURE_MS));
    const to = Date.now();
    until = to;
    const cpu = process.cpuUsage(cpu0);
    gcObserver.disconnect();
    const hubCpuShare = (processCpuMs(world.hubProcess.pid!) - hubCpu0) / (to - from);
    const modelCpuShare = (processCpuMs(world.modelProcess.pid!) - modelCpu0) / (to - from);
    const daemonCpuShare = (cpu.user + cpu.system) / 1000 / (to - from);
    lag.disable();
    clearInterval(sampler);
    // What each activation in flight keeps alive: the live heap (after full collections) with the workers full,
    // less the live heap once they have drained, over the activations in flight. Bytes retained do not move with
    // the machine's load as timings do. Taken after the measured window, so its collections cost that window
    // nothing. BENCH_HEAP_SNAPSHOT=<dir> writes a heap snapshot at each of the two points, to see what is retained.
    const live = (label: string): { bytes: number; inFlight: number } => {
      const at = { bytes: liveHeapBytes(), inFlight: running };
      if (process.env.BENCH_HEAP_SNAPSHOT) console.log(`heap snapshot (${at.inFlight} in flight): ${writeHeapSnapshot(join(process.env.BENCH_HEAP_SNAPSHOT, `${label}-${process.pid}.heapsnapshot`))}`);
      return at;
    };
    const full = live('in-flight');
    stopMentioning = true;
    const drainBy = Date.now() + MODEL_MS * 2 + 10_000;
    while (running > 0 && Date.now() < drainBy) await new Promise((r) => setTimeout(r, 100));
    // The last activations' bookkeeping (records, state) settles just after their outcome.
    await new Promise((r) => setTimeout(r, 500));
    const drained = live('drained');
    await daemon.stop();

    const completed = finishes.filter((t) => t >= from && t < to).length;
    const windowRate = completed / ((to - from) / 1000);
    const meanCycleMs = cycles.reduce((a, c) => a + c, 0) / Math.max(1, cycles.length);
    // Every agent is always in its cycle, so the fleet's rate is the agents over the mean cycle.
    const achieved = cycles.length ? IN_FLIGHT / (meanCycleMs / 1000) : windowRate;
    const ideal = IN_FLIGHT / (MODEL_MS / 1000);
    // Activations the window's CPU paid for: the fleet's rate over the window, not the completions counted in it,
    // which move by a whole wave (a third of them at 5 s in a 15 s window) with where the window falls.
    const activationsInWindow = achieved * ((to - from) / 1000);
    const figures = {
      in_flight_target: IN_FLIGHT,
      peak_in_flight: peakRunning,
      model_latency_ms: MODEL_MS,
      window_s: MEASURE_MS / 1000,
      warmup_s: round((from - started) / 1000),
      achieved_per_s: round(achieved),
      mean_cycle_ms: round(meanCycleMs),
      cycles_measured: cycles.length,
      completions_in_window_per_s: round(windowRate),
      ideal_per_s: ideal,
      percent_of_ideal: round((100 * achieved) / ideal),
      peak_rss_mb: round(peakRss / 2 ** 20),
      live_heap: {
        in_flight: full.inFlight,
        in_flight_mb: round(full.bytes / 2 ** 20),
        drained_in_flight: drained.inFlight,
        drained_mb: round(drained.bytes / 2 ** 20),
        // Only with the workers mostly full: on a starved machine a few in flight leave the difference to noise.
        kb_per_activation: full.inFlight >= IN_FLIGHT / 2 && drained.inFlight === 0 ? round((full.bytes - drained.bytes) / full.inFlight / 1024) : null,
      },
      max_rss_mb_process: round(process.resourceUsage().maxRSS / 1024),
      at_peak_mb: {
        heap_used: round(atPeak.heapUsed / 2 ** 20),
        heap_total: round(atPeak.heapTotal / 2 ** 20),
        external: round(atPeak.external / 2 ** 20),
        array_buffers: round(atPeak.arrayBuffers / 2 ** 20),
        spaces: Object.fromEntries(spacesAtPeak.map((sp) => [sp.space_name, { committed: round(sp.physical_space_size / 2 ** 20), used: round(sp.space_used_size / 2 ** 20) }])),
      },
      event_loop_lag_ms: { p50: round(lag.percentile(50) / 1e6), p99: round(lag.percentile(99) / 1e6), max: round(lag.max / 1e6) },
      daemon_process_cpu_share: round(daemonCpuShare, 2),
      daemon_cpu_ms_per_activation: round((cpu.user + cpu.system) / 1000 / Math.max(1, activationsInWindow), 2),
      daemon_cpu_ms_per_completion_in_window: round((cpu.user + cpu.system) / 1000 / Math.max(1, completed), 2),
      gc: {
        minor_pauses: gc.minor,
        major_pauses: gc.major,
        pause_ms_per_activation: round((gc.minorMs + gc.majorMs) / Math.max(1, activationsInWindow), 3),
        minor_ms_per_activation: round(gc.minorMs / Math.max(1, activationsInWindow), 3),
        major_ms_per_activation: round(gc.majorMs / Math.max(1, activationsInWindow), 3),
      },
      hub_process_cpu_share: round(hubCpuShare, 2),
      model_process_cpu_share: round(modelCpuShare, 2),
      rss_target_mb: RSS_TARGET_MB,
    };
    printTable(`concurrency — ${IN_FLIGHT} activations in flight in one worker process, model latency ${MODEL_MS} ms`, [
      ['peak in flight', peakRunning],
      ['achieved activations/s (agents / mean cycle)', figures.achieved_per_s],
      ['mean cycle: answer to next answer (ms)', figures.mean_cycle_ms],
      ['completions in the window / s (waves: ± one)', figures.completions_in_window_per_s],
      ['ideal (in flight / latency)', ideal],
      ['% of ideal', figures.percent_of_ideal, '≥ 95'],
      ['peak RSS (MB)', figures.peak_rss_mb, `≤ ${RSS_TARGET_MB}`],
      [`live heap: ${full.inFlight} in flight / drained (MB)`, `${figures.live_heap.in_flight_mb} / ${figures.live_heap.drained_mb}`],
      ['live heap per activation in flight (KB)', figures.live_heap.kb_per_activation ?? 'n/a'],
      ['event-loop lag p50 (ms)', figures.event_loop_lag_ms.p50],
      ['event-loop lag p99 (ms)', figures.event_loop_lag_ms.p99, '≤ 30'],
      ['daemon process CPU (cores)', figures.daemon_process_cpu_share],
      ['daemon CPU ms per activation (window CPU / fleet rate × window)', figures.daemon_cpu_ms_per_activation],
      ['daemon CPU ms per completion counted in the window', figures.daemon_cpu_ms_per_completion_in_window],
      ['GC pauses per activation (ms): all / minor / major', `${figures.gc.pause_ms_per_activation} / ${figures.gc.minor_ms_per_activation} / ${figures.gc.major_ms_per_activation}`],
      ['GC pauses in the window: minor / major', `${gc.minor} / ${gc.major}`],
      ['hub process CPU (cores)', figures.hub_process_cpu_share],
      ['model server CPU (cores)', figures.model_process_cpu_share],
    ]);
    return figures;
  } finally {
    await world.stop();
  }
}

interface Variant {
  name: string;
  execArgv: string[];
  env: Record<string, string>;
}

/**
 * The memory settings `warren start` applies (bin/heap-settings.js) against Node's defaults: each a child
 * process running the whole benchmark (its own world), alternated round by round so machine drift hits both.
 * BENCH_HEAP_VARIANTS (JSON: [{name, execArgv, env}]) replaces the pair, to try others.
 */
async function compareHeapSettings(): Promise<Record<string, unknown>> {
  const tuned = heapSettings();
  const variants: Variant[] = process.env.BENCH_HEAP_VARIANTS
    ? (JSON.parse(process.env.BENCH_HEAP_VARIANTS) as Variant[])
    : [
        { name: 'node defaults', execArgv: [], env: {} },
        { name: 'warren start', execArgv: tuned.execArgv, env: tuned.env },
      ];
  const rounds = Number(process.env.BENCH_HEAP_ROUNDS ?? (process.env.BENCH_QUICK === '1' ? 1 : 2));
  const runs = new Map<string, Array<Record<string, unknown>>>(variants.map((v) => [v.name, []]));
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-heap-'));
  try {
    for (let r = 0; r < rounds; r++) {
      for (const v of r % 2 === 0 ? variants : [...variants].reverse()) {
        const out = join(dir, `${r}-${runs.get(v.name)!.length}-${v.name.replace(/\W+/g, '_')}.json`);
        const code = await new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, [...v.execArgv, '--expose-gc', import.meta.filename], { stdio: 'inherit', env: { ...process.env, ...v.env, BENCH_CHILD_OUT: out } });
          child.once('exit', (c) => resolve(c));
        });
        if (code !== 0) throw new Error(`the ${v.name} run exited with ${code}`);
        runs.get(v.name)!.push(JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const mean = (name: string, f: (o: Record<string, unknown>) => number): number => {
    const rs = runs.get(name)!;
    return rs.reduce((a, o) => a + f(o), 0) / rs.length;
  };
  const max = (name: string, f: (o: Record<string, unknown>) => number): number => Math.max(...runs.get(name)!.map(f));
  const summary = variants.map((v) => ({
    name: v.name,
    exec_argv: v.execArgv,
    env: v.env,
    peak_rss_mb: round(max(v.name, (o) => o.peak_rss_mb as number)),
    peak_rss_mb_per_round: runs.get(v.name)!.map((o) => o.peak_rss_mb),
    daemon_cpu_ms_per_activation: round(mean(v.name, (o) => o.daemon_cpu_ms_per_activation as number), 2),
    daemon_cpu_ms_per_round: runs.get(v.name)!.map((o) => o.daemon_cpu_ms_per_activation),
    gc_pause_ms_per_activation: round(mean(v.name, (o) => (o.gc as { pause_ms_per_activation: number }).pause_ms_per_activation), 3),
    gc_pause_ms_per_round: runs.get(v.name)!.map((o) => (o.gc as { pause_ms_per_activation: number }).pause_ms_per_activation),
    percent_of_ideal: round(mean(v.name, (o) => o.percent_of_ideal as number)),
    event_loop_lag_p99_ms: round(mean(v.name, (o) => (o.event_loop_lag_ms as { p99: number }).p99)),
    live_heap_kb_per_activation_per_round: runs.get(v.name)!.map((o) => (o.live_heap as { kb_per_activation: number | null }).kb_per_activation),
  }));
  const [base, chosen] = [summary[0]!, summary.at(-1)!];
  printSideBySide(`concurrency — ${IN_FLIGHT} in flight, model ${MODEL_MS} ms: memory settings side by side (${rounds} alternated round${rounds > 1 ? 's' : ''} each; RSS is the highest)`, summary.map((s) => s.name), [
    ['peak RSS (MB)', summary.map((s) => s.peak_rss_mb), `≤ ${RSS_TARGET_MB}`],
    ['daemon CPU ms per activation', summary.map((s) => s.daemon_cpu_ms_per_activation), '≤ +10 %'],
    ['daemon CPU ms per activation, per round', summary.map((s) => s.daemon_cpu_ms_per_round.join(' / '))],
    ['GC pauses ms per activation (main thread)', summary.map((s) => s.gc_pause_ms_per_activation)],
    ['GC pauses ms per activation, per round', summary.map((s) => s.gc_pause_ms_per_round.join(' / '))],
    ['% of ideal', summary.map((s) => s.percent_of_ideal), '≥ 95'],
    ['event-loop lag p99 (ms)', summary.map((s) => s.event_loop_lag_p99_ms), '≤ 30'],
    ['live heap per activation in flight (KB, per round)', summary.map((s) => s.live_heap_kb_per_activation_per_round.map((k) => k ?? 'n/a').join(' / '))],
  ]);
  // The top-level figures are the last variant's (what `warren start` runs with), the README table's source.
  const last = runs.get(chosen.name)!.at(-1)!;
  return {
    ...last,
    peak_rss_mb: chosen.peak_rss_mb,
    daemon_cpu_ms_per_activation: chosen.daemon_cpu_ms_per_activation,
    heap_settings: summary,
    rss_change_percent: round((100 * (chosen.peak_rss_mb - base.peak_rss_mb)) / base.peak_rss_mb),
    cpu_change_percent: round((100 * (chosen.daemon_cpu_ms_per_activation - base.daemon_cpu_ms_per_activation)) / base.daemon_cpu_ms_per_activation),
  };
}

if (import.meta.main) {
  if (process.env.BENCH_CHILD_OUT) {
    writeFileSync(process.env.BENCH_CHILD_OUT, JSON.stringify(await concurrency()));
    // Activations cut off by the stop can keep retrying against the stopped hub for a while: the figures are
    // written, so this run is over.
    process.exit(0);
  }
  else console.log(writeResults(process.env.BENCH_RESULT_NAME ?? `concurrency-${IN_FLIGHT}x${MODEL_MS / 1000}s`, await compareHeapSettings()));
}
