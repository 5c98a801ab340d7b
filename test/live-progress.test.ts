// The live status of a running activation: folded from its events, published throttled, described briefly.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventLog, type ActivationEvent, type ActivationEventBody } from '../agent-loop/events.ts';
import { foldProgress, initialProgress, ProgressPublisher, type LiveProgress } from '../activation/live-progress.ts';
import { describeProgress } from '../daemon/ops/status.ts';

function eventsOf(...bodies: ActivationEventBody[]): ActivationEvent[] {
  const seen: ActivationEvent[] = [];
  const log = new EventLog('act_live', { listener: (e) => seen.push(e) });
  for (const b of bodies) log.emit(b);
  return seen;
}

describe('live progress', () => {
  it('folds a run into step, action, target, streamed characters and tokens', () => {
    const evs = eventsOf(
      { type: 'step_start', step: 1, max_steps: 5 },
      { type: 'model_call', model: 'm1', attempt: 1 },
      { type: 'model_delta', model: 'm1', attempt: 1, text: 'abc' },
      { type: 'model_delta', model: 'm1', attempt: 1, text: 'de' },
      { type: 'budget_update', used_tokens: 120, max_tokens: 1000, cost_usd: 0 },
    );
    const states = evs.reduce<LiveProgress[]>((acc, e) => [...acc, foldProgress(acc.at(-1) ?? initialProgress('act_live'), e)], []);
    expect(states.at(2)).toMatchObject({ step: 1, action: 'writing', streamed_chars: 3 });
    expect(states.at(-1)).toMatchObject({ step: 1, max_steps: 5, action: 'writing', target: 'm1', streamed_chars: 5, tokens: 120 });
    const [tool] = eventsOf({ type: 'progress', step: 1, max_steps: 5, action: 'tool_call', target: 'hub_search' });
    expect(foldProgress(states.at(-1)!, tool!)).toMatchObject({ action: 'tool_call', target: 'hub_search' });
    const [ignored] = eventsOf({ type: 'tool_result', id: 'c', name: 'x', status: 'ok', excerpt: '' });
    expect(foldProgress(states.at(-1)!, ignored!)).toBe(states.at(-1)); // nothing shown changed: nothing to publish
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  // On a fake clock: with real timers, a busy machine ran the 120 ms wait past the next 80 ms interval (one
  // publish too many, seen in CI).
  it('publishes at most once per interval and never loses the last change', () => {
    vi.useFakeTimers();
    const published: LiveProgress[] = [];
    const pub = new ProgressPublisher('act_live', (p) => Promise.resolve(void published.push(p)), 80);
    const evs = eventsOf(
      { type: 'step_start', step: 1, max_steps: 3 },
      ...Array.from({ length: 50 }, () => ({ type: 'model_delta', model: 'm', attempt: 1, text: 'x' }) as const),
    );
    pub.start();
    expect(published).toEqual([]); // a run shorter than an interval costs no write
    vi.advanceTimersByTime(79);
    expect(published).toEqual([]);
    vi.advanceTimersByTime(41);
    expect(published).toEqual([expect.objectContaining({ step: 0, action: 'starting' })]); // a retried attempt's fresh state
    vi.advanceTimersByTime(100);
    published.length = 0;
    for (const e of evs) pub.observe(e);
    expect(published).toHaveLength(1); // the first change goes out at once
    vi.advanceTimersByTime(79);
    expect(published).toHaveLength(1); // the rest wait for the interval's end
    vi.advanceTimersByTime(71);
    expect(published).toHaveLength(2); // the rest, coalesced, when the interval ended
    expect(published[1]).toMatchObject({ step: 1, streamed_chars: 50 });
    pub.observe(eventsOf({ type: 'step_start', step: 2, max_steps: 3 })[0]!);
    pub.stop();
    vi.advanceTimersByTime(150);
    expect(published).toHaveLength(2); // stopped: the run is over
  });

  it('describes progress in a few words', () => {
    const p = { ...initialProgress('a'), step: 2, max_steps: 10 };
    expect(describeProgress(null)).toBe('starting');
    expect(describeProgress({ ...p, step: 0 })).toBe('starting');
    expect(describeProgress({ ...p, action: 'thinking' })).toBe('step 2/10 thinking');
    expect(describeProgress({ ...p, action: 'writing', streamed_chars: 340 })).toBe('step 2/10 writing (340 chars)');
    expect(describeProgress({ ...p, action: 'tool_call', target: 'hub_search' })).toBe('step 2/10 → hub_search');
    expect(describeProgress({ ...p, action: 'delegate', target: 'bob' })).toBe('step 2/10 → delegate bob');
  });
});
