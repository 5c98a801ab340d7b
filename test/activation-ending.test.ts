// An activation's ending from its steps (activation/ending.ts, pure): the precedence between failures, skips and
// the steps' own endings, as a table. Each row is steps in the order they ran, and the ending they make.
import { describe, expect, it } from 'vitest';
import { endingOf, NO_USAGE, type Ending, type Step, type UsageWithCost, type WorkOutcome } from '../activation/ending.ts';
import type { FailureOutcome } from '../executors/run-outcome.ts';

const usage = (tokens: number): UsageWithCost => ({ inputTokens: tokens, outputTokens: 1, cachedTokens: 0, costUsd: tokens / 4 });
const answered: WorkOutcome = { kind: 'answered', text: 'hi', partial: false };
const partial: WorkOutcome = { kind: 'answered', text: 'best so far', partial: true };
const posted: WorkOutcome = { kind: 'posted_by_tool' };
const declined: WorkOutcome = { kind: 'no_action', reason: 'no_action' };
const refused: WorkOutcome = { kind: 'no_action', reason: 'max_responses_per_thread' };
const emptyFeed: WorkOutcome = { kind: 'no_action', reason: 'empty_feed' };
const retryable: FailureOutcome = { kind: 'retryable_failure', message: 'HTTP 503', source: 'hub' };
const guard: FailureOutcome = { kind: 'guard_stop', guard: 'loop_detected', message: 'loop' };

/** One notification (or exploration) step: its ending, decided by the agent unless said otherwise. */
function did(outcome: WorkOutcome, by: 'agent' | 'pipeline' = 'agent', tokens = 10): Step {
  return { kind: 'done', ending: { outcome, by }, handled: ['n'], replies: outcome.kind === 'answered' ? 1 : 0, posts: 0, usage: usage(tokens) };
}
/** A step that changes nothing about the ending: the inbox read (ignored notifications), a follow read. */
const read = (...ids: string[]): Step => ({ kind: 'done', handled: ids, replies: 0, posts: 0, usage: NO_USAGE });
const fail = (outcome: FailureOutcome, tokens = 0): Step => ({ kind: 'failed', failure: { outcome, usage: usage(tokens), task: { notificationId: 'n2' } } });
const skip = (reason: string): Step => ({ kind: 'skipped', reason });

/** What a row checks of the ending: its kind and outcome (or failure), its reason, and what it counted. */
type Expected = { ended: WorkOutcome | { kind: 'skipped'; reason: string }; reason: string; replies?: number; handled?: number } | { failed: FailureOutcome; inputTokens: number };

const rows: Array<[string, Step[], Expected]> = [
  ['no step: nothing to do', [], { ended: { kind: 'no_action', reason: 'nothing_to_do' }, reason: 'nothing_to_do' }],
  ['only the inbox read (ignored notifications): nothing to do, the ignored ones handled', [read('a', 'b')], { ended: { kind: 'no_action', reason: 'nothing_to_do' }, reason: 'nothing_to_do', handled: 2 }],
  ['an answer', [read(), did(answered)], { ended: answered, reason: 'final', replies: 1 }],
  ['a partial answer at a limit', [did(partial)], { ended: partial, reason: 'partial' }],
  ['the agent declined', [did(declined)], { ended: declined, reason: 'no_action' }],
  ['an answer, then the agent declines the next notification: the answer stands', [did(answered), did(declined)], { ended: answered, reason: 'final', replies: 1, handled: 2 }],
  ['a post of the agent\'s own, then it declines: the post stands', [did(posted), did(declined)], { ended: posted, reason: 'posted' }],
  ['declined, then an answer: the answer', [did(declined), did(answered)], { ended: answered, reason: 'final' }],
  ['an answer, then one post of its own: the last work', [did(answered), did(posted)], { ended: posted, reason: 'posted' }],
  ['an answer, then a reply refused by the thread limit: the pipeline\'s ending stands', [did(answered), did(refused, 'pipeline')], { ended: refused, reason: 'max_responses_per_thread', replies: 1 }],
  ['a refused reply, then the agent declines: a no-action gives way to a later one', [did(refused, 'pipeline'), did(declined)], { ended: declined, reason: 'no_action' }],
  ['a follow read after an answer changes nothing', [did(answered), read('f')], { ended: answered, reason: 'final', handled: 2 }],
  ['an exploration with an empty feed', [did(emptyFeed, 'pipeline')], { ended: emptyFeed, reason: 'empty_feed' }],
  ['skipped (undefined agent, budget): nothing ran', [skip('budget_critical')], { ended: { kind: 'skipped', reason: 'budget_critical' }, reason: 'budget_critical' }],
  ['a failure before any work', [fail(retryable)], { failed: retryable, inputTokens: 0 }],
  ['an answer, then a failure: failed, with the cost of both', [did(answered, 'agent', 10), fail(guard, 5)], { failed: guard, inputTokens: 15 }],
  ['the first failure ends it; nothing after it counts', [fail(retryable, 3), did(answered, 'agent', 10), fail(guard)], { failed: retryable, inputTokens: 3 }],
  ['a skip after a failure does not hide it', [fail(retryable), skip('budget_critical')], { failed: retryable, inputTokens: 0 }],
];

function shapeOf(e: Ending): Expected {
  switch (e.kind) {
    case 'failed':
      return { failed: e.failure.outcome, inputTokens: e.failure.usage.inputTokens };
    case 'ended':
      return { ended: e.outcome as WorkOutcome, reason: e.reason, replies: e.replies, handled: e.handled.length };
  }
}

describe('an activation\'s ending from its steps', () => {
  it.each(rows)('%s', (_what, steps, expected) => {
    expect(shapeOf(endingOf(steps))).toMatchObject(expected);
  });

  it('adds up what the steps cost, read, replied and posted', () => {
    const exploration: Step = { kind: 'done', ending: { outcome: posted, by: 'agent' }, handled: [], replies: 0, posts: 1, usage: usage(7) };
    const e = endingOf([read('a'), did(answered, 'agent', 10), exploration]);
    expect(e).toEqual({ kind: 'ended', outcome: posted, reason: 'posted', handled: ['a', 'n'], replies: 1, posts: 1, usage: { inputTokens: 17, outputTokens: 2, cachedTokens: 0, costUsd: 4.25 } });
  });

  it('a failure keeps what the error post needs: its task, and the whole activation\'s cost', () => {
    const e = endingOf([did(answered, 'agent', 4), { kind: 'failed', failure: { outcome: guard, usage: usage(6), task: { notificationId: 'n2' }, stop: { steps: 3, tool: 'hub_search' }, errorName: 'LoopGuard' } }]);
    expect(e).toEqual({ kind: 'failed', failure: { outcome: guard, usage: { inputTokens: 10, outputTokens: 2, cachedTokens: 0, costUsd: 2.5 }, task: { notificationId: 'n2' }, stop: { steps: 3, tool: 'hub_search' }, errorName: 'LoopGuard' } });
  });
});
