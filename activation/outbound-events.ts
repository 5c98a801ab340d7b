// Outbound events: what happened to an agent (an activation finished or failed, an approval is asked for, the agent
// is held back by failures), POSTed as signed JSON to the URLs the fleet and the agent configure. Each event has an
// id derived from what it reports (`activation.finished:<activation id>`), so a receiver deduplicates; each
// (event, URL) is one job of a BullMQ queue of its own, retried with exponential backoff, at least once, and never
// on an activation's path: publishing only adds a job. A job out of attempts stays in the queue's failed set, the
// dead letters (`deadLetters()`), and is logged.
import { createHash } from 'node:crypto';
import { Queue, Worker, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { z } from 'zod';
import { SIGNATURE_HEADER, signBody } from '../policy/hub-signature.ts';
import type { RedisClient } from '../redis/scripts.ts';
import { describeSecretRef, readSecretRef, type SecretRef } from '../services/secret-ref.ts';

export const EVENTS_QUEUE = 'events';
export const EVENT_TYPES = ['activation.finished', 'activation.failed', 'approval.requested', 'agent.paused'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** The JSON body a receiver gets. */
export interface WarrenEvent {
  /** `<type>:<identity of what it reports>`: the same for every delivery of the event. */
  id: string;
  type: EventType;
  agent: string;
  /** ISO time the event happened. */
  at: string;
  data: Record<string, unknown>;
}

/** An event no receiver took within its attempts (`warren events dead-letters`). */
export interface DeadLetter {
  eventId: string;
  type: EventType;
  agent: string;
  url: string;
  attempts: number;
  /** The last attempt's failure: the receiver's status, a timeout, a secret that is not set. */
  reason: string;
  /** Epoch ms of the last attempt. */
  failedAt: number | undefined;
}

/** Where events go: a URL and the secret that signs them. `scope` is `fleet` or the agent whose definition names it. */
export interface EventTarget {
  url: string;
  secret: SecretRef;
}

const EventJobSchema = z.strictObject({ body: z.string(), url: z.url(), eventId: z.string(), type: z.enum(EVENT_TYPES), agent: z.string(), fleet: z.boolean() });
type EventJob = z.infer<typeof EventJobSchema>;

export interface OutboundEventsOptions {
  /** The producer connection (adds, dead letters). */
  connection: RedisClient;
  /** A connection of its own for the worker's blocking reads; undefined: this daemon sends none. */
  workerConnection?: RedisClient;
  prefix: string;
  /** The fleet's targets and the agent's own (its definition's `events:`). */
  fleetTargets(): EventTarget[];
  agentTargets(agent: string): EventTarget[];
  secrets: { get(name: string): string | undefined };
  /** Teaches the redactor a secret read from a file. */
  learnSecret(value: string): void;
  attempts: number;
  retryBaseMs: number;
  logger: Logger;
  /** Per POST; a receiver slower than this counts as a failure (retried). */
  timeoutMs?: number;
}

export class OutboundEvents {
  readonly #opts: OutboundEventsOptions;
  readonly #queue: Queue<EventJob>;
  readonly #worker: Worker<EventJob> | undefined;

  constructor(opts: OutboundEventsOptions) {
    this.#opts = opts;
    this.#queue = new Queue<EventJob>(EVENTS_QUEUE, { connection: opts.connection, prefix: opts.prefix });
    this.#queue.on('error', (err) => opts.logger.error({ err }, 'outbound events queue error'));
    if (opts.workerConnection) {
      this.#worker = new Worker<EventJob>(EVENTS_QUEUE, (job) => this.#send(job), { connection: opts.workerConnection, prefix: opts.prefix, concurrency: 4, autorun: true });
      this.#worker.on('error', (err) => opts.logger.error({ err }, 'outbound events worker error'));
      this.#worker.on('failed', (job, err) => {
        if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
        opts.logger.error({ event: job.data.eventId, url: job.data.url, attempts: job.attemptsMade, err: err.message }, 'outbound event given up: kept as a dead letter');
      });
    }
  }

  /**
   * Queues `type` about `agent` for every configured URL; `identity` names what it reports (an activation id, an
   * approval id), so publishing the same thing twice sends it once. Never throws: a failure to queue is logged.
   */
  async publish(input: { type: EventType; agent: string; identity: string; data: Record<string, unknown>; at?: Date }): Promise<void> {
    const targets = [...this.#opts.fleetTargets().map((t) => ({ t, fleet: true })), ...this.#opts.agentTargets(input.agent).map((t) => ({ t, fleet: false }))];
    if (targets.length === 0) return;
    const event: WarrenEvent = { id: `${input.type}:${input.identity}`, type: input.type, agent: input.agent, at: (input.at ?? new Date()).toISOString(), data: input.data };
    const body = JSON.stringify(event);
    try {
      await Promise.all(
        targets.map(({ t, fleet }) =>
          this.#queue.add(event.type, { body, url: t.url, eventId: event.id, type: event.type, agent: event.agent, fleet }, {
            // BullMQ ids take no ':'; one job per (event, URL), so a second publish of the event adds nothing.
            jobId: createHash('sha256').update(`${event.id}\n${t.url}`).digest('hex'),
            attempts: this.#opts.attempts,
            backoff: { type: 'exponential', delay: this.#opts.retryBaseMs },
            removeOnComplete: { count: 1_000 },
            removeOnFail: { count: 10_000 },
          }),
        ),
      );
    } catch (err) {
      this.#opts.logger.error({ err, event: event.id }, 'could not queue an outbound event');
    }
  }

  /** Events out of attempts, newest first: what no receiver took. */
  async deadLetters(limit = 100): Promise<DeadLetter[]> {
    return (await this.#deadJobs(limit)).map((j) => ({ eventId: j.data.eventId, type: j.data.type, agent: j.data.agent, url: j.data.url, attempts: j.attemptsMade, reason: j.failedReason, failedAt: j.finishedOn }));
  }

  /**
   * Sends dead letters again, with their attempts anew (`warren events retry`): all of them, or those of one event id.
   * The body and id are the ones first queued, so a receiver that took one meanwhile deduplicates it. Returns how many.
   */
  async retryDeadLetters(eventId?: string): Promise<number> {
    const jobs = (await this.#deadJobs(10_000)).filter((j) => eventId === undefined || j.data.eventId === eventId);
    for (const j of jobs) await j.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    return jobs.length;
  }

  async #deadJobs(limit: number): Promise<Array<Job<EventJob>>> {
    const jobs = await this.#queue.getFailed(0, limit - 1);
    return jobs.filter((j) => j.attemptsMade >= (j.opts.attempts ?? 1));
  }

  async #send(job: Job<EventJob>): Promise<void> {
    const data = EventJobSchema.parse(job.data);
    // The secret is looked up at each attempt (it is never in Redis): the target as configured now.
    const targets = data.fleet ? this.#opts.fleetTargets() : this.#opts.agentTargets(data.agent);
    const target = targets.find((t) => t.url === data.url);
    if (!target) throw new Error(`${data.url} is no longer configured for ${data.fleet ? 'the fleet' : `agent ${data.agent}`}'s events`);
    const secret = readSecretRef(target.secret, this.#opts.secrets);
    if (secret === undefined) throw new Error(`the events secret is not set: ${describeSecretRef(target.secret)}`);
    this.#opts.learnSecret(secret);
    const res = await fetch(data.url, {
      method: 'POST',
      body: data.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(this.#opts.timeoutMs ?? 10_000),
      headers: { 'content-type': 'application/json', 'user-agent': 'warren-events', 'x-warren-event': data.type, 'x-warren-event-id': data.eventId, [SIGNATURE_HEADER]: signBody(secret, data.body) },
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`${data.url} answered ${res.status}`);
  }

  async close(): Promise<void> {
    await this.#worker?.close();
    await this.#queue.close();
  }
}
