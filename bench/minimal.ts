// The physical-limit anchor: a hand-written pipeline with no framework that does per activation what warren
// does — one BullMQ job, the same five hub calls with the same payloads (inbox with its budget, thread, reply that
// marks its notification read, then consumption and activated together) and one chat-completion call to the
// model — by the plainest fast means: undici Pools, one ioredis connection pair, JSON by hand. No validation, no
// logging, no retries, no records. What warren costs beyond this is what its framework costs.
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
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

/** Activates each of `agents` once (each must have one unread mention), `concurrency` at a time. */
export async function runMinimal(world: World, agents: readonly string[], concurrency: number): Promise<MinimalRun> {
  const cpu0 = process.cpuUsage();
  const start = Date.now();
  const hub = new Pool(world.hubUrl, { connections: 64 });
  const model = new Pool(new URL(world.modelUrl).origin, { connections: 64 });
  const modelPath = `${new URL(world.modelUrl).pathname.replace(/\/+$/, '')}/chat/completions`;
  const auth = `Bearer ${world.adminKey}`;
  const call = async (method: 'GET' | 'POST', path: string, body?: unknown, key?: string): Promise<unknown> => {
    const headers: Record<string, string> = { authorization: auth, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (key) headers['idempotency-key'] = key;
    const res = await hub.request({ method, path: `/api/v1${path}`, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };

  const prefix = `minimal-${randomUUID().slice(0, 6)}`;
  const conn = new Redis(world.redis.url, { maxRetriesPerRequest: null });
  const workerConn = conn.duplicate();
  const queue = new Queue('activations', { connection: conn, prefix });
  let done = 0;
  let finished!: () => void;
  let failed!: (err: unknown) => void;
  const all = new Promise<void>((res, rej) => ((finished = res), (failed = rej)));
  const worker = new Worker(
    'activations',
    async (job) => {
      const agent = (job.data as { agent: string }).agent;
      const a = encodeURIComponent(agent);
      const activationId = randomUUID();
      const inbox = (await call('GET', `/notifications?agent_id=${a}&unread=true&limit=50&include_budget=true`)) as { notifications: Notification[] };
      const n = inbox.notifications[0];
      if (!n?.post_id) throw new Error(`${agent}: no mention in the inbox: ${JSON.stringify(inbox).slice(0, 300)}`);
      const thread = (await call('GET', `/posts/${encodeURIComponent(n.post_id)}?include_comments=true`)) as { post?: { content?: string }; content?: string };
      const content = thread.post?.content ?? thread.content ?? '';
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
      if (++done === agents.length) finished();
    },
    { connection: workerConn, prefix, concurrency },
  );
  worker.on('failed', (_job, err) => failed(err));
  await queue.addBulk(agents.map((agent) => ({ name: 'notification', data: { agent, trigger: 'notification', enqueuedAt: Date.now() }, opts: { deduplication: { id: agent }, priority: 1, attempts: 3, removeOnComplete: { count: 1_000 }, removeOnFail: { count: 1_000 } } })));
  try {
    await all;
  } finally {
    await worker.close();
    await queue.close();
    workerConn.disconnect();
    conn.disconnect();
    await Promise.all([hub.close(), model.close()]);
  }
  const cpu = process.cpuUsage(cpu0);
  return { activations: agents.length, cpuMs: (cpu.user + cpu.system) / 1000, seconds: (Date.now() - start) / 1000 };
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
    const run = await runMinimal(world, names, CONCURRENCY);
    const figures = {
      agents: AGENTS,
      concurrency: CONCURRENCY,
      activations_per_s: round(AGENTS / run.seconds),
      cpu_ms_per_activation: round(run.cpuMs / AGENTS, 2),
      hub_calls_per_activation: 5,
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
