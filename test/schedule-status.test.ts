// What `warren status` and the watch page show of schedules: the next tick from the cron, the last one queued from
// Redis, and a held agent's ticks marked held.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { scheduleRows, scheduleStatuses } from '../daemon/ops/schedule-status.ts';
import { formatStatus, type StatusReport } from '../daemon/ops/status.ts';
import { scheduleField } from '../scheduler/schedule-state.ts';
import { nextTick } from '../scheduler/schedule-ticks.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { validateYaml } from '../store/yaml-validate.ts';

const digest: AgentDefinition = {
  name: 'digest',
  systemPrompt: 'You are {{name}}.',
  files: { config: 'config.yaml', prompt: 'system-prompt.md' },
  config: AgentConfigSchema.parse({
    name: 'digest',
    type: 'llm',
    brain: { model: 'm' },
    capabilities: {},
    schedules: [
      { name: 'morning', cron: '0 9 * * *', timezone: 'Europe/Berlin', task: 'Post the digest.', missed: 'run_once' },
      { name: 'weekly', cron: '0 18 * * 5', task: 'Post the week.' },
    ],
  }),
};

describe('schedule status', () => {
  const now = new Date('2026-11-26T10:00:00Z'); // a Thursday, 11:00 in Berlin
  const readings = new Map([[scheduleField('digest', 'morning'), { checkedThrough: now.getTime(), lastFired: Date.parse('2026-11-26T08:00:00Z') }]]);

  it('gives each schedule its next tick and the last one queued (none yet: null)', () => {
    expect(scheduleStatuses(digest, readings, now)).toEqual([
      { name: 'morning', cron: '0 9 * * *', timezone: 'Europe/Berlin', missed: 'run_once', next_at: '2026-11-27T08:00:00.000Z', last_at: '2026-11-26T08:00:00.000Z' },
      { name: 'weekly', cron: '0 18 * * 5', timezone: 'UTC', missed: 'skip', next_at: '2026-11-27T18:00:00.000Z', last_at: null },
    ]);
  });

  it.each([
    ['ready', ''],
    ['paused', ' (held: paused)'],
    ['quiet_hours', ' (held: quiet hours)'],
  ])('rows for `warren status`, agent %s', (state, held) => {
    expect(scheduleRows([{ name: 'digest', state, schedules: scheduleStatuses(digest, readings, now) }, { name: 'other', state: 'ready', schedules: [] }])).toEqual([
      ['digest/morning', '0 9 * * * Europe/Berlin', `2026-11-27 08:00Z${held}`, '2026-11-26 08:00Z', 'run_once'],
      ['digest/weekly', '0 18 * * 5 UTC', `2026-11-27 18:00Z${held}`, 'never', 'skip'],
    ]);
  });

  it('is a table of its own in the human view', () => {
    const base = { name: 'digest', state: 'ready' as const, state_detail: null, type: 'llm', model: 'm', paused: false, consecutive_failures: 0, abandoned: 0, last: null, waiting_for: null, not_runnable: null, next_eligible_at: null, next_exploration_at: null, today: { activations: 0, posts: 0, comments: 0, tokensInput: 0, tokensOutput: 0, costUsd: 0 } };
    const report: StatusReport = { redis: { url: 'redis://x', ok: true }, hub: { url: 'http://hub', ok: true }, leader: null, queue: null, running: [], agents: [{ ...base, schedules: scheduleStatuses(digest, readings, now) }], defined: 1, broken: 0 };
    const text = formatStatus(report, now);
    expect(text).toMatch(/^SCHEDULE {2,}CRON {2,}NEXT {2,}LAST {2,}MISSED$/m);
    expect(text).toMatch(/^digest\/morning {2,}0 9 \* \* \* Europe\/Berlin {2,}2026-11-27 08:00Z {2,}2026-11-26 08:00Z {2,}run_once$/m);
    // Without schedules, no table.
    expect(formatStatus({ ...report, agents: [{ ...base, schedules: [] }] }, now)).not.toContain('SCHEDULE');
  });
});

describe('the README example', () => {
  // The worked example of README "Schedules", as written: it validates, and ticks when it says it does.
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Schedules'), readme.indexOf('\n## ', readme.indexOf('## Schedules') + 1));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];

  it('is a valid definition: a digest at 09:00 Berlin, 08:00 UTC in winter and 07:00 in summer, run once after downtime', () => {
    expect(yaml).toBeDefined();
    const parsed = validateYaml('README.md', yaml!, AgentConfigSchema);
    expect(parsed.problems).toEqual([]);
    const [schedule] = parsed.ok ? parsed.value.schedules : [];
    expect(schedule).toMatchObject({ name: 'morning', cron: '0 9 * * *', timezone: 'Europe/Berlin', missed: 'run_once' });
    expect(new Date(nextTick(schedule!, Date.parse('2026-11-26T00:00:00Z'))).toISOString()).toBe('2026-11-26T08:00:00.000Z');
    expect(new Date(nextTick(schedule!, Date.parse('2026-07-01T00:00:00Z'))).toISOString()).toBe('2026-07-01T07:00:00.000Z');
  });
});
