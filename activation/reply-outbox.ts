// Remembers an answer between "the model produced it" and "the hub has it and the notification is read".
// A retried or recovered activation then posts the same text under the same Idempotency-Key, so the hub
// replays its first answer instead of refusing a changed body, and no model call is paid twice.
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisClient } from '../redis/scripts.ts';

const TTL_SECONDS = 24 * 3600;

export interface ReplyOutbox {
  get(agent: string, notificationId: string): Promise<string | undefined>;
  put(agent: string, notificationId: string, text: string): Promise<void>;
  clear(agent: string, notificationId: string): Promise<void>;
}

export class RedisReplyOutbox implements ReplyOutbox {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;

  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
  }

  #key(agent: string, id: string): string {
    return this.#layout.of(agent).outbox(agent, id);
  }

  async get(agent: string, notificationId: string): Promise<string | undefined> {
    return (await this.#redis.get(this.#key(agent, notificationId))) ?? undefined;
  }

  async put(agent: string, notificationId: string, text: string): Promise<void> {
    await this.#redis.set(this.#key(agent, notificationId), text, 'EX', TTL_SECONDS);
  }

  async clear(agent: string, notificationId: string): Promise<void> {
    await this.#redis.del(this.#key(agent, notificationId));
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
