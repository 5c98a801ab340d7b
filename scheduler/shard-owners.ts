// Which live daemon schedules which shard (pure). Rendezvous hashing: each shard goes to the daemon, among the live
// ones that work it, whose hash with the shard is highest. Daemons share the leadership about evenly, every daemon
// computes the same answer from the same roster, and when one dies or joins only the shards it wins or loses move.
import { createHash } from 'node:crypto';

export interface RosterEntry {
  /** The daemon's lease token (scheduler/lease.ts): unique per process start. */
  token: string;
  /** The shards it works; undefined: all. */
  shards?: readonly number[];
}

/** The shards `self` should hold the leases of, among `shardCount`, given the live daemons (self included or not). */
export function ownedShards(self: RosterEntry, live: readonly RosterEntry[], shardCount: number): Set<number> {
  const roster = live.some((d) => d.token === self.token) ? live : [...live, self];
  const owned = new Set<number>();
  for (let shard = 0; shard < shardCount; shard++) {
    let best: string | undefined;
    let bestScore = -1;
    for (const d of roster) {
      if (d.shards && !d.shards.includes(shard)) continue;
      const score = createHash('sha1').update(`${d.token}|${shard}`).digest().readUInt32BE(0);
      if (score > bestScore || (score === bestScore && d.token < best!)) [best, bestScore] = [d.token, score];
    }
    if (best === self.token) owned.add(shard);
  }
  return owned;
}
