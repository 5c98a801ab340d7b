// `warren status`: one snapshot of a deployment, read from Redis, the hub and the agent store, so it works
// from any machine that shares them, whether or not a daemon runs there.
import type { HubAdapter } from '../../hub-client/adapter.ts';
import type { QueueCounts, RunningActivation } from '../../scheduler/activation-queue.ts';
import type { AgentState, DailyCounters } from '../../scheduler/agent-state.ts';
import { eligibleAt } from '../../scheduler/backoff.ts';
import { mayRun, type IneligibleReason } from '../../scheduler/eligibility.ts';
import { describeHold, type HeldMentions } from '../../scheduler/held-mentions.ts';
import { explorationGapMs } from '../../scheduler/staleness.ts';
import type { AgentDefinition } from '../../store/definition.ts';
import type { ActivationRecord } from '../../activation/activation-records.ts';
import { LiveProgressSchema, type LiveProgress } from '../../activation/live-progress.ts';
import { RedisUnreachableError } from '../../redis/connect.ts';
import { driftNotice, type DefinitionView } from './loaded-definitions.ts';
import { scheduleRows, type ScheduleStatus } from './schedule-status.ts';
import type { A2ATaskSummary } from '../a2a/a2a-task-store.ts';

/** What an agent is doing or waiting for, one of these at a time (agentStatus says which wins). */
export type AgentStateKind = 'ready' | 'running' | 'paused' | 'quiet_hours' | 'backoff' | 'failing' | 'skipped' | 'name_taken';

export interface AgentStatus {
  name: string;
  /** The one state the agent is in now. */
  state: AgentStateKind;
  /** What goes with it: why skipped, until when, how many failed or abandoned; null when nothing does. */
  state_detail: string | null;
  type: string;
  model: string | undefined;
  paused: boolean;
  consecutive_failures: number;
  /** Notifications given up on after repeated failures (see `warren logs` for which). */
  abandoned: number;
  last: { outcome: string; reason: string; trigger: string; at: string; duration_ms: number } | null;
  /** Null when the agent may run now. */
  waiting_for: 'not_runnable' | 'paused' | 'backoff' | 'quiet_hours' | null;
  /** Why the daemon does not run the agent at all (skipped here, or its hub name belongs to a human); null when it does. */
  not_runnable: string | null;
  /** When the wait ends, if that is known (backoff); null otherwise. */
  next_eligible_at: string | null;
  /** When exploration may next pick the agent; null when discovery is off. */
  next_exploration_at: string | null;
  today: DailyCounters;
  /** What the agent remembers (entries, bytes, and the newest few when asked for); null when its memory is off or unread. */
  memory?: AgentMemoryFigures | null;
  /** Spend against the hub's limits (USD; a null limit is none); null when the hub was not asked or did not answer. */
  budget?: AgentBudget | null;
  /** The definition the daemon runs (file hash, since when) and whether the files on disk differ; null when no daemon loaded it. */
  definition?: DefinitionView | null;
  /** Mentions the scheduler holds back: why, how many, when they run (scheduler/held-mentions.ts); null when none. */
  held?: HeldMentions | null;
  /** Its schedules' next and last run (daemon/ops/schedule-status.ts); empty when it has none. */
  schedules?: ScheduleStatus[];
}

export interface AgentMemoryFigures {
  entries: number;
  bytes: number;
  newest: Array<{ text: string; kind: string; created_at: string }>;
}

export interface AgentBudget {
  status: string;
  daily_used_usd: number;
  daily_limit_usd: number | null;
  monthly_used_usd: number;
  monthly_limit_usd: number | null;
}

/** The fleet's spend this month against the sum of its agents' monthly limits (null: none set), from the hub. */
export interface FleetBudget {
  status: string;
  monthly_used_usd: number;
  monthly_limit_usd: number | null;
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
  /** The lease holder's token (`host:pid:…`), or null when no scheduler leads (of shard 0 when there are shards). */
  leader: string | null;
  /** With `redis.shards` above 1: each shard's lease holder and its agents' count. */
  shards?: Array<{ shard: number; prefix: string; leader: string | null; agents: number }>;
  queue: QueueCounts | null;
  running: RunningStatus[];
  /** Empty when Redis is down: their state lives there. */
  agents: AgentStatus[];
  /** How many agents the store defines (validly), whether or not their state could be read. */
  defined: number;
  /** Agents whose definition has errors (they are not run). */
  broken: number;
  /** The fleet's spend this month, from the hub; null when the hub was not asked (no admin key here) or did not answer. */
  fleet_budget?: FleetBudget | null;
  /** Whether a daemon said which definitions it runs (daemon/ops/loaded-definitions.ts). */
  definitions_published?: boolean;
  /** Agents the daemon runs whose definition on disk is gone or has errors. */
  runs_without_definition?: string[];
  /** The newest A2A tasks (caller, state, duration); absent when Redis is down. */
  a2a_tasks?: A2ATaskSummary[];
}

/** The waits `warren status` shows: those that hold back any run, whatever its trigger. */
const STATUS_WAITS: ReadonlySet<IneligibleReason> = new Set(['not_runnable', 'paused', 'backoff', 'quiet_hours'] as const);
type StatusWait = Extract<IneligibleReason, 'not_runnable' | 'paused' | 'backoff' | 'quiet_hours'>;
const isStatusWait = (r: IneligibleReason): r is StatusWait => STATUS_WAITS.has(r);

/**
 * What the scheduler would say about an agent now (pure: the scheduler's own decision, eligibility.ts), and the
 * one state it is in. `notRunnable`: its hub name is another identity's; `live.skipped`: no executor of the daemon can run it;
 * `live.running`: an activation of it runs now.
 */
export function agentStatus(
  def: AgentDefinition,
  state: AgentState | undefined,
  last: ActivationRecord | undefined,
  today: DailyCounters,
  minStalenessMs: number,
  now: Date,
  notRunnable?: string,
  live: { skipped?: string; running?: boolean } = {},
): AgentStatus {
  const st = state ?? { failures: 0, lastFailureAt: undefined, backoffUntil: undefined, lastActivatedAt: undefined, paused: false, abandoned: 0 };
  const b = def.config.behavior;
  const backoffUntil = eligibleAt(st);
  const notRun = live.skipped ?? notRunnable;
  const verdict = mayRun({ trigger: 'notification', notRunnable: notRun, paused: st.paused, backoffUntil, quietHours: b.quiet_hours }, now);
  const waiting: StatusWait | null = !verdict.eligible && isStatusWait(verdict.reason) ? verdict.reason : null;
  const inBackoff = waiting === 'backoff';
  const quiet = waiting === 'quiet_hours';
  const nextExploration = b.discovery.enabled ? Math.max(now.getTime(), (st.lastActivatedAt ?? 0) + explorationGapMs(b, minStalenessMs), backoffUntil) : undefined;
  const failed = st.failures ? `${st.failures} failed in a row` : undefined;
  const abandoned = st.abandoned ? `${st.abandoned} notification${st.abandoned === 1 ? '' : 's'} abandoned` : undefined;
  const joined = (...parts: Array<string | undefined>): string | null => parts.filter(Boolean).join(', ') || null;
  const [kind, detail]: [AgentStateKind, string | null] = live.skipped
    ? ['skipped', live.skipped]
    : notRunnable
      ? ['name_taken', notRunnable]
      : live.running
        ? ['running', null]
        : st.paused
          ? ['paused', null]
          : inBackoff
            ? ['backoff', joined(`until ${shortTime(new Date(backoffUntil).toISOString())}`, failed, abandoned)]
            : quiet && b.quiet_hours
              ? ['quiet_hours', `until ${b.quiet_hours.end} ${b.quiet_hours.timezone}`]
              : failed
                ? ['failing', joined(failed, abandoned)]
                : ['ready', joined(abandoned)];
  return {
    name: def.name,
    state: kind,
    state_detail: detail,
    type: def.config.type,
    model: def.config.brain.model,
    paused: st.paused,
    consecutive_failures: st.failures,
    abandoned: st.abandoned,
    last: last ? { outcome: last.outcome, reason: last.reason, trigger: last.trigger, at: last.started_at, duration_ms: last.duration_ms } : null,
    waiting_for: waiting,
    not_runnable: notRun ?? null,
    next_eligible_at: waiting === 'backoff' ? new Date(backoffUntil).toISOString() : null,
    next_exploration_at: nextExploration === undefined ? null : new Date(nextExploration).toISOString(),
    today,
  };
}

/** The STATE cell of the human views: the state, with its detail when that is short (reasons go below the table). */
export function stateCell(a: Pick<AgentStatus, 'state' | 'state_detail'>): string {
  switch (a.state) {
    case 'skipped':
      return 'skipped';
    case 'name_taken':
      return 'NOT RUNNABLE (name taken)';
    case 'quiet_hours':
      return `quiet hours${a.state_detail ? ` (${a.state_detail})` : ''}`;
    default:
      return a.state_detail ? `${a.state} (${a.state_detail})` : a.state;
  }
}

/** Rows as aligned columns: each column as wide as its widest cell, two spaces apart. */
export function columns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]! + 2))).join(''));
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

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** The human view of a report: dependencies first, then one line per agent. */
export function formatStatus(r: StatusReport, now: Date): string {
  const mark = (x: { ok: boolean; error?: string }): string => (x.ok ? 'ok' : `DOWN (${x.error ?? 'unreachable'})`);
  const q = r.queue;
  const lines = [
    `redis   ${r.redis.url}  ${mark(r.redis)}`,
    `hub     ${r.hub.url}  ${mark(r.hub)}`,
    ...(r.shards
      ? r.shards.map((s) => `shard ${s.shard}  ${s.prefix}  ${plural(s.agents, 'agent')}  leader ${s.leader ?? (r.redis.ok ? 'none (no scheduler running)' : 'unknown')}`)
      : [`leader  ${r.leader ?? (r.redis.ok ? 'none (no scheduler running)' : 'unknown')}`]),
    `queue   ${q ? `${q.active} active, ${q.waiting + q.prioritized} waiting, ${q.delayed} delayed (retries), ${q.failed} failed` : 'unknown'}`,
    ...(r.fleet_budget ? [`budget  fleet ${fleetBudgetText(r.fleet_budget)}`] : []),
    '',
  ];
  if (!r.redis.ok) lines.push(`redis is down: the state of the ${plural(r.defined, 'defined agent')} is unknown (start Redis, or set REDIS_URL or redis.url in warren.yaml to yours)`);
  else if (r.agents.length === 0) lines.push('no agents defined');
  else {
    const rows = r.agents.map((a) => {
      const last = a.last ? `${a.last.outcome} ${a.last.reason ? `(${a.last.reason}) ` : ''}${ago(a.last.at, now)}` : 'never ran';
      const today = `${plural(a.today.activations, 'run')}, ${a.today.tokensInput + a.today.tokensOutput} tok, $${a.today.costUsd.toFixed(4)}`;
      const next = a.next_exploration_at === null ? 'discovery off' : Date.parse(a.next_exploration_at) <= now.getTime() ? 'when idle' : shortTime(a.next_exploration_at);
      return [a.name, `${stateCell(a)}${a.definition?.differs_on_disk ? ' DIFFERS ON DISK' : ''}`, last, today, budgetCell(a.budget), memoryCell(a.memory), next];
    });
    lines.push(...columns([['AGENT', 'STATE', 'LAST', 'TODAY', 'BUDGET (DAY · MONTH)', 'MEMORY', 'NEXT EXPLORATION'], ...rows]));
  }
  for (const a of r.agents) if (a.not_runnable) lines.push('', `${a.name} is not run: ${a.not_runnable}`);
  const drift = [
    ...r.agents.flatMap((a) => (a.definition === undefined ? [] : (driftNotice(a.name, a.definition, r.definitions_published ?? false) ?? []))),
    ...(r.runs_without_definition ?? []).map((name) => `${name}: the daemon runs it, but its definition on disk is gone or has errors: see \`warren validate\` and the daemon log`),
  ];
  if (drift.length) lines.push('', ...drift);
  // What waits and how to end the wait: held mentions, else a backoff with nothing waiting yet.
  const waits = r.agents.flatMap((a) => (a.held ? [heldLine(a.name, a.held)] : a.state === 'backoff' && a.next_eligible_at ? [`${a.name}: failure backoff until ${shortTime(a.next_eligible_at)}; \`warren resume ${a.name}\` ends it now`] : []));
  if (waits.length) lines.push('', ...waits);
  const schedules = scheduleRows(r.agents);
  if (schedules.length) lines.push('', ...columns([['SCHEDULE', 'CRON', 'NEXT', 'LAST', 'MISSED'], ...schedules]));
  if (r.a2a_tasks?.length) lines.push('', ...columns([['A2A TASK', 'AGENT', 'CALLER', 'STATE', 'TOOK', 'CAME'], ...a2aTaskRows(r.a2a_tasks, now)]));
  if (r.running.length) {
    lines.push('', ...columns([['RUNNING', 'TRIGGER', 'FOR', 'NOW'], ...r.running.map((x) => [x.agent, x.trigger, ago(x.started_at, now).replace(' ago', ''), describeProgress(x.progress)])]));
  }
  if (r.broken) lines.push('', `${r.broken} agent definition${r.broken === 1 ? ' has' : 's have'} errors and ${r.broken === 1 ? 'is' : 'are'} not run; see \`warren validate\``);
  return lines.join('\n');
}

/** One row per A2A task: id, agent, caller, state, how long it took (or has run so far), when it came. Pure. */
export function a2aTaskRows(tasks: readonly A2ATaskSummary[], now: Date): string[][] {
  return tasks.map((t) => {
    const open = ['submitted', 'working', 'input_required', 'auth_required'].includes(t.state);
    const tookMs = Math.max(0, (open ? now.getTime() : t.updatedAt) - t.createdAt);
    return [t.id, t.agent, t.caller, t.state, `${(tookMs / 1000).toFixed(1)}s${open ? ' so far' : ''}`, ago(new Date(t.createdAt).toISOString(), now)];
  });
}

/** `greeter: 2 mentions held since 12:00Z, paused: run after \`warren resume greeter\``. */
export function heldLine(agent: string, h: HeldMentions): string {
  return `${agent}: ${plural(h.waiting, 'mention')} held since ${h.since.slice(11, 16)}Z, ${describeHold(agent, h)}`;
}

/** `$0.02/$1.00 · $0.40/$20.00`; a missing limit is `no limit`; `-` when the hub's budget is unknown. */
export function budgetCell(b: AgentBudget | null | undefined): string {
  if (!b) return '-';
  const one = (used: number, limit: number | null): string => (limit === null ? `$${used.toFixed(2)} (no limit)` : `$${used.toFixed(2)}/$${limit.toFixed(2)}`);
  return `${one(b.daily_used_usd, b.daily_limit_usd)} · ${one(b.monthly_used_usd, b.monthly_limit_usd)}${b.status === 'healthy' ? '' : ` ${b.status.toUpperCase()}`}`;
}

/** `$3.20 of $40.00 this month (healthy)`. */
export function fleetBudgetText(b: FleetBudget): string {
  return `$${b.monthly_used_usd.toFixed(2)} ${b.monthly_limit_usd === null ? '(no monthly limits set)' : `of $${b.monthly_limit_usd.toFixed(2)}`} this month (${b.status})`;
}

/** `12 entries, 3.4 kB`; `-` when the agent does not remember (or the store could not be read). */
export function memoryCell(m: AgentMemoryFigures | null | undefined): string {
  if (!m) return '-';
  const size = m.bytes < 1024 ? `${m.bytes} B` : m.bytes < 1024 * 1024 ? `${(m.bytes / 1024).toFixed(1)} kB` : `${(m.bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${plural(m.entries, 'entry', 'entries')}, ${size}`;
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
