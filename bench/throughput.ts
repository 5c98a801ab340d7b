// Throughput: many agents, one mention each, a zero-latency model behind the real `openai` SDK over HTTP, the
// whole pipeline, alternated round by round with the minimal pipeline (bench/minimal.ts: the same hub calls,
// BullMQ job and model call by hand) so machine drift hits both alike; then, on the same Redis with the same
// worker concurrency, raw BullMQ no-op jobs. Then the same two pipelines under steady arrival: mentions posted
// while they run (16 posts at a time, each agent mentioned again once it has answered), measured once warm.
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { startDaemon } from '../daemon/daemon.ts';
import { runMinimal, startMinimal } from './minimal.ts';
import { countHubRequests, type RequestCount } from './support/hub-requests.ts';
import { printSideBySide, printTable, round, writeResults } from './support/stats.ts';
import { BENCH_ENV, benchConfig, inParallel, makeBenchAgents, mentioner, processCpuMs, registerAgents, startWorld, type World } from './support/world.ts';

const QUICK = process.env.BENCH_QUICK === '1';
const AGENTS = QUICK ? 300 : 600;
const ROUNDS = QUICK ? 1 : 3;
const WARMUP_ROUNDS = QUICK ? 1 : 2;
const CONCURRENCY = 50;
const RAW_JOBS = 20_000;
// Steady arrival: a running fleet meets its work as it comes, so each activation pays its share of the intake
// (a long-poll answered for a few agents, not one for hundreds). Measured from the WARM-th answer of each run.
const STEADY_AGENTS = 200;
const STEADY_POSTERS = 16;
const STEADY_WARM = QUICK ? 700 : 1_400;
const STEADY_MEASURED = QUICK ? 600 : 1_500;
const STEADY_ROUNDS = QUICK ? 1 : 2;
const POLL_INTERVAL_MS = 20;

export async function throughput(): Promise<Record<string, unknown>> {
  const world = await startWorld({ modelDelayMs: 0 });
  try {
    const { root, names } = makeBenchAgents(AGENTS, world.modelUrl);
    await registerAgents(world, names);
    const mention = await mentioner(world);
    const mentionAll = (): Promise<void> => inParallel(names, 16, async (n) => void (await mention(n)));

    // Untimed rounds of each first: a daemon runs for days, so what matters is its cost once the JIT has compiled
    // its code (measured: a daemon's CPU per activation falls for its first ~1,500 activations, then holds), and
    // the minimal pipeline gets the same warm-up.
    for (let w = 0; w < WARMUP_ROUNDS; w++) {
      await mentionAll();
      await warrenRound(world, root);
      await mentionAll();
      await runMinimal(world, names, CONCURRENCY);
    }

    const warren: Round[] = [];
    const minimal: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which goes first, so neither always runs on the warmer (or busier) machine.
      for (const which of r % 2 === 0 ? (['warren', 'minimal'] as const) : (['minimal', 'warren'] as const)) {
        await mentionAll();
        if (which === 'warren') warren.push(await warrenRound(world, root));
        else {
          const hubCalls = countHubRequests(world.hubUrl);
          const m = await runMinimal(world, names, CONCURRENCY);
          hubCalls.stop();
          minimal.push({ cpuMs: m.cpuMs, startCpuMs: 0, hubCpuMs: Number.NaN, seconds: m.seconds, hubCalls: hubCalls.count });
        }
      }
    }
    const perActivation = (rounds: Round[], f: (r: Round) => number): number => rounds.reduce((a, r) => a + f(r), 0) / (rounds.length * AGENTS);
    const warrenCpu = perActivation(warren, (r) => r.cpuMs);
    const minimalCpu = perActivation(minimal, (r) => r.cpuMs);
    const warrenRate = (AGENTS * warren.length) / warren.reduce((a, r) => a + r.seconds, 0);
    const minimalRate = (AGENTS * minimal.length) / minimal.reduce((a, r) => a + r.seconds, 0);

    // Raw BullMQ: the same Redis, the same concurrency, jobs that do nothing.
    const conn = new Redis(world.redis.url, { maxRetriesPerRequest: null });
    const queue = new Queue('raw', { connection: conn, prefix: 'raw-bench' });
    await queue.addBulk(Array.from({ length: RAW_JOBS }, (_, i) => ({ name: 'noop', data: { i }, opts: { removeOnComplete: true } })));
    let rawDone = 0;
    let rawFinished!: () => void;
    const rawAll = new Promise<void>((r) => (rawFinished = r));
    const rawStart = Date.now();
    const workerConn = conn.duplicate();
    const worker = new Worker(
      'raw',
      () => {
        if (++rawDone === RAW_JOBS) rawFinished();
        return Promise.resolve();
      },
      { connection: workerConn, prefix: 'raw-bench', concurrency: CONCURRENCY },
    );
    await rawAll;
    const rawRate = RAW_JOBS / ((Date.now() - rawStart) / 1000);
    await worker.close();
    await queue.close();
    workerConn.disconnect();
    conn.disconnect();

    // Steady arrival, each pipeline in turn (order flipped each round), on the first STEADY_AGENTS agents.
    const steadyNames = names.slice(0, STEADY_AGENTS);
    const steadyWarren: SteadyRound[] = [];
    const steadyMinimal: SteadyRound[] = [];
    for (let r = 0; r < STEADY_ROUNDS; r++) {
      for (const which of r % 2 === 0 ? (['warren', 'minimal'] as const) : (['minimal', 'warren'] as const)) {
        if (which === 'warren') steadyWarren.push(await steadyArrival(world, mention, steadyNames, (onAnswered) => startWarren(world, root, onAnswered)));
        else steadyMinimal.push(await steadyArrival(world, mention, steadyNames, (onAnswered) => Promise.resolve(startMinimal(world, CONCURRENCY, POLL_INTERVAL_MS, onAnswered))));
      }
    }
    const steadyPer = (rounds: SteadyRound[], f: (r: SteadyRound) => number): number => rounds.reduce((a, r) => a + f(r), 0) / (rounds.length * STEADY_MEASURED);
    const steadyWarrenCpu = steadyPer(steadyWarren, (r) => r.cpuMs);
    const steadyMinimalCpu = steadyPer(steadyMinimal, (r) => r.cpuMs);
    const steadyRate = (rounds: SteadyRound[]): number => (STEADY_MEASURED * rounds.length) / rounds.reduce((a, r) => a + r.seconds, 0);

    const figures = {
      agents: AGENTS,
      rounds: ROUNDS,
      warmup_rounds: WARMUP_ROUNDS,
      concurrency: CONCURRENCY,
      warren_activations_per_s: round(warrenRate),
      minimal_activations_per_s: round(minimalRate),
      raw_bullmq_jobs_per_s: round(rawRate),
      ratio_warren_to_raw: round(warrenRate / rawRate, 4),
      daemon_cpu_ms_per_activation: round(warrenCpu, 2),
      // Starting the daemon (reading and validating 600 definitions, connecting) is paid once per start, not per
      // activation: reported apart, per start.
      daemon_start_cpu_ms: round(warren.reduce((a, r) => a + r.startCpuMs, 0) / warren.length, 1),
      minimal_cpu_ms_per_activation: round(minimalCpu, 2),
      ratio_daemon_cpu_to_minimal: round(warrenCpu / minimalCpu, 2),
      daemon_cpu_ms_per_round: warren.map((r) => round(r.cpuMs / AGENTS, 2)),
      minimal_cpu_ms_per_round: minimal.map((r) => round(r.cpuMs / AGENTS, 2)),
      hub_cpu_ms_per_activation: round(perActivation(warren, (r) => r.hubCpuMs), 2),
      hub_calls_per_activation: round(perActivation(warren, (r) => r.hubCalls), 2),
      minimal_hub_calls_per_activation: round(perActivation(minimal, (r) => r.hubCalls), 2),
      steady: {
        agents: STEADY_AGENTS,
        posts_in_flight: STEADY_POSTERS,
        warm_after_activations: STEADY_WARM,
        measured_activations: STEADY_MEASURED,
        rounds: STEADY_ROUNDS,
        warren_activations_per_s: round(steadyRate(steadyWarren)),
        minimal_activations_per_s: round(steadyRate(steadyMinimal)),
        daemon_cpu_ms_per_activation: round(steadyWarrenCpu, 2),
        minimal_cpu_ms_per_activation: round(steadyMinimalCpu, 2),
        ratio_daemon_cpu_to_minimal: round(steadyWarrenCpu / steadyMinimalCpu, 2),
        daemon_cpu_ms_per_round: steadyWarren.map((r) => round(r.cpuMs / STEADY_MEASURED, 2)),
        minimal_cpu_ms_per_round: steadyMinimal.map((r) => round(r.cpuMs / STEADY_MEASURED, 2)),
        hub_cpu_ms_per_activation: round(steadyPer(steadyWarren, (r) => r.hubCpuMs), 2),
        hub_calls_per_activation: round(steadyPer(steadyWarren, (r) => r.hubCalls), 2),
        minimal_hub_calls_per_activation: round(steadyPer(steadyMinimal, (r) => r.hubCalls), 2),
      },
    };
    printTable(`throughput — ${AGENTS} agents × ${ROUNDS} rounds alternating with the minimal pipeline, worker concurrency ${CONCURRENCY}, zero-latency model over HTTP`, [
      ['warren activations/s', figures.warren_activations_per_s],
      ['minimal pipeline activations/s', figures.minimal_activations_per_s],
      ['raw BullMQ no-op jobs/s', figures.raw_bullmq_jobs_per_s],
      ['ratio warren / raw', figures.ratio_warren_to_raw, 'as high as the pipeline allows'],
      ['daemon CPU ms per activation', figures.daemon_cpu_ms_per_activation, '≤ 3.0'],
      ['minimal pipeline CPU ms per activation', figures.minimal_cpu_ms_per_activation],
      ['daemon CPU / minimal', figures.ratio_daemon_cpu_to_minimal, '≤ 2.0 (stretch 1.5)'],
      [`daemon start CPU ms (${AGENTS} agents, once per start)`, figures.daemon_start_cpu_ms],
      ['hub CPU ms per activation', figures.hub_cpu_ms_per_activation, '≤ 2.0'],
      ['hub calls per activation (warren / minimal)', `${figures.hub_calls_per_activation} / ${figures.minimal_hub_calls_per_activation}`, 'counted: the intake, the run, the budget'],
    ]);
    // Side by side: the batch figures above against the same figures under steady arrival.
    printSideBySide(`batch (${AGENTS} agents, all mentioned before the start) vs steady arrival (${STEADY_AGENTS} agents, ${STEADY_POSTERS} posts at a time, warm after ${STEADY_WARM}, ${STEADY_MEASURED} measured × ${STEADY_ROUNDS})`, ['batch', 'steady'], [
      ['warren activations/s', [figures.warren_activations_per_s, figures.steady.warren_activations_per_s]],
      ['minimal pipeline activations/s', [figures.minimal_activations_per_s, figures.steady.minimal_activations_per_s]],
      ['daemon CPU ms per activation', [figures.daemon_cpu_ms_per_activation, figures.steady.daemon_cpu_ms_per_activation], '≤ 3.0'],
      ['minimal pipeline CPU ms per activation', [figures.minimal_cpu_ms_per_activation, figures.steady.minimal_cpu_ms_per_activation]],
      ['daemon CPU / minimal', [figures.ratio_daemon_cpu_to_minimal, figures.steady.ratio_daemon_cpu_to_minimal], '≤ 2.0 (stretch 1.5)'],
      ['hub CPU ms per activation', [figures.hub_cpu_ms_per_activation, figures.steady.hub_cpu_ms_per_activation], '≤ 2.0'],
      ['hub calls per activation (warren / minimal)', [`${figures.hub_calls_per_activation} / ${figures.minimal_hub_calls_per_activation}`, `${figures.steady.hub_calls_per_activation} / ${figures.steady.minimal_hub_calls_per_activation}`]],
    ]);
    return figures;
  } finally {
    await world.stop();
  }
}

interface Round {
  /** From the daemon's start returning to its last answer (the minimal pipeline: all of it, its set-up included). */
  cpuMs: number;
  /** Starting the daemon: until startDaemon returns, before any activation (its scheduler's first poll comes after). */
  startCpuMs: number;
  hubCpuMs: number;
  seconds: number;
  /** Requests to the hub, counted (bench/support/hub-requests.ts): from the start to the last answer. */
  hubCalls: number;
}

/** One daemon over all agents (each has one unread mention) until every one has answered. */
async function warrenRound(world: World, root: string): Promise<Round> {
  let first = 0;
  let last = 0;
  let done = 0;
  let finished!: () => void;
  const allDone = new Promise<void>((r) => (finished = r));
  const config = benchConfig(world, root, (c) => (c.workers.concurrency = CONCURRENCY));
  const hubCpu0 = processCpuMs(world.hubProcess.pid!);
  const hubCalls = countHubRequests(world.hubUrl);
  const start0 = process.cpuUsage();
  const daemon = await startDaemon({
    config,
    logger: pino({ level: 'warn' }),
    env: BENCH_ENV(world),
    onActivationStart: () => {
      first ||= Date.now();
    },
    onOutcome: (o) => {
      if (o.outcome.kind !== 'answered') return;
      last = Date.now();
      if (++done === AGENTS) finished();
    },
  });
  const started = process.cpuUsage(start0);
  if (first) throw new Error('an activation started before startDaemon returned: the start CPU would include it');
  const cpu0 = process.cpuUsage();
  await allDone;
  const cpu = process.cpuUsage(cpu0);
  const hubCpuMs = processCpuMs(world.hubProcess.pid!) - hubCpu0;
  hubCalls.stop();
  await daemon.stop();
  return { cpuMs: (cpu.user + cpu.system) / 1000, startCpuMs: (started.user + started.system) / 1000, hubCpuMs, seconds: (last - first) / 1000, hubCalls: hubCalls.count };
}

interface SteadyRound {
  /** Of this process (the pipeline and the light mention poster, alike for both) over the measured answers. */
  cpuMs: number;
  hubCpuMs: number;
  seconds: number;
  /** Requests to the hub over the measured answers, counted (the intake's polls included). */
  hubCalls: number;
}

/** A warren daemon over the store, calling `onAnswered` for each answered activation, until stopped. */
async function startWarren(world: World, root: string, onAnswered: (agent: string) => void): Promise<{ stop(): Promise<void> }> {
  const config = benchConfig(world, root, (c) => (c.workers.concurrency = CONCURRENCY));
  const daemon = await startDaemon({
    config,
    logger: pino({ level: 'warn' }),
    env: BENCH_ENV(world),
    onOutcome: (o) => {
      if (o.outcome.kind === 'answered') onAnswered(o.agent);
    },
  });
  return {
    async stop() {
      await daemon.stop();
    },
  };
}

/**
 * Runs a pipeline while mentions arrive: `posters` loops each post a mention to an agent that has none
 * unanswered, so every agent has at most one, and an agent is mentioned again once it has answered. CPU is read
 * from the `STEADY_WARM`-th answer to the `+ STEADY_MEASURED`-th; then posting stops, every mention still out is
 * answered (so none is left for the next run) and the pipeline stops.
 */
async function steadyArrival(
  world: World,
  mention: (agent: string) => Promise<unknown>,
  agents: readonly string[],
  start: (onAnswered: (agent: string) => void) => Promise<{ stop(): Promise<void> }>,
): Promise<SteadyRound> {
  const idle = [...agents];
  let signal = Promise.withResolvers<void>();
  const wake = (): void => {
    signal.resolve();
    signal = Promise.withResolvers<void>();
  };
  const measured = Promise.withResolvers<SteadyRound>();
  const drained = Promise.withResolvers<void>();
  let posting = true;
  let answered = 0;
  let cpu0 = process.cpuUsage();
  let hub0 = 0;
  let t0 = 0;
  let hubCalls: RequestCount | undefined;
  const onAnswered = (agent: string): void => {
    idle.push(agent);
    wake();
    answered++;
    if (answered === STEADY_WARM) {
      [cpu0, hub0, t0, hubCalls] = [process.cpuUsage(), processCpuMs(world.hubProcess.pid!), Date.now(), countHubRequests(world.hubUrl)];
    } else if (answered === STEADY_WARM + STEADY_MEASURED) {
      const cpu = process.cpuUsage(cpu0);
      hubCalls?.stop();
      posting = false;
      wake();
      measured.resolve({ cpuMs: (cpu.user + cpu.system) / 1000, hubCpuMs: processCpuMs(world.hubProcess.pid!) - hub0, seconds: (Date.now() - t0) / 1000, hubCalls: hubCalls?.count ?? Number.NaN });
    }
    if (!posting && idle.length === agents.length) drained.resolve();
  };
  const pipeline = await start(onAnswered);
  const poster = async (): Promise<void> => {
    while (posting) {
      const agent = idle.shift();
      if (agent === undefined) {
        await signal.promise;
        continue;
      }
      await mention(agent);
    }
  };
  try {
    const posters = Promise.all(Array.from({ length: STEADY_POSTERS }, poster));
    posters.catch((err: unknown) => measured.reject(err));
    const result = await measured.promise;
    await posters;
    if (idle.length < agents.length) await drained.promise;
    return result;
  } finally {
    await pipeline.stop();
  }
}

if (import.meta.main) console.log(writeResults('throughput', await throughput()));
