// What Redis keeps of each schedule, shared by every daemon and `warren status`: up to when a round looked at it
// (the ticks after that are still to decide: on time, or missed) and the last tick queued as a task.
// Two hashes, one field per schedule (`<agent>/<schedule>`), so a round reads every schedule in two HMGETs (per shard:
// with shards, redis/key-layout.ts, a schedule's fields are in its agent's shard's hashes).
//
// Written without compare-and-set: two daemons racing may set a slightly older time last. The ticks between are then
// decided again, and their task ids (made from the tick) are already in the inbox, so nothing runs twice.
import { keyLayout, type KeyLayout, type KeySpace } from '../redis/key-layout.ts';
import type { RedisKeys } from '../redis/keys.ts';
import type { RedisClient } from '../redis/scripts.ts';
import { FIELDS_PER_COMMAND } from '../redis/agent-pages.ts';

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

/** The agent of a schedule's field (what picks its shard). */
export function agentOfField(field: string): string {
  const slash = field.indexOf('/');
  return slash < 0 ? field : field.slice(0, slash);
}

const num = (v: string | null | undefined): number | undefined => (v ? Number(v) : undefined);

export class ScheduleStateStore {
  readonly #redis: RedisClient;
  readonly #layout: KeyLayout;

  /** `space`: the daemon's key layout, or a prefix (one shard). */
  constructor(redis: RedisClient, space: KeySpace) {
    this.#redis = redis;
    this.#layout = keyLayout(space);
  }

  async read(fields: readonly string[]): Promise<Map<string, ScheduleReading>> {
    const readings = new Array<ScheduleReading>(fields.length);
    await Promise.all(
      this.#layout.groupsInPages(fields, agentOfField, FIELDS_PER_COMMAND).map(async ({ keys, items, at }) => {
        const rows = (await this.#redis.pipeline().call('HMGET', [keys.scheduleChecked, ...items]).call('HMGET', [keys.scheduleFired, ...items]).exec()) ?? [];
        const [checked, fired] = rows.map(([err, r]) => {
          if (err) throw err;
          return r as Array<string | null>;
        });
        at.forEach((pos, i) => (readings[pos] = { checkedThrough: num(checked?.[i]), lastFired: num(fired?.[i]) }));
      }),
    );
    const out = new Map<string, ScheduleReading>();
    fields.forEach((f, i) => out.set(f, readings[i]!));
    return out;
  }

  /** A round's result: how far it looked at each schedule, and the ticks it queued (a transaction per shard). */
  async record(checked: ReadonlyMap<string, number>, fired: ReadonlyMap<string, number>): Promise<void> {
    const byShard = new Map<RedisKeys, { checked: Array<[string, number]>; fired: Array<[string, number]> }>();
    const add = (which: 'checked' | 'fired', entries: ReadonlyMap<string, number>): void => {
      for (const entry of entries) {
        const k = this.#layout.of(agentOfField(entry[0]));
        let g = byShard.get(k);
        if (!g) byShard.set(k, (g = { checked: [], fired: [] }));
        g[which].push(entry);
      }
    };
    add('fired', fired);
    add('checked', checked);
    await Promise.all(
      [...byShard].map(async ([k, g]) => {
        const m = this.#redis.multi();
        if (g.fired.length) m.hset(k.scheduleFired, Object.fromEntries(g.fired));
        if (g.checked.length) m.hset(k.scheduleChecked, Object.fromEntries(g.checked));
        await m.exec();
      }),
    );
  }

  /** Drops what is kept of the schedules `gone` picks (no longer defined), in every shard. */
  async forget(gone: (field: string) => boolean): Promise<void> {
    await Promise.all(
      this.#layout.shards.map(async (k) => {
        const [checked, fired] = await Promise.all([this.#redis.hkeys(k.scheduleChecked), this.#redis.hkeys(k.scheduleFired)]);
        const [oldChecked, oldFired] = [checked.filter(gone), fired.filter(gone)];
        if (oldChecked.length === 0 && oldFired.length === 0) return;
        const m = this.#redis.multi();
        if (oldChecked.length) m.hdel(k.scheduleChecked, ...oldChecked);
        if (oldFired.length) m.hdel(k.scheduleFired, ...oldFired);
        await m.exec();
      }),
    );
  }
}
