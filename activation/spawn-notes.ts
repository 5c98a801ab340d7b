// What became of an agent's proposals (README "Agents that propose agents"), kept for its next run: one note per
// decided proposal, by approval id (writing the same decision twice keeps one note), handed to the first run that
// asks and then gone. Kept a week when no run comes.
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisClient } from '../redis/scripts.ts';

export const SPAWN_NOTES_TTL_S = 7 * 24 * 3600;

export class SpawnNotes {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;

  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
  }

  async add(agent: string, approvalId: string, text: string): Promise<void> {
    const key = this.#layout.of(agent).spawnNotes(agent);
    await this.#redis.multi().hset(key, approvalId, text).expire(key, SPAWN_NOTES_TTL_S).exec();
  }

  /** The agent's notes (in approval-id order), and none left behind. */
  async take(agent: string): Promise<string[]> {
    const key = this.#layout.of(agent).spawnNotes(agent);
    const res = await this.#redis.multi().hgetall(key).del(key).exec();
    const all = (res?.[0]?.[1] ?? {}) as Record<string, string>;
    return Object.keys(all).sort().map((k) => all[k]!);
  }
}
