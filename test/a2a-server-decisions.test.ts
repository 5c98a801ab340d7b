// The A2A server's pure decisions: who is calling (keys by hash, loopback without callers), and a task state's rank
// (the store never moves a task back, never rewrites its end).
import { Role as SdkRole, TaskState } from '@a2a-js/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkCaller, hashKey, type KnownCaller } from '../daemon/a2a/a2a-callers.ts';
import { stateName, stateRank } from '../daemon/a2a/a2a-task-store.ts';
import { Role, TaskState as StateConstants } from '../daemon/a2a/a2a-enums.ts';
import { a2aTaskRows } from '../daemon/ops/status.ts';
import { waitingTask, waitingText } from '../daemon/a2a/a2a-waiting.ts';
import { agentMessage } from '../daemon/a2a/a2a-messages.ts';
import { a2aTaskEnded, formatA2ATaskLine } from '../daemon/ops/logs.ts';
import { PARTIAL_EVERY_MS, PARTIAL_MAX_CHARS, PartialAnswer } from '../daemon/a2a/a2a-partial-answer.ts';

const ci: KnownCaller = { name: 'ci', keyHash: hashKey('ci-key') };

describe('checkCaller', () => {
  it.each([
    { callers: [], auth: undefined, from: '127.0.0.1', want: { ok: true, caller: 'loopback' } },
    { callers: [], auth: undefined, from: '::ffff:127.0.0.1', want: { ok: true, caller: 'loopback' } },
    { callers: [], auth: undefined, from: '::1', want: { ok: true, caller: 'loopback' } },
    { callers: [], auth: 'Bearer ci-key', from: '10.0.0.5', want: { ok: false } },
    { callers: [ci], auth: undefined, from: '127.0.0.1', want: { ok: false } },
    { callers: [ci], auth: 'Bearer wrong', from: '127.0.0.1', want: { ok: false } },
    { callers: [ci], auth: 'Basic Y2k6a2V5', from: '127.0.0.1', want: { ok: false } },
    { callers: [ci], auth: 'Bearer ci-key', from: '10.0.0.5', want: { ok: true, caller: 'ci' } },
    { callers: [ci], auth: 'bearer ci-key', from: '10.0.0.5', want: { ok: true, caller: 'ci' } },
  ])('callers $callers.length, $auth from $from', ({ callers, auth, from, want }) => {
    expect(checkCaller(callers, auth, from)).toMatchObject(want);
  });
});

describe('stateRank', () => {
  it.each([
    [TaskState.TASK_STATE_UNSPECIFIED, 1],
    [TaskState.TASK_STATE_SUBMITTED, 1],
    [TaskState.TASK_STATE_WORKING, 2],
    [TaskState.TASK_STATE_INPUT_REQUIRED, 2],
    [TaskState.TASK_STATE_AUTH_REQUIRED, 2],
    [TaskState.TASK_STATE_COMPLETED, 3],
    [TaskState.TASK_STATE_FAILED, 3],
    [TaskState.TASK_STATE_CANCELED, 3],
    [TaskState.TASK_STATE_REJECTED, 3],
  ])('%s ranks %s', (state, rank) => {
    expect(stateRank(state)).toBe(rank);
  });
  it('names states for people', () => {
    expect(stateName(TaskState.TASK_STATE_INPUT_REQUIRED)).toBe('input_required');
  });
  // The server reads no enum of the SDK (that would load it into every daemon): its own constants must be the SDK's.
  it.each([
    ['TaskState', StateConstants, TaskState],
    ['Role', Role, SdkRole],
  ] as const)('the constants of %s are the SDK enum, member by member', (_, ours, sdk) => {
    expect(ours).toEqual(Object.fromEntries(Object.entries(sdk).filter(([, v]) => typeof v === 'number')));
  });
  it.each([-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, NaN])('names state %s as the SDK enum does', (state) => {
    const sdkName = (TaskState as unknown as Record<number, string | undefined>)[state];
    expect(stateName(state)).toBe(sdkName ? sdkName.replace(/^TASK_STATE_/, '').toLowerCase() : 'unknown');
  });
});

describe('a2aTaskRows (warren status)', () => {
  const now = new Date('2026-11-26T12:00:00Z');
  const at = (s: number): number => now.getTime() - s * 1000;
  it.each([
    { state: 'completed', createdAt: at(60), updatedAt: at(57.5), took: '2.5s' },
    { state: 'working', createdAt: at(4), updatedAt: at(3), took: '4.0s so far' },
    { state: 'rejected', createdAt: at(10), updatedAt: at(10), took: '0.0s' },
  ])('$state took $took', ({ state, createdAt, updatedAt, took }) => {
    const [row] = a2aTaskRows([{ id: 't-1', agent: 'clerk', caller: 'ci', state, createdAt, updatedAt }], now);
    expect(row!.slice(0, 5)).toEqual(['t-1', 'clerk', 'ci', state, took]);
  });
});

describe('waiting A2A tasks (waitingText, waitingTask)', () => {
  const now = new Date('2026-11-26T12:00:00Z');
  it.each([
    { hold: { reason: 'paused' as const, runsAt: null }, want: 'waiting, not refused: paused: run after `warren resume clerk`' },
    { hold: { reason: 'quiet_hours' as const, runsAt: Date.parse('2026-11-26T18:00:00Z') }, want: 'waiting, not refused: quiet hours: run at 2026-11-26 18:00Z' },
    { hold: { reason: 'backoff' as const, runsAt: Date.parse('2026-11-26T12:05:00Z') }, want: 'waiting, not refused: failure backoff: run at 2026-11-26 12:05Z (or now with `warren resume clerk`)' },
    { hold: { reason: 'budget' as const, runsAt: null }, want: "waiting, not refused: budget critical: run when the hub's budget allows again (daily budgets reset at 00:00 UTC)" },
  ])('$hold.reason', ({ hold, want }) => {
    expect(waitingText('clerk', hold)).toBe(want);
  });

  const task = (state: TaskState, said?: string) => {
    const t = { id: 't-1', contextId: 'c-1', artifacts: [], history: [], metadata: undefined };
    return { ...t, status: { state, message: said === undefined ? undefined : agentMessage(t, said, 'm'), timestamp: now.toISOString() } };
  };
  it.each([
    { name: 'a SUBMITTED task says it', task: task(TaskState.TASK_STATE_SUBMITTED), changes: true },
    { name: 'a task saying something else says it', task: task(TaskState.TASK_STATE_SUBMITTED, 'waiting, not refused: paused'), changes: true },
    { name: 'a task saying it already is left', task: task(TaskState.TASK_STATE_SUBMITTED, 'waiting: x'), changes: false },
    { name: 'a WORKING task is left', task: task(TaskState.TASK_STATE_WORKING), changes: false },
    { name: 'an ended task is left', task: task(TaskState.TASK_STATE_COMPLETED, 'done'), changes: false },
  ])('$name', ({ task: t, changes }) => {
    const next = waitingTask(t, 'waiting: x', now);
    expect(next !== undefined).toBe(changes);
    if (next) expect(next.status).toMatchObject({ state: TaskState.TASK_STATE_SUBMITTED, timestamp: now.toISOString() });
  });
});

describe('formatA2ATaskLine (warren logs)', () => {
  const now = new Date('2026-11-26T12:00:00Z');
  const at = (sec: number): number => now.getTime() - sec * 1000;
  it.each([
    { state: 'completed', said: 'Build 4711 is green.', createdAt: at(60), updatedAt: at(57.5), want: '2026-11-26 11:59:02Z clerk a2a-task completed from ci 2.5s t-1', ended: true },
    { state: 'rejected', said: 'over the\nlimit', createdAt: at(10), updatedAt: at(10), want: '2026-11-26 11:59:50Z clerk a2a-task rejected from ci 0.0s t-1 — over the limit', ended: true },
    { state: 'submitted', said: 'waiting, not refused: paused', createdAt: at(4), updatedAt: at(3), want: '2026-11-26 11:59:57Z clerk a2a-task submitted from ci 4.0s so far t-1 — waiting, not refused: paused', ended: false },
    { state: 'working', said: '', createdAt: at(4), updatedAt: at(3), want: '2026-11-26 11:59:57Z clerk a2a-task working from ci 4.0s so far t-1', ended: false },
  ])('$state', ({ state, said, createdAt, updatedAt, want, ended }) => {
    expect(formatA2ATaskLine({ id: 't-1', agent: 'clerk', caller: 'ci', state, said, createdAt, updatedAt }, now)).toBe(want);
    expect(a2aTaskEnded(state)).toBe(ended);
  });
});

describe('PartialAnswer (what a turn has said so far)', () => {
  afterEach(() => void vi.useRealTimers());
  const redact = (t: string): string => t.replaceAll('sk-secret', '[REDACTED]');
  it.each([
    { name: 'fragments coalesce into one send per interval', steps: [['push', 'Hel'], ['push', 'lo'], ['tick']], sent: ['Hello'] },
    { name: 'redacted as a whole: a secret cut across fragments is found', steps: [['push', 'key sk-se'], ['push', 'cret here'], ['tick']], sent: ['key [REDACTED] here'] },
    { name: 'a new model call sends what the last one said now, then starts anew', steps: [['push', 'Looking.'], ['reset'], ['push', 'Green.'], ['tick']], sent: ['Looking.', 'Green.'] },
    { name: 'nothing new, nothing sent', steps: [['push', 'Same'], ['tick'], ['push', ''], ['tick']], sent: ['Same'] },
    { name: 'blank text is not sent', steps: [['push', '  '], ['tick']], sent: [] },
    { name: 'stopped: nothing more is sent', steps: [['push', 'Late'], ['stop'], ['tick']], sent: [] },
  ])('$name', ({ steps, sent }) => {
    vi.useFakeTimers();
    const out: string[] = [];
    const p = new PartialAnswer((t) => out.push(t), redact);
    for (const [what, text] of steps) {
      if (what === 'push') p.push(text!);
      else if (what === 'reset') p.reset();
      else if (what === 'stop') p.stop();
      else vi.advanceTimersByTime(PARTIAL_EVERY_MS);
    }
    expect(out).toEqual(sent);
  });
  it('is capped', () => {
    vi.useFakeTimers();
    const out: string[] = [];
    const p = new PartialAnswer((t) => out.push(t), (t) => t);
    p.push('x'.repeat(PARTIAL_MAX_CHARS + 10));
    p.push('more');
    vi.advanceTimersByTime(PARTIAL_EVERY_MS);
    expect(out.map((t) => t.length)).toEqual([PARTIAL_MAX_CHARS]);
  });
});
