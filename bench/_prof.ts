import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { pino } from 'pino';
import { startDaemon } from '../daemon/daemon.ts';
import { runMinimal } from './minimal.ts';
import { BENCH_ENV, benchConfig, inParallel, makeBenchAgents, mentioner, registerAgents, startWorld } from './support/world.ts';

const AGENTS = 600;
const world = await startWorld({ modelDelayMs: 0 });
const { root, names } = makeBenchAgents(AGENTS, world.modelUrl);
await registerAgents(world, names);
const mention = await mentioner(world);
const mentionAll = (): Promise<void> => inParallel(names, 16, async (n) => void (await mention(n)));
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.setSamplingInterval', { interval: 200 });

async function warrenRound(profile: string | null): Promise<number> {
  let done = 0;
  const all = Promise.withResolvers<void>();
  const config = benchConfig(world, root, (c) => { c.workers.concurrency = 50; if (process.env.POLL) c.scheduler.poll_interval = Number(process.env.POLL); });
  const daemon = await startDaemon({ config, logger: pino({ level: process.env.LVL ?? 'warn' }, pino.destination('/tmp/prof/daemon.log')), env: BENCH_ENV(world), onOutcome: (o) => { if (o.outcome.kind === 'answered' && ++done === AGENTS) all.resolve(); } });
  if (profile) await session.post('Profiler.start');
  const c0 = process.cpuUsage();
  await all.promise;
  const c = process.cpuUsage(c0);
  if (profile) { const { profile: p } = await session.post('Profiler.stop'); writeFileSync(profile, JSON.stringify(p)); }
  await daemon.stop();
  return (c.user + c.system) / 1000 / AGENTS;
}
const rounds = Number(process.env.ROUNDS ?? 4);
for (let i = 0; i < rounds; i++) {
  await mentionAll();
  const w = await warrenRound(i === rounds - 1 ? '/tmp/prof/warren.cpuprofile' : null);
  await mentionAll();
  if (i === rounds - 1) await session.post('Profiler.start');
  const m = await runMinimal(world, names, 50);
  if (i === rounds - 1) { const { profile: p } = await session.post('Profiler.stop'); writeFileSync('/tmp/prof/minimal.cpuprofile', JSON.stringify(p)); }
  console.log(`round ${i}: warren ${w.toFixed(2)} ms/act, minimal ${(m.cpuMs / AGENTS).toFixed(2)} ms/act`);
}
await world.stop();
process.exit(0);
