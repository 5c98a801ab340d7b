// Remembers an answer between "the model produced it" and "the hub has it and the notification is read".
// A retried or recovered activation then posts the same text under the same Idempotency-Key, so the hub
// replays its first answer instead of refusing a changed body, and no model call is paid twice.
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisClient } from '../redis/scripts.ts';

/** How long a kept answer stays (the hub keeps an idempotent reply as long). */
export const REPLY_OUTBOX_TTL_SECONDS = 24 * 3600;

export interface ReplyOutbox {
  get(agent: string, notificationId: string): Promise<string | undefined>;
  put(agent: string, notificationId: string, text: string): Promise<void>;
  clear(agent: string, notificationId: string): Promise<void>;
  /**
   * The Redis key an answer is kept under (in the agent's shard), so a phase script of the activation reads, keeps
   * or drops it in the command it sends anyway (the inbox claim's, the write reservation's). Absent: not in Redis.
   */
  keyOf?(agent: string, notificationId: string): string;
}

export class RedisReplyOutbox implements ReplyOutbox {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;

  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
  }

  keyOf(agent: string, notificationId: string): string {
    return this.#layout.of(agent).outbox(agent, notificationId);
  }

  async get(agent: string, notificationId: string): Promise<string | undefined> {
    return (await this.#redis.get(this.keyOf(agent, notificationId))) ?? undefined;
  }

  async put(agent: string, notificationId: string, text: string): Promise<void> {
    await this.#redis.set(this.keyOf(agent, notificationId), text, 'EX', REPLY_OUTBOX_TTL_SECONDS);
  }

  async clear(agent: string, notificationId: string): Promise<void> {
    await this.#redis.del(this.keyOf(agent, notificationId));
  }
}

/** The same contract in memory: tests of the pipeline without Redis, and `warren run`. */
export class MemoryReplyOutbox implements ReplyOutbox {
  readonly #texts = new Map<string, string>();

  get(agent: string, notificationId: string): Promise<string | undefined> {
    return Promise.resolve(this.#texts.get(`${agent}\u0000${notificationId}`));
  }

  put(agent: string, notificationId: string, text: string): Promise<void> {
    this.#texts.set(`${agent}\u0000${notificationId}`, text);
    return Promise.resolve();
  }

  clear(agent: string, notificationId: string): Promise<void> {
    this.#texts.delete(`${agent}\u0000${notificationId}`);
    return Promise.resolve();
  }

  get size(): number {
    return this.#texts.size;
  }
}
