// Throughput: many agents, one mention each, a zero-latency model behind the real `openai` SDK over HTTP, the
// whole pipeline; then, on the same Redis with the same worker concurrency, raw BullMQ no-op jobs. The ratio is
// what warren's pipeline costs compared with the queue alone.
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { startDaemon } from '../daemon/daemon.ts';
import { printTable, round, writeResults } from './support/stats.ts';
import { BENCH_ENV, benchConfig, inParallel, makeBenchAgents, mentioner, processCpuMs, registerAgents, startWorld } from './support/world.ts';

const AGENTS = 1_000;
const CONCURRENCY = 50;
const RAW_JOBS = 20_000;

export async function throughput(): Promise<Record<string, unknown>> {
  const world = await startWorld({ modelDelayMs: 0 });
  try {
    const { root, names } = makeBenchAgents(AGENTS, world.modelUrl);
    await registerAgents(world, names);
    const mention = await mentioner(world);
    await inParallel(names, 16, async (n) => void (await mention(n)));

    let first = 0;
    let last = 0;
    let done = 0;
    let finished!: () => void;
    const allDone = new Promise<void>((r) => (finished = r));
    const config = benchConfig(world, root, (c) => (c.workers.concurrency = CONCURRENCY));
    const hubCpu0 = processCpuMs(world.hubProcess.pid!);
    const cpu0 = process.cpuUsage();
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
    await allDone;
    const cpu = process.cpuUsage(cpu0);
    const hubCpuMs = processCpuMs(world.hubProcess.pid!) - hubCpu0;
    await daemon.stop();
    const seconds = (last - first) / 1000;
    const warrenRate = AGENTS / seconds;

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

    const figures = {
      agents: AGENTS,
      concurrency: CONCURRENCY,
      warren_activations_per_s: round(warrenRate),
      raw_bullmq_jobs_per_s: round(rawRate),
      ratio_warren_to_raw: round(warrenRate / rawRate, 4),
      daemon_cpu_ms_per_activation: round((cpu.user + cpu.system) / 1000 / AGENTS, 2),
      hub_cpu_ms_per_activation: round(hubCpuMs / AGENTS, 2),
      hub_calls_per_activation: 7,
    };
    printTable(`throughput — ${AGENTS} agents, one mention each, worker concurrency ${CONCURRENCY}, zero-latency model over HTTP`, [
      ['warren activations/s', figures.warren_activations_per_s],
      ['raw BullMQ no-op jobs/s', figures.raw_bullmq_jobs_per_s],
      ['ratio warren / raw', figures.ratio_warren_to_raw, 'as high as the pipeline allows'],
      ['daemon CPU ms per activation', figures.daemon_cpu_ms_per_activation],
      ['hub CPU ms per activation', figures.hub_cpu_ms_per_activation],
    ]);
    return figures;
  } finally {
    await world.stop();
  }
}

if (import.meta.main) console.log(writeResults('throughput', await throughput()));
