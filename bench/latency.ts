// Latency: mentions at a steady rate well below capacity; how long from a mention to its activation starting
// and to the reply being on the hub, and where the time goes. Then the same mentions at the same rate through the
// minimal pipeline (bench/minimal.ts: the same hops by hand), whose overhead is this machine's floor for them.
import { pino } from 'pino';
import type { ActivationOutcome } from '../activation/activation.ts';
import { startDaemon } from '../daemon/daemon.ts';
import type { ActivationStart } from '../activation/worker.ts';
import { printTable, round, summarize, writeResults, type Summary } from './support/stats.ts';
import { startMinimal } from './minimal.ts';
import { BENCH_ENV, benchConfig, makeBenchAgents, mentioner, registerAgents, startWorld, type World } from './support/world.ts';

const AGENTS = 200;
const RATE_PER_S = 20;
const DURATION_S = 15;

interface Sample {
  agent: string;
  postId: string;
  sentAt: number;
  start?: ActivationStart;
  outcome?: ActivationOutcome;
  replyAt?: number;
}

export async function latency(): Promise<Record<string, unknown>> {
  const world = await startWorld({ modelDelayMs: 0 });
  try {
    const { root, names } = makeBenchAgents(AGENTS, world.modelUrl);
    await registerAgents(world, names);
    const mention = await mentioner(world);
    // Each agent is mentioned once every AGENTS/RATE seconds (10 s): one mention per activation.
    const total = RATE_PER_S * DURATION_S;
    const pending = new Map<string, Sample>();
    const samples: Sample[] = [];
    const config = benchConfig(world, root);
    const daemon = await startDaemon({
      config,
      logger: pino({ level: 'warn' }),
      env: BENCH_ENV(world),
      onActivationStart: (s) => {
        const sample = pending.get(s.agent);
        if (sample && !sample.start) sample.start = s;
      },
      onOutcome: (o) => {
        const sample = pending.get(o.agent);
        if (sample && o.handled.length) {
          sample.outcome = o;
          pending.delete(o.agent);
        }
      },
    });
    await new Promise((r) => setTimeout(r, 500)); // intake settles on its long-poll
    await mentionAtRate(names, mention, pending, samples);
    const deadline = Date.now() + 30_000;
    while (samples.some((s) => !s.outcome) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await daemon.stop();
    await readReplyTimes(world, samples);
    const ok = samples.filter((s): s is Required<Sample> => Boolean(s.start && s.outcome && s.replyAt));
    const t = (f: (s: Required<Sample>) => number): Summary => summarize(ok.map(f));
    const phase = (name: keyof ActivationOutcome['timings']) => t((s) => s.outcome.timings[name] ?? 0);
    const toStart = t((s) => s.start.startedAt - s.sentAt);
    const toReply = t((s) => s.replyAt - s.sentAt);
    const model = phase('executor');
    const overhead = t((s) => s.replyAt - s.sentAt - (s.outcome.timings.executor ?? 0));
    const breakdown = {
      intake: t((s) => s.start.enqueuedAt - s.sentAt),
      queue_wait: t((s) => s.start.startedAt - s.start.enqueuedAt),
      budget_check: phase('budget'),
      inbox: phase('inbox'),
      thread: phase('thread'),
      context: phase('context'),
      model_call: model,
      post_reply: phase('post'),
    };
    const floor = await minimalOverhead(world, names, mention);
    const r = (x: Summary) => ({ p50: round(x.p50), p95: round(x.p95), p99: round(x.p99) });
    const figures = {
      mentions: total,
      answered: ok.length,
      rate_per_s: RATE_PER_S,
      mention_to_start_ms: r(toStart),
      mention_to_reply_ms: r(toReply),
      overhead_ms: r(overhead),
      minimal: { answered: floor.answered, mention_to_reply_ms: r(floor.toReply), overhead_ms: r(floor.overhead) },
      breakdown_ms: Object.fromEntries(Object.entries(breakdown).map(([k, v]) => [k, r(v)])),
    };
    const fmt = (x: Summary) => `${round(x.p50)} / ${round(x.p95)} / ${round(x.p99)}`;
    printTable(`latency — ${total} mentions at ${RATE_PER_S}/s over ${AGENTS} agents, zero-latency model over HTTP (ms, p50 / p95 / p99)`, [
      ['answered', `${ok.length} of ${total}`],
      ['mention → activation start', fmt(toStart), 'p99 ≤ 50'],
      ['mention → reply posted', fmt(toReply)],
      ['overhead (end to end − model call)', fmt(overhead), 'p50 ≤ 4'],
      [`minimal pipeline, same mentions (${floor.answered} answered): mention → reply`, fmt(floor.toReply)],
      ['minimal pipeline: overhead (end to end − model call)', fmt(floor.overhead), 'the floor of these hops here'],
      ...Object.entries(breakdown).map(([k, v]) => [`  ${k.replace('_', ' ')}`, fmt(v)] as const),
    ]);
    return figures;
  } finally {
    await world.stop();
  }
}

/** Mentions the agents in turn at RATE_PER_S for DURATION_S, each send recorded as a sample pending its answer. */
async function mentionAtRate<S extends { agent: string; postId: string; sentAt: number }>(names: readonly string[], mention: (agent: string) => Promise<{ postId: string; sentAt: number }>, pending: Map<string, S>, samples: S[], make: (agent: string) => S = (agent) => ({ agent, postId: '', sentAt: Date.now() }) as S): Promise<void> {
  const total = RATE_PER_S * DURATION_S;
  const t0 = Date.now();
  for (let i = 0; i < total; i++) {
    const wait = t0 + (i * 1000) / RATE_PER_S - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const agent = names[i % AGENTS]!;
    const sample = make(agent);
    pending.set(agent, sample);
    samples.push(sample);
    const posted = await mention(agent);
    sample.postId = posted.postId;
    sample.sentAt = posted.sentAt;
  }
}

/** When each reply landed, by the hub's clock (same machine). */
async function readReplyTimes(world: World, samples: Array<{ agent: string; postId: string; replyAt?: number }>): Promise<void> {
  for (const s of samples) {
    const r = await fetch(`${world.hubUrl}/api/v1/posts/${s.postId}?include_comments=true`, { headers: { authorization: `Bearer ${world.adminKey}` } });
    const post = (await r.json()) as { comments?: Array<{ created_at: string; author: { name: string } }> };
    const reply = post.comments?.find((c) => c.author.name === s.agent);
    if (reply) s.replyAt = Date.parse(reply.created_at);
  }
}

interface MinimalSample {
  agent: string;
  postId: string;
  sentAt: number;
  modelMs?: number;
  replyAt?: number;
}

/** The same schedule through the minimal pipeline (its steady intake, the scheduler's poll interval, concurrency 50). */
async function minimalOverhead(world: World, names: readonly string[], mention: (agent: string) => Promise<{ postId: string; sentAt: number }>): Promise<{ answered: number; toReply: Summary; overhead: Summary }> {
  const pending = new Map<string, MinimalSample>();
  const samples: MinimalSample[] = [];
  const pipeline = startMinimal(world, 50, 20, (agent, modelMs) => {
    const sample = pending.get(agent);
    if (!sample) return;
    sample.modelMs = modelMs;
    pending.delete(agent);
  });
  try {
    await new Promise((r) => setTimeout(r, 500));
    await mentionAtRate(names, mention, pending, samples);
    const deadline = Date.now() + 30_000;
    while (samples.some((s) => s.modelMs === undefined) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  } finally {
    await pipeline.stop();
  }
  await readReplyTimes(world, samples);
  const ok = samples.filter((s): s is Required<MinimalSample> => s.modelMs !== undefined && s.replyAt !== undefined);
  return { answered: ok.length, toReply: summarize(ok.map((s) => s.replyAt - s.sentAt)), overhead: summarize(ok.map((s) => s.replyAt - s.sentAt - s.modelMs)) };
}

if (import.meta.main) console.log(writeResults('latency', await latency()));
