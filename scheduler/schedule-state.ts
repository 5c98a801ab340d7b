// What Redis keeps of each schedule, shared by every daemon and `warren status`: up to when a round looked at it
// (the ticks after that are still to decide: on time, or missed) and the last tick queued as a task.
// Two hashes, one field per schedule (`<agent>/<schedule>`), so a round reads every schedule in two HMGETs.
//
// Written without compare-and-set: two daemons racing may set a slightly older time last. The ticks between are then
// decided again, and their task ids (made from the tick) are already in the inbox, so nothing runs twice.
import { RedisKeys } from '../redis/keys.ts';
import type { RedisClient } from '../redis/scripts.ts';

export interface ScheduleReading {
  /** Epoch ms up to which a round looked at the schedule; undefined: none yet. */
  checkedThrough: number | undefined;
  /** Epoch ms of the last tick queued as a task; undefined: none yet. */
  lastFired: number | undefined;
}

/** The field of one schedule (neither an agent's nor a schedule's name holds a slash). */
export function scheduleField(agent: string, schedule: string): string {
  return `${agent}/${schedule}`;
}

const num = (v: string | null | undefined): number | undefined => (v ? Number(v) : undefined);

export class ScheduleStateStore {
  readonly #redis: RedisClient;
  readonly #checked: string;
  readonly #fired: string;

  constructor(redis: RedisClient, prefix: string) {
    this.#redis = redis;
    const keys = new RedisKeys(prefix);
    this.#checked = keys.scheduleChecked;
    this.#fired = keys.scheduleFired;
  }

  async read(fields: readonly string[]): Promise<Map<string, ScheduleReading>> {
    const out = new Map<string, ScheduleReading>();
    if (fields.length === 0) return out;
    const rows = (await this.#redis.pipeline().call('HMGET', [this.#checked, ...fields]).call('HMGET', [this.#fired, ...fields]).exec()) ?? [];
    const [checked, fired] = rows.map(([err, r]) => {
      if (err) throw err;
      return r as Array<string | null>;
    });
    fields.forEach((f, i) => out.set(f, { checkedThrough: num(checked?.[i]), lastFired: num(fired?.[i]) }));
    return out;
  }

  /** A round's result: how far it looked at each schedule, and the ticks it queued. */
  async record(checked: ReadonlyMap<string, number>, fired: ReadonlyMap<string, number>): Promise<void> {
    if (checked.size === 0 && fired.size === 0) return;
    const m = this.#redis.multi();
    if (fired.size) m.hset(this.#fired, Object.fromEntries(fired));
    if (checked.size) m.hset(this.#checked, Object.fromEntries(checked));
    await m.exec();
  }

  /** Drops what is kept of the schedules `gone` picks (no longer defined). */
  async forget(gone: (field: string) => boolean): Promise<void> {
    const [checked, fired] = await Promise.all([this.#redis.hkeys(this.#checked), this.#redis.hkeys(this.#fired)]);
    const [oldChecked, oldFired] = [checked.filter(gone), fired.filter(gone)];
    if (oldChecked.length === 0 && oldFired.length === 0) return;
    const m = this.#redis.multi();
    if (oldChecked.length) m.hdel(this.#checked, ...oldChecked);
    if (oldFired.length) m.hdel(this.#fired, ...oldFired);
    await m.exec();
  }
}
