// News of A2A tasks between the daemons of a fleet (Redis pub/sub): a task changed (the daemon holding its caller's
// request reads it again from the store and streams it on), or its caller cancelled it (the daemon running it aborts
// the turn). News is only a nudge: the store is the truth, so a message lost while a daemon reconnects costs a
// delay (the waiting request reads the store again on its own), never a wrong answer.
import { z } from 'zod';
import type { Logger } from 'pino';
import { RedisKeys } from '../../redis/keys.ts';
import type { RedisClient } from '../../redis/scripts.ts';
import { PARTIAL_MAX_CHARS } from './a2a-partial-answer.ts';

// `partial`: what the running turn has said so far (`text`, redacted), for the request that streams it.
const NewsSchema = z.strictObject({ kind: z.enum(['changed', 'cancel', 'partial']), taskId: z.string().min(1).max(512), text: z.string().max(4 * PARTIAL_MAX_CHARS).optional() });
export type A2ANewsItem = z.infer<typeof NewsSchema>;
type Listener = (news: A2ANewsItem) => void;

export class A2ANews {
  readonly #pub: RedisClient;
  readonly #sub: RedisClient;
  readonly #channel: string;
  readonly #logger: Logger;
  readonly #listeners = new Map<string, Set<Listener>>();

  /** `sub` is a connection of its own (a subscribed connection runs no other command). */
  constructor(pub: RedisClient, sub: RedisClient, prefix: string, logger: Logger) {
    this.#pub = pub;
    this.#sub = sub;
    this.#channel = new RedisKeys(prefix).a2aChannel;
    this.#logger = logger;
  }

  async start(): Promise<void> {
    this.#sub.on('message', (channel: string, text: string) => {
      if (channel !== this.#channel) return;
      const parsed = NewsSchema.safeParse(parseJson(text));
      if (!parsed.success) return void this.#logger.warn({ channel }, 'an unreadable A2A news message was ignored');
      for (const l of this.#listeners.get(parsed.data.taskId) ?? []) l(parsed.data);
    });
    await this.#sub.subscribe(this.#channel);
  }

  async publish(news: A2ANewsItem): Promise<void> {
    await this.#pub.publish(this.#channel, JSON.stringify(news));
  }

  /** Hears the news of one task until the returned function is called. */
  listen(taskId: string, listener: Listener): () => void {
    let set = this.#listeners.get(taskId);
    if (!set) this.#listeners.set(taskId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(taskId);
    };
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
