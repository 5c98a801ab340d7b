// `warren status`: one snapshot of a deployment, read from Redis, the hub and the agent store, so it works
// from any machine that shares them, whether or not a daemon runs there.
import type { HubAdapter } from '../../hub-client/adapter.ts';
import type { QueueCounts, RunningActivation } from '../../scheduler/activation-queue.ts';
import type { AgentState, DailyCounters } from '../../scheduler/agent-state.ts';
import { eligibleAt } from '../../scheduler/backoff.ts';
import { inQuietHours } from '../../scheduler/quiet-hours.ts';
import { explorationGapMs } from '../../scheduler/staleness.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import type { ActivationRecord } from '../activation-records.ts';
import { LiveProgressSchema, type LiveProgress } from '../live-progress.ts';
import { RedisUnreachableError } from '../redis.ts';

export interface AgentStatus {
  name: string;
  type: string;
  model: string | undefined;
  paused: boolean;
  consecutive_failures: number;
  /** Notifications given up on after repeated failures (see `warren logs` for which). */
  abandoned: number;
  last: { outcome: string; reason: string; trigger: string; at: string; duration_ms: number } | null;
  /** Null when the agent may run now. */
  waiting_for: 'not_runnable' | 'paused' | 'backoff' | 'quiet_hours' | null;
  /** Why the daemon does not run the agent at all (e.g. its hub name belongs to a human); null when it does. */
  not_runnable: string | null;
  /** When the wait ends, if that is known (backoff); null otherwise. */
  next_eligible_at: string | null;
  /** When exploration may next pick the agent; null when discovery is off. */
  next_exploration_at: string | null;
  today: DailyCounters;
}

/** One activation running now, as its worker last described it. */
export interface RunningStatus {
  agent: string;
  trigger: string;
  started_at: string;
  /** Null until the worker published (or when it wrote something unreadable). */
  progress: LiveProgress | null;
}

export interface StatusReport {
  redis: { url: string; ok: boolean; error?: string };
  hub: { url: string; ok: boolean; error?: string };
  /** The lease holder's token (`host:pid:…`), or null when no scheduler leads. */
  leader: string | null;
  queue: QueueCounts | null;
  running: RunningStatus[];
  /** Empty when Redis is down: their state lives there. */
  agents: AgentStatus[];
  /** How many agents the store defines (validly), whether or not their state could be read. */
  defined: number;
  /** Agents whose definition has errors (they are not run). */
  broken: number;
}

/** What the scheduler would say about an agent now (pure: same rules as the scheduler's). */
export function agentStatus(def: AgentDefinition, state: AgentState | undefined, last: ActivationRecord | undefined, today: DailyCounters, minStalenessMs: number, now: Date, notRunnable?: string): AgentStatus {
  const st = state ?? { failures: 0, lastFailureAt: undefined, backoffUntil: undefined, lastActivatedAt: undefined, paused: false, abandoned: 0 };
  const b = def.config.behavior;
  const backoffUntil = eligibleAt(st);
  const waiting = notRunnable ? 'not_runnable' : st.paused ? 'paused' : backoffUntil > now.getTime() ? 'backoff' : inQuietHours(b.quiet_hours, now) ? 'quiet_hours' : null;
  const nextExploration = b.discovery.enabled ? Math.max(now.getTime(), (st.lastActivatedAt ?? 0) + explorationGapMs(b, minStalenessMs), backoffUntil) : undefined;
  return {
    name: def.name,
    type: def.config.type,
    model: def.config.brain.model,
    paused: st.paused,
    consecutive_failures: st.failures,
    abandoned: st.abandoned,
    last: last ? { outcome: last.outcome, reason: last.reason, trigger: last.trigger, at: last.started_at, duration_ms: last.duration_ms } : null,
    waiting_for: waiting,
    not_runnable: notRunnable ?? null,
    next_eligible_at: waiting === 'backoff' ? new Date(backoffUntil).toISOString() : null,
    next_exploration_at: nextExploration === undefined ? null : new Date(nextExploration).toISOString(),
    today,
  };
}

export function runningStatus(r: RunningActivation): RunningStatus {
  const progress = LiveProgressSchema.safeParse(r.progress);
  return { agent: r.agent, trigger: r.trigger, started_at: new Date(r.startedAt).toISOString(), progress: progress.success ? progress.data : null };
}

/** What a running activation is doing, in a few words: `step 2/10 → hub_search`, `step 1/10 writing (340 chars)`. */
export function describeProgress(p: LiveProgress | null): string {
  if (!p || p.step === 0) return 'starting';
  const step = `step ${p.step}/${p.max_steps}`;
  switch (p.action) {
    case 'writing':
      return `${step} writing (${p.streamed_chars} chars)`;
    case 'tool_call':
      return `${step} → ${p.target}`;
    case 'delegate':
      return `${step} → delegate ${p.target}`;
    case 'retrying':
      return `${step} retrying ${p.target}`;
    default:
      return `${step} thinking`;
  }
}

/** Checks a dependency, turning a failure into a short message instead of an exception. */
export async function probe(check: () => Promise<unknown>): Promise<{ ok: boolean; error?: string }> {
  try {
    await check();
    return { ok: true };
  } catch (err) {
    // The report names the URL and what to do itself: only the cause goes in the line.
    return { ok: false, error: err instanceof RedisUnreachableError ? err.reason : err instanceof Error ? err.message : String(err) };
  }
}

export async function hubHealthy(hub: HubAdapter): Promise<void> {
  if (!(await hub.health(AbortSignal.timeout(2_000)))) throw new Error('the hub did not answer /health with 200');
}

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));

/** The human view of a report: dependencies first, then one line per agent. */
export function formatStatus(r: StatusReport, now: Date): string {
  const mark = (x: { ok: boolean; error?: string }): string => (x.ok ? 'ok' : `DOWN (${x.error ?? 'unreachable'})`);
  const q = r.queue;
  const lines = [
    `redis   ${r.redis.url}  ${mark(r.redis)}`,
    `hub     ${r.hub.url}  ${mark(r.hub)}`,
    `leader  ${r.leader ?? (r.redis.ok ? 'none (no scheduler running)' : 'unknown')}`,
    `queue   ${q ? `${q.active} active, ${q.waiting + q.prioritized} waiting, ${q.delayed} delayed (retries), ${q.failed} failed` : 'unknown'}`,
    '',
  ];
  if (!r.redis.ok) lines.push(`redis is down: the state of the ${r.defined} defined agent${r.defined === 1 ? '' : 's'} is unknown (start Redis, or set REDIS_URL or redis.url in warren.yaml to yours)`);
  else if (r.agents.length === 0) lines.push('no agents defined');
  else {
    lines.push(`${pad('AGENT', 16)}${pad('STATE', 22)}${pad('LAST', 34)}${pad('TODAY', 30)}NEXT EXPLORATION`);
    for (const a of r.agents) {
      const waiting = a.waiting_for === 'not_runnable' ? 'NOT RUNNABLE' : a.waiting_for === 'backoff' ? `backoff until ${shortTime(a.next_eligible_at)}` : a.waiting_for ?? (a.consecutive_failures ? `ready (${a.consecutive_failures} failed)` : 'ready');
      const state = a.abandoned ? `${waiting}, ${a.abandoned} abandoned` : waiting;
      const last = a.last ? `${a.last.outcome} ${a.last.reason ? `(${a.last.reason}) ` : ''}${ago(a.last.at, now)}` : 'never ran';
      const today = `${a.today.activations} runs, ${a.today.tokensInput + a.today.tokensOutput} tok, $${a.today.costUsd.toFixed(4)}`;
      const next = a.next_exploration_at === null ? 'discovery off' : Date.parse(a.next_exploration_at) <= now.getTime() ? 'when idle' : shortTime(a.next_exploration_at);
      lines.push(`${pad(a.name, 16)}${pad(state, 22)}${pad(last, 34)}${pad(today, 30)}${next}`);
    }
  }
  for (const a of r.agents) if (a.not_runnable) lines.push('', `${a.name} is not run: ${a.not_runnable}`);
  if (r.running.length) {
    lines.push('', `${pad('RUNNING', 16)}${pad('TRIGGER', 14)}${pad('FOR', 8)}NOW`);
    for (const x of r.running) lines.push(`${pad(x.agent, 16)}${pad(x.trigger, 14)}${pad(ago(x.started_at, now).replace(' ago', ''), 8)}${describeProgress(x.progress)}`);
  }
  if (r.broken) lines.push('', `${r.broken} agent definition${r.broken === 1 ? ' has' : 's have'} errors and ${r.broken === 1 ? 'is' : 'are'} not run; see \`warren validate\``);
  return lines.join('\n');
}

function shortTime(iso: string | null): string {
  return iso ? iso.replace('T', ' ').slice(0, 19) + 'Z' : '?';
}

function ago(iso: string, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
  if (s < 90) return `${s}s ago`;
  if (s < 5_400) return `${Math.round(s / 60)}m ago`;
  if (s < 129_600) return `${Math.round(s / 3_600)}h ago`;
  return `${Math.round(s / 86_400)}d ago`;
}
