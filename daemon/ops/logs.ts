// `warren logs`: activation records as one line each (or JSON lines), newest last, optionally followed live; the
// A2A tasks served by the agents among them (caller, state, how long).
import type { ActivationRecord } from '../../activation/activation-records.ts';
import type { ActivationEvent } from '../../agent-loop/events.ts';
import { a2aTaskTookMs, OPEN_A2A_STATES, type A2ATaskEntry } from '../a2a/a2a-task-view.ts';

/**
 * e.g. `2026-11-23 07:13:06Z greeter notification replied (final) 1.2s 120+6 tok $0.0001 act-12-lx3`; a task's run
 * ends with `task <id>` (the id a webhook's 202 gave its sender).
 */
export function formatRecordLine(r: ActivationRecord): string {
  const at = r.started_at.replace('T', ' ').slice(0, 19) + 'Z';
  const tokens = `${r.usage.input_tokens}+${r.usage.output_tokens} tok`;
  const cost = r.usage.cost_usd ? ` $${r.usage.cost_usd.toFixed(4)}` : '';
  const did = [r.replies ? `${r.replies} repl${r.replies === 1 ? 'y' : 'ies'}` : '', r.posts ? `${r.posts} post${r.posts === 1 ? '' : 's'}` : ''].filter(Boolean).join(', ');
  const retry = r.attempt > 1 ? ` attempt ${r.attempt}` : '';
  const error = r.error ? ` — ${r.error}` : '';
  const abandoned = r.abandoned?.length ? ` abandoned ${r.abandoned.join(', ')}` : '';
  const detail = r.detail ? ` — ${r.detail}` : '';
  return `${at} ${r.agent} ${r.trigger} ${r.outcome}${r.reason ? ` (${r.reason})` : ''} ${(r.duration_ms / 1000).toFixed(1)}s ${tokens}${cost}${did ? ` ${did}` : ''}${retry}${abandoned} ${r.activation_id}${r.task_id ? ` task ${r.task_id}` : ''}${error}${detail}`;
}

/**
 * The events of a record, indented under its line (`warren logs --events`); a delegate's own events, kept in its
 * delegation_response, indented under that.
 */
export function formatEvents(r: Pick<ActivationRecord, 'events'>, indent = '    '): string[] {
  return r.events.flatMap((e) => {
    const { seq, type, ts: _ts, activation_id: id, ...rest } = e;
    const { events: nested, ...shown } = rest as typeof rest & { events?: ActivationEvent[] };
    const detail = Object.keys(shown).length ? ` ${JSON.stringify(shown)}` : '';
    const line = `${indent}#${seq} ${type}${detail}`;
    if (!nested) return [line];
    const dropped = e.type === 'delegation_response' && e.events_dropped ? [`${indent}    … ${e.events_dropped} more events of ${id}/${e.agent}`] : [];
    return [line, ...formatEvents({ events: nested }, `${indent}    `), ...dropped];
  });
}

/**
 * e.g. `2026-11-23 07:13:06Z clerk a2a-task completed from ci 2.5s 5f0c…` (`so far` while open), then what its
 * status says when it did not complete (the reason of a refusal or failure, why it waits). Pure.
 */
export function formatA2ATaskLine(t: A2ATaskEntry, now: Date): string {
  const at = new Date(t.updatedAt).toISOString().replace('T', ' ').slice(0, 19) + 'Z';
  const took = `${(a2aTaskTookMs(t, now) / 1000).toFixed(1)}s${OPEN_A2A_STATES.includes(t.state) ? ' so far' : ''}`;
  const said = t.said && t.state !== 'completed' ? ` — ${t.said.replace(/\s+/g, ' ').slice(0, 300)}` : '';
  return `${at} ${t.agent} a2a-task ${t.state} from ${t.caller || '?'} ${took} ${t.id}${said}`;
}

/** Whether an A2A task state is an end (what `warren logs --follow` prints). Pure. */
export function a2aTaskEnded(state: string): boolean {
  return !OPEN_A2A_STATES.includes(state) && state !== 'unknown' && state !== 'unspecified';
}
