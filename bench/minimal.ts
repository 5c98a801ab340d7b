// The physical-limit anchor: a hand-written pipeline with no framework that does per activation what warren
// does — one BullMQ job, the same five hub calls with the same payloads (inbox with its budget, thread, reply that
// marks its notification read, then consumption and activated together) and one chat-completion call to the
// model — by the plainest fast means: undici Pools, one ioredis connection pair, JSON by hand. No validation, no
// logging, no retries, no records. What warren costs beyond this is what its framework costs.
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { countHubRequests } from './support/hub-requests.ts';
import { printTable, round, writeResults } from './support/stats.ts';
import { inParallel, makeBenchAgents, mentioner, registerAgents, startWorld, type World } from './support/world.ts';

export interface MinimalRun {
  activations: number;
  cpuMs: number;
  seconds: number;
}

interface Notification {
  id: string;
  post_id?: string | null;
  comment_id?: string | null;
}

/** The pipeline's parts: its HTTP pools, its queue and worker, and what one job does. */
interface MinimalPipeline {
  queue: Queue;
  /** Enqueues one activation of each agent (a queued or running one absorbs the repeat, as warren's does). */
  enqueue(agents: readonly string[]): Promise<void>;
  /** Hub GET on the pipeline's pool (the steady intake's long-poll uses it too). */
  get(path: string, signal?: AbortSignal): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Builds the pipeline; `onDone(agent, answered)` runs after each job: `answered` false when the inbox held no
 * mention (under steady arrival an intake can list an agent whose mention its last job just answered).
 */
function minimalPipeline(world: World, concurrency: number, onDone: (agent: string, answered: boolean, modelMs: number) => void, onFailed: (err: unknown) => void): MinimalPipeline {
  const hub = new Pool(world.hubUrl, { connections: 64 });
  const model = new Pool(new URL(world.modelUrl).origin, { connections: 64 });
  const modelPath = `${new URL(world.modelUrl).pathname.replace(/\/+$/, '')}/chat/completions`;
  const auth = `Bearer ${world.adminKey}`;
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown, key?: string, signal?: AbortSignal): Promise<unknown> => {
    const headers: Record<string, string> = { authorization: auth, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (key) headers['idempotency-key'] = key;
    const res = await hub.request({ method, path: `/api/v1${path}`, headers, body: body === undefined ? undefined : JSON.stringify(body), signal, headersTimeout: 60_000, bodyTimeout: 60_000 });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };

  const prefix = `minimal-${randomUUID().slice(0, 6)}`;
  const conn = new Redis(world.redis.url, { maxRetriesPerRequest: null });
  const workerConn = conn.duplicate();
  const queue = new Queue('activations', { connection: conn, prefix });
  const activate = async (job: Job): Promise<void> => {
    const agent = (job.data as { agent: string }).agent;
    const a = encodeURIComponent(agent);
    const activationId = randomUUID();
    const inbox = (await call('GET', `/notifications?agent_id=${a}&unread=true&limit=50&include_budget=true`)) as { notifications: Notification[] };
    const n = inbox.notifications[0];
    if (!n?.post_id) return onDone(agent, false, 0);
    const thread = (await call('GET', `/posts/${encodeURIComponent(n.post_id)}?include_comments=true`)) as { post?: { content?: string }; content?: string };
    const content = thread.post?.content ?? thread.content ?? '';
    const modelAt = performance.now();
    const res = await model.request({
      method: 'POST',
      path: modelPath,
      headers: { authorization: 'Bearer sk-bench-not-a-secret', 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'fake-gpt',
        messages: [
          { role: 'system', content: `You are ${agent}, a benchmark agent. Answer briefly.` },
          { role: 'user', content: `You were mentioned in a thread.\n\n${content}` },
        ],
      }),
    });
    const answer = (await res.body.json()) as { choices: Array<{ message: { content: string } }>; usage: { prompt_tokens: number; completion_tokens: number } };
    const modelMs = performance.now() - modelAt;
    await call('POST', `/posts/${encodeURIComponent(n.post_id)}/comments?mark_read=${encodeURIComponent(n.id)}`, { agent_id: agent, content: answer.choices[0]!.message.content, parent_id: n.comment_id ?? undefined }, `notification:${n.id}:reply`);
    await Promise.all([
      call(
        'POST',
        '/system/consumption',
        { agent_id: agent, tokens_input: answer.usage.prompt_tokens, tokens_output: answer.usage.completion_tokens, cost_usd: 0, tool_type: 'llm', duration_seconds: 0, activation_id: activationId, task_type: 'notification' },
        `${activationId}:consumption`,
      ),
      call('POST', `/agents/${a}/activated`, undefined, `${activationId}:activated`),
    ]);
    onDone(agent, true, modelMs);
  };
  const worker = new Worker('activations', activate, { connection: workerConn, prefix, concurrency });
  worker.on('failed', (_job, err) => onFailed(err));
  return {
    queue,
    async enqueue(agents) {
      await queue.addBulk(agents.map((agent) => ({ name: 'notification', data: { agent, trigger: 'notification', enqueuedAt: Date.now() }, opts: { deduplication: { id: agent }, priority: 1, attempts: 3, removeOnComplete: { count: 1_000 }, removeOnFail: { count: 1_000 } } })));
    },
    get: (path, signal) => call('GET', path, undefined, undefined, signal),
    async close() {
      await worker.close();
      await queue.close();
      workerConn.disconnect();
      conn.disconnect();
      await Promise.all([hub.close(), model.close()]);
    },
  };
}

/** Activates each of `agents` once (each must have one unread mention), `concurrency` at a time. */
export async function runMinimal(world: World, agents: readonly string[], concurrency: number): Promise<MinimalRun> {
  const cpu0 = process.cpuUsage();
  const start = Date.now();
  let done = 0;
  let finished!: () => void;
  let failed!: (err: unknown) => void;
  const all = new Promise<void>((res, rej) => ((finished = res), (failed = rej)));
  const pipeline = minimalPipeline(
    world,
    concurrency,
    (agent, answered) => {
      if (!answered) return failed(new Error(`${agent}: no mention in the inbox`));
      if (++done === agents.length) finished();
    },
    (err) => failed(err),
  );
  await pipeline.enqueue(agents);
  try {
    await all;
  } finally {
    await pipeline.close();
  }
  const cpu = process.cpuUsage(cpu0);
  return { activations: agents.length, cpuMs: (cpu.user + cpu.system) / 1000, seconds: (Date.now() - start) / 1000 };
}

/**
 * The minimal pipeline running while mentions arrive: its intake is what warren's scheduler does — the hub's
 * long-poll of agents with unread notifications, one job per listed agent (deduplicated per agent while one is
 * queued or running), paced at `pollIntervalMs` after a poll that found work. Runs until `stop`.
 */
export function startMinimal(world: World, concurrency: number, pollIntervalMs: number, onAnswered: (agent: string, modelMs: number) => void): { stop(): Promise<void> } {
  let failure: Error | undefined;
  const pipeline = minimalPipeline(
    world,
    concurrency,
    (agent, answered, modelMs) => {
      if (answered) onAnswered(agent, modelMs);
    },
    (err) => (failure ??= err instanceof Error ? err : new Error(String(err))),
  );
  const abort = new AbortController();
  const intake = (async () => {
    while (!abort.signal.aborted) {
      if (failure) throw failure;
      const body = (await pipeline.get('/notifications/poll?timeout=30&batch_size=1000', abort.signal).catch((err: unknown) => {
        if (abort.signal.aborted) return { agents: [] };
        throw err;
      })) as { agents: Array<{ name: string }> };
      if (body.agents.length === 0) continue;
      await pipeline.enqueue(body.agents.map((a) => a.name));
      await new Promise((r) => setTimeout(r, pollIntervalMs));
    }
  })();
  return {
    async stop() {
      abort.abort();
      await intake;
      await pipeline.close();
    },
  };
}

const AGENTS = 1_000;
const CONCURRENCY = 50;

export async function minimal(): Promise<Record<string, unknown>> {
  const world = await startWorld({ modelDelayMs: 0 });
  try {
    const { names } = makeBenchAgents(AGENTS, world.modelUrl);
    await registerAgents(world, names);
    const mention = await mentioner(world);
    await inParallel(names, 16, async (n) => void (await mention(n)));
    const hubCalls = countHubRequests(world.hubUrl);
    const run = await runMinimal(world, names, CONCURRENCY);
    hubCalls.stop();
    const figures = {
      agents: AGENTS,
      concurrency: CONCURRENCY,
      activations_per_s: round(AGENTS / run.seconds),
      cpu_ms_per_activation: round(run.cpuMs / AGENTS, 2),
      hub_calls_per_activation: round(hubCalls.count / AGENTS, 2),
    };
    printTable(`minimal pipeline — ${AGENTS} agents, one mention each, concurrency ${CONCURRENCY}`, [
      ['activations/s', figures.activations_per_s],
      ['CPU ms per activation', figures.cpu_ms_per_activation],
    ]);
    return figures;
  } finally {
    await world.stop();
  }
}

if (import.meta.main) console.log(writeResults('minimal', await minimal()));
