// Activity summaries (issue 33 item 1), the pure part: which summary is due when, the figures of a period from the
// activation records and held-mention lines, and the post that shows them. Through daemons:
// test/activity-summary-daemons.test.ts.
import { describe, expect, it } from 'vitest';
import type { ActivationRecord } from '../activation/activation-records.ts';
import { activityFigures, formatActivitySummary, summaryDue, type SummaryDecision, type SummaryFacts } from '../activation/activity-summary.ts';
import type { OutcomeKind } from '../executors/run-outcome.ts';
import { parseDefinition } from '../store/parse-definition.ts';

const at = (iso: string): number => Date.parse(iso);

function rec(over: Partial<ActivationRecord> & { ended: string; outcome?: OutcomeKind }): ActivationRecord {
  const { ended, ...rest } = over;
  const duration = rest.duration_ms ?? 1_000;
  return {
    activation_id: `act-${ended}`,
    agent: 'scout',
    trigger: 'notification',
    outcome: 'answered',
    reason: 'completed',
    started_at: new Date(at(ended) - duration).toISOString(),
    duration_ms: duration,
    usage: { input_tokens: 100, output_tokens: 10, cached_tokens: 5, cost_usd: 0.01 },
    replies: 1,
    posts: 0,
    handled_notifications: 1,
    attempt: 1,
    events: [],
    ...rest,
  };
}

describe('which summary is due', () => {
  const daily = '0 0 * * *';
  it.each<[string, { cron: string; done: number | undefined; now: string }, SummaryDecision]>([
    ['never seen: summaries start at the last tick, nothing posted', { cron: daily, done: undefined, now: '2026-11-26T12:00:00Z' }, { kind: 'first_seen', tick: at('2026-11-26T00:00:00Z') }],
    ['the last tick is summarised: not due', { cron: daily, done: at('2026-11-26T00:00:00Z'), now: '2026-11-26T23:59:59Z' }, { kind: 'not_due' }],
    ['a new tick: due, from the last summary', { cron: daily, done: at('2026-11-26T00:00:00Z'), now: '2026-11-27T00:00:00.500Z' }, { kind: 'due', tick: at('2026-11-27T00:00:00Z'), from: at('2026-11-26T00:00:00Z') }],
    ['after three days down: one summary of all of them', { cron: daily, done: at('2026-11-23T00:00:00Z'), now: '2026-11-26T08:00:00Z' }, { kind: 'due', tick: at('2026-11-26T00:00:00Z'), from: at('2026-11-23T00:00:00Z') }],
    ['every minute', { cron: '* * * * *', done: at('2026-11-26T12:00:00Z'), now: '2026-11-26T12:01:00Z' }, { kind: 'due', tick: at('2026-11-26T12:01:00Z'), from: at('2026-11-26T12:00:00Z') }],
    ['the schedule changed to a later time: not due before it', { cron: '0 6 * * *', done: at('2026-11-26T12:00:00Z'), now: '2026-11-26T18:00:00Z' }, { kind: 'not_due' }],
  ])('%s', (_name, f, expected) => {
    expect(summaryDue({ ...f, now: at(f.now) })).toEqual(expected);
  });
});

describe('the figures of a period', () => {
  const from = at('2026-11-26T00:00:00Z');
  const to = at('2026-11-27T00:00:00Z');
  const base: SummaryFacts = { from, to, records: [], historyFull: false, held: [] };
  const fail = (ended: string, error: string): ActivationRecord => rec({ ended, outcome: 'terminal_failure', reason: 'HubError', error, replies: 0 });

  it.each<[string, Partial<SummaryFacts>, Partial<ReturnType<typeof activityFigures>>]>([
    ['nothing happened', {}, { activations: 0, byKind: {}, answers: 0, posts: 0, failures: 0, fingerprints: [], tokens: { input: 0, output: 0, cached: 0 }, cost_usd: 0, holds: {}, heldWaitingMax: 0 }],
    [
      'by trigger and outcome; a run belongs to the period it ended in',
      {
        records: [
          rec({ ended: '2026-11-27T00:00:30Z' }), // after the period
          rec({ ended: '2026-11-26T20:00:00Z', trigger: 'exploration', outcome: 'posted_by_tool', replies: 0, posts: 1 }),
          rec({ ended: '2026-11-26T10:00:00Z' }),
          rec({ ended: '2026-11-26T09:00:00Z', trigger: 'task', outcome: 'skipped', reason: 'no_task', replies: 0, usage: { input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost_usd: 0 } }),
          rec({ ended: '2026-11-26T00:00:00.500Z', duration_ms: 2_000 }), // started before, ended in it
          rec({ ended: '2026-11-26T00:00:00Z' }), // ended at the period's start: the previous one's
        ],
      },
      { activations: 4, byKind: { exploration: { posted_by_tool: 1 }, notification: { answered: 2 }, task: { skipped: 1 } }, answers: 2, posts: 1, failures: 0, tokens: { input: 300, output: 30, cached: 15 }, cost_usd: 0.03 },
    ],
    [
      'failures by fingerprint: ids and numbers do not make two',
      { records: [fail('2026-11-26T03:00:00Z', 'hub answered 503 for act-1'), fail('2026-11-26T02:00:00Z', 'hub answered 502 for act-2'), fail('2026-11-26T01:00:00Z', 'model gone'), rec({ ended: '2026-11-26T01:30:00Z', outcome: 'retryable_failure', reason: 'timeout', error: 'deadline 30s' })] },
      { activations: 4, failures: 4, fingerprints: [{ fingerprint: 'HubError:hub answered <n> for <id>', count: 2 }, { fingerprint: 'HubError:model gone', count: 1 }, { fingerprint: 'timeout:deadline <n>s', count: 1 }] },
    ],
    [
      'held mentions: hold lines by reason, the most waiting, and the hold now',
      {
        held: [
          rec({ ended: '2026-11-26T05:00:00Z', outcome: 'skipped', reason: 'held: budget', detail: '3 mentions waiting; until the budget allows', duration_ms: 0 }),
          rec({ ended: '2026-11-26T04:00:00Z', outcome: 'skipped', reason: 'held: quiet_hours', detail: '1 mention waiting; runs at 07:00', duration_ms: 0 }),
          rec({ ended: '2026-11-25T04:00:00Z', outcome: 'skipped', reason: 'held: paused', detail: '9 mentions waiting', duration_ms: 0 }),
        ],
        heldNow: { reason: 'budget', waiting: 4 },
      },
      { activations: 0, holds: { budget: 1, quiet_hours: 1 }, heldWaitingMax: 3, heldNow: { reason: 'budget', waiting: 4 } },
    ],
    ['budget and memory as given', { budget: { daily_used: 1.5, daily_limit: 10, monthly_used: 20, monthly_limit: 100 }, memory: { entries: 12, bytes: 3456 } }, { budget: { daily_used: 1.5, daily_limit: 10, monthly_used: 20, monthly_limit: 100 }, memory: { entries: 12, bytes: 3456 } }],
    ['a full history that does not reach back to the start: counted from its oldest', { records: [rec({ ended: '2026-11-26T20:00:00Z' }), rec({ ended: '2026-11-26T18:00:00Z' })], historyFull: true }, { activations: 2, countedFrom: at('2026-11-26T18:00:00Z') }],
    ['a history not at its bounds: complete, however recent its oldest', { records: [rec({ ended: '2026-11-26T20:00:00Z' }), rec({ ended: '2026-11-26T18:00:00Z' })], historyFull: false }, { activations: 2, countedFrom: undefined }],
    ['a full history that reaches back: complete', { records: [rec({ ended: '2026-11-26T20:00:00Z' }), rec({ ended: '2026-11-25T18:00:00Z' })], historyFull: true }, { activations: 1, countedFrom: undefined }],
  ])('%s', (_name, facts, expected) => {
    const figures = activityFigures({ ...base, ...facts });
    expect(figures).toMatchObject(Object.fromEntries(Object.entries(expected).filter(([, v]) => v !== undefined)));
    if ('countedFrom' in expected && expected.countedFrom === undefined) expect(figures.countedFrom).toBeUndefined();
  });
});

describe('the post', () => {
  it('shows the period, the counts, the fingerprints, usage against the budget, memory and holds', () => {
    const figures = activityFigures({
      from: at('2026-11-26T00:00:00Z'),
      to: at('2026-11-27T00:00:00Z'),
      records: [rec({ ended: '2026-11-26T10:00:00Z' }), rec({ ended: '2026-11-26T11:00:00Z', outcome: 'terminal_failure', reason: 'HubError', error: 'hub answered 503', replies: 0 })],
      historyFull: false,
      held: [rec({ ended: '2026-11-26T05:00:00Z', outcome: 'skipped', reason: 'held: budget', detail: '2 mentions waiting', duration_ms: 0 })],
      budget: { daily_used: 1.5, daily_limit: 10, monthly_used: 20, monthly_limit: 0 },
      memory: { entries: 12, bytes: 3456 },
    });
    const post = formatActivitySummary('scout', figures);
    expect(post.title).toBe('📊 Activity: scout, 2026-11-26 00:00Z to 2026-11-27 00:00Z');
    expect(post.content).toBe(
      [
        '## Period',
        '- From 2026-11-26 00:00Z to 2026-11-27 00:00Z',
        '',
        '## Activations',
        '- Total: 2',
        '- notification: answered 1, terminal_failure 1',
        '- Answers: 1',
        '- Posts: 0',
        '- Failures: 1',
        '  - 1× `HubError:hub answered <n>`',
        '',
        '## Usage',
        '- Tokens: 200 in, 20 out, 10 cached',
        '- Spend in the period: $0.02',
        '- Today: $1.50 of $10.00',
        '- This month: $20.00',
        '- Memory: 12 entries, 3456 bytes',
        '',
        '## Held mentions',
        '- Holds in the period: budget 1 (at most 2 waiting)',
        '- Now: none waiting',
      ].join('\n'),
    );
  });
});

describe('the keys', () => {
  const parse = (observability: string): ReturnType<typeof parseDefinition> =>
    parseDefinition({ folder: 'scout', configFile: 'agents/scout/config.yaml', configText: `name: scout\ntype: llm\nbrain: {provider: scripted, model: s, responses: [ok]}\ncapabilities: {grants: [hub:read]}\nobservability: ${observability}\n`, promptFile: 'agents/scout/system-prompt.md', promptText: 'You are scout.' });

  it.each([
    ['{post_summaries: true}', '0 0 * * *'],
    ['{post_summaries: true, summary_schedule: "*/15 * * * *"}', '*/15 * * * *'],
  ])('%s: the summaries tick at %s', (obs, cron) => {
    expect(parse(obs).definition?.config.observability).toMatchObject({ post_summaries: true, summary_schedule: cron });
  });

  it.each([
    ['{summary_schedule: "daily"}', 'expected five fields'],
    ['{summary_schedule: "H 0 * * *"}', 'H (a random value) is not standard cron'],
  ])('%s is refused naming why', (obs, why) => {
    const { definition, problems } = parse(obs);
    expect(definition).toBeUndefined();
    expect(problems.map((p) => p.message).join('\n')).toContain(why);
  });
});
