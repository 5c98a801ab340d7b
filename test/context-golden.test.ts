// Golden files of rendered contexts: the exact text a model sees. Run with UPDATE_GOLDEN=1 to rewrite them
// after a deliberate change, then read the diff.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BudgetHealth, Comment, Notification, Post } from '../hub-client/types.ts';
import { remainingToday, renderBudget } from '../prompts/budget.ts';
import { buildNotificationContext, type BuiltContext } from '../prompts/context.ts';
import { buildExplorationContext, filterFeed } from '../prompts/exploration.ts';
import { budgetAllows } from '../scheduler/eligibility.ts';
import { AgentConfigSchema, type AgentConfigInput } from '../store/agent-config.ts';
import { builtinSkills } from '../store/builtin-skills.ts';
import type { AgentDefinition } from '../store/definition.ts';
import { parseSkill } from '../store/skill.ts';

const GOLDEN = join(import.meta.dirname, 'golden');

function golden(name: string, text: string): void {
  const file = join(GOLDEN, `${name}.txt`);
  if (process.env.UPDATE_GOLDEN) writeFileSync(file, text);
  expect(existsSync(file), `${file} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
  expect(text).toBe(readFileSync(file, 'utf8'));
}

const show = (c: BuiltContext): string => `===== system =====\n${c.system}\n===== task =====\n${c.task}\n`;

const incident = parseSkill(
  'skills/incident-summary/SKILL.md',
  '---\nname: incident-summary\ndescription: Summarize a failure thread into cause, impact and next step.\nrequires_grants: [hub:write]\ntriggers: {keywords: [outage, incident], communities: [m/agent-errors]}\n---\nRead the whole thread first. Reply with three short lines: Cause, Impact, Next step.\n',
  'incident-summary',
).skill!;

function agent(extra: Partial<AgentConfigInput> = {}, prompt = 'You are {{name}}. {{description}}'): AgentDefinition {
  const config = AgentConfigSchema.parse({
    name: 'ci-helper',
    display_name: 'CI Helper',
    description: 'Answers questions about flaky tests and failing pipelines.',
    type: 'llm',
    brain: { model: 'gpt-4o-mini' },
    capabilities: { grants: ['hub:read', 'hub:write'], skills: ['budget-check'] },
    interests: { topics: ['continuous-integration', 'testing'], communities: ['m/general', 'm/agent-errors'], keywords: ['flaky', 'CI'] },
    ...extra,
  });
  return { name: config.name, config, systemPrompt: prompt, files: { config: 'c', prompt: 'p' }, shared: { skills: [...builtinSkills(), incident], templates: {} } };
}

const alice = { id: 'u1', name: 'alice' };
const bob = { id: 'u2', name: 'bob' };
const me = { id: 'u3', name: 'ci-helper' };
const at = (min: number): string => new Date(Date.UTC(2026, 1, 7, 10, 0) + min * 60_000).toISOString();

const healthy: BudgetHealth = BudgetHealthOf('healthy', 2.1, 10, 30, 200);
function BudgetHealthOf(status: BudgetHealth['status'], daily: number, dailyLimit: number, monthly: number, monthlyLimit: number): BudgetHealth {
  return { daily_used: daily, daily_limit: dailyLimit, monthly_used: monthly, monthly_limit: monthlyLimit, healthy: status !== 'critical', status, used_pct: (daily / dailyLimit) * 100 };
}

describe('golden contexts', () => {
  it('notification: a mention in a short thread with multi-line comments and a triggered skill', () => {
    const post: Post = {
      id: 'p1',
      title: 'Nightly outage of the build farm',
      author: alice,
      content: 'The nightly pipeline died at 02:00.\n\nLogs say:\n    ENOSPC: no space left on device',
      community: 'agent-errors',
      created_at: at(0),
      comments: [
        { id: 'c1', post_id: 'p1', parent_id: null, author: bob, content: 'Same here.\n> quoted from the log\nline three', created_at: at(5) },
        { id: 'c2', post_id: 'p1', parent_id: 'c1', author: alice, content: '@ci-helper can you\nsummarize this?', created_at: at(9) },
      ],
    };
    const n: Notification = { id: 'n1', type: 'mention', post_id: 'p1', comment_id: 'c2', from: alice, content: '@ci-helper can you\nsummarize this?', created_at: at(9), read: false };
    const ctx = buildNotificationContext(agent(), post, n, { budget: healthy });
    expect(ctx.system).toContain('### incident-summary'); // triggered by "outage" and by m/agent-errors
    golden('notification', show(ctx));
  });

  it('reply in a long thread: the root, the newest comments and the new one kept, the rest counted', () => {
    const comments: Comment[] = Array.from({ length: 60 }, (_, i) => ({
      id: `c${i + 1}`,
      post_id: 'p2',
      parent_id: i % 3 === 0 ? null : `c${i}`,
      author: i % 2 ? bob : alice,
      content: `Comment number ${i + 1} on the flaky test.\nIt has a second line with more detail about run ${i + 1}.`,
      created_at: at(i),
    }));
    // bob replies to ci-helper's old comment c10, and the thread goes on after it.
    comments[9] = { ...comments[9]!, author: me };
    comments.push({ id: 'c61', post_id: 'p2', parent_id: 'c10', author: bob, content: '@ci-helper about your comment: still failing.', created_at: at(61) });
    const post: Post = { id: 'p2', title: 'Flaky test in checkout', author: alice, content: 'checkout.spec fails one run in ten.', community: 'general', created_at: at(-5), comments };
    const n: Notification = { id: 'n2', type: 'reply', post_id: 'p2', comment_id: 'c61', from: bob, content: '@ci-helper about your comment: still failing.', created_at: at(61), read: false };
    const ctx = buildNotificationContext(agent(), post, n, { budget: healthy, taskTokens: 900 });
    expect(ctx.task).toContain('### Flaky test in checkout');
    expect(ctx.task).toContain('(comment c61) **[NEW]**');
    expect(ctx.task).toMatch(/\*\[\d+ comments left out here to fit the context budget\]\*/);
    expect(ctx.task).not.toContain('(comment c1)');
    expect(ctx.task).toContain('(comment c10)'); // the comment being replied to is kept however old
    golden('long-thread', show(ctx));
  });

  it('exploration: the feed filtered to unanswered posts in its communities, long content cut', () => {
    const feed: Post[] = [
      { id: 'p10', title: 'Why does CI time out on ARM?', author: alice, content: 'Builds on ARM runners hit the 60 minute limit. Any idea?', community: 'general', created_at: at(0), comment_count: 0 },
      { id: 'p11', title: null, author: bob, content: `A long report. ${'The flaky test retries three times before it passes. '.repeat(15)}`, community: 'm/agent-errors', created_at: at(1) },
      { id: 'p12', title: 'My own post', author: me, content: 'mine', community: 'general', created_at: at(2) },
      { id: 'p13', title: 'Answered already', author: bob, content: 'x', community: 'general', created_at: at(3), comments: [{ id: 'k', author: me, content: 'done', created_at: at(4) }] },
      { id: 'p14', title: 'Cooking', author: bob, content: 'Pasta?', community: 'm/food', created_at: at(5) },
    ];
    const kept = filterFeed(agent(), feed);
    expect(kept.map((p) => p.id)).toEqual(['p10', 'p11']);
    golden('exploration', show(buildExplorationContext(agent({ behavior: { discovery: { enabled: true } } }), kept, { budget: healthy })));
  });

  it('empty feed: the task says nothing matches (the activation does not call the model for it)', () => {
    golden('empty-feed', show(buildExplorationContext(agent(), [])));
  });

  it('budget warning: the agent is told to be brief, with per-tool usage', () => {
    const warning = { ...BudgetHealthOf('warning', 8.4, 10, 61.2, 200), tools: { 'gpt-4o-mini': { used_pct: 84 } } } as BudgetHealth;
    const post: Post = { id: 'p3', title: 'Quick one', author: alice, content: '@ci-helper is main green?', community: 'general', created_at: at(0), comments: [] };
    const n: Notification = { id: 'n3', type: 'mention', post_id: 'p3', comment_id: null, from: alice, content: '@ci-helper is main green?', created_at: at(0), read: false };
    const ctx = buildNotificationContext(agent(), post, n, { budget: warning, remainingToday: { posts: 1, comments: 12 } });
    expect(ctx.system).toContain('be brief');
    golden('budget-warning', show(ctx));
  });

  it('counts what is left today from behavior.limits, never below zero', () => {
    expect(remainingToday({ max_daily_posts: 5, max_daily_comments: 50 }, { posts: 7, comments: 3 })).toEqual({ posts: 0, comments: 47 });
  });

  it('budget critical: nothing runs, and the block says so', () => {
    expect(budgetAllows('critical', 'notification')).toBe(false);
    expect(budgetAllows('critical', 'exploration')).toBe(false);
    golden('budget-critical', `${renderBudget(BudgetHealthOf('critical', 10.3, 10, 150, 200))}\n`);
  });
});
