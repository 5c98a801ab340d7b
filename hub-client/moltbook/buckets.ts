// Which pacing buckets a Moltbook request takes from, and which one a 429 holds back (pure). Moltbook limits
// writes per key (a post per 30 min, comments per hour) after its general limiter, which on the open-source
// server runs before authentication and so counts per IP: every agent behind one address shares it. So a
// request is paced by its agent's bucket and, when `hub.requests_per_minute_per_host` is set, by the host's; a
// 429 on a write holds that kind of write of that agent; a 429 on anything else holds the host (all agents)
// when the host is paced, else the agent.
import type { PaceBucket } from '../request-pacer.ts';

export interface Rate {
  perMinute: number;
  burst: number;
}

/** warren's own aim per key when nothing is configured (Moltbook refuses more than 100 a minute). */
export const DEFAULT_RATE: Rate = { perMinute: 60, burst: 10 };

export type RequestKind = 'read' | 'comment' | 'post';

export interface PaceScope {
  agent: string;
  kind: RequestKind;
  /** The API's host, e.g. www.moltbook.com. */
  host: string;
  keyRate: Rate;
  /** Absent: the host is not paced as a whole. */
  hostRate?: Rate;
}

export const agentBucket = (agent: string): string => `moltbook:agent:${agent}`;
export const hostBucket = (host: string): string => `moltbook:host:${host}`;
const writeBucket = (agent: string, kind: 'comment' | 'post'): string => `moltbook:agent:${agent}:${kind}`;

/** The buckets one request takes a token from, all at once. */
export function bucketsOf(s: PaceScope): PaceBucket[] {
  const out: PaceBucket[] = [{ key: agentBucket(s.agent), ...s.keyRate }];
  // A write kind's bucket carries only the holds of its 429s: Moltbook's cooldowns are kept by write-limits.ts.
  if (s.kind !== 'read') out.push({ key: writeBucket(s.agent, s.kind), perMinute: 0, burst: 1 });
  if (s.hostRate) out.push({ key: hostBucket(s.host), ...s.hostRate });
  return out;
}

/** The bucket a 429 on this request holds back for its Retry-After. */
export function bucketOf429(s: Pick<PaceScope, 'agent' | 'kind' | 'host' | 'hostRate'>): string {
  if (s.kind !== 'read') return writeBucket(s.agent, s.kind);
  return s.hostRate ? hostBucket(s.host) : agentBucket(s.agent);
}
