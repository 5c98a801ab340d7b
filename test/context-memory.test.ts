// The recalled-memory block: where it sits, its dates, and its share of the task's token budget (a long thread
// trims memory first).
import { describe, expect, it } from 'vitest';
import type { Notification, Post } from '../hub-client/types.ts';
import type { MemoryEntry } from '../memory/memory-store.ts';
import { buildNotificationContext } from '../prompts/context.ts';
import { MEMORY_HEADING, MEMORY_SHARE, memoryTokenBudget, renderMemories } from '../prompts/memories.ts';
import { renderThread } from '../prompts/thread.ts';
import { estimateTokens } from '../prompts/tokens.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';

const def: AgentDefinition = {
  name: 'keeper',
  config: AgentConfigSchema.parse({ name: 'keeper', type: 'llm', brain: { model: 'm' }, capabilities: {} }),
  systemPrompt: 'You are {{name}}.',
  files: { config: 'c', prompt: 'p' },
};
const alice = { id: 'a', name: 'alice' };

function entry(text: string, day: string): MemoryEntry {
  return { id: `id-${text.slice(0, 8)}`, agent: 'keeper', key: text, kind: 'conversation', text, createdAt: Date.parse(`${day}T12:00:00Z`), recalls: 0, bytes: text.length };
}

function thread(comments: number, chars: number): { post: Post; notification: Notification } {
  const post: Post = {
    id: 'p1', title: 'Deploys', author: alice, content: 'What is the codeword?', community: 'general', created_at: '2026-02-07T10:00:00Z',
    comments: Array.from({ length: comments }, (_, i) => ({ id: `c${i}`, post_id: 'p1', parent_id: null, author: alice, content: `${i} ${'y'.repeat(chars)}`, created_at: '2026-02-07T10:05:00Z' })),
  };
  return { post, notification: { id: 'n1', type: 'mention', post_id: 'p1', comment_id: null, from: alice, content: 'What is the codeword?', created_at: '2026-02-07T10:00:00Z', read: false } };
}

const memories = [entry('dana said the deploy codeword is PELICAN-42', '2026-02-01'), entry('erin prefers short answers', '2026-01-15')];

describe('recalled memory in the context', () => {
  it('sits after the system prompt and before the budget block, one dated line per entry, best first', () => {
    const { post, notification } = thread(1, 20);
    const ctx = buildNotificationContext(def, post, notification, { memories, budget: { status: 'healthy', daily_used: 0, daily_limit: 1, monthly_used: 0, monthly_limit: 1 } as never });
    const at = ctx.system.indexOf(MEMORY_HEADING);
    expect(at).toBeGreaterThan(ctx.system.indexOf('You are keeper.'));
    expect(at).toBeLessThan(ctx.system.indexOf('## System Resource Status'));
    expect(ctx.system).toContain('- [2026-02-01] dana said the deploy codeword is PELICAN-42\n- [2026-01-15] erin prefers short answers');
    expect(ctx.task).not.toContain('PELICAN-42');
  });

  it('takes at most its share of the budget, and what a long thread leaves; the least relevant go first', () => {
    expect(memoryTokenBudget(8000, 100)).toBe(8000 * MEMORY_SHARE);
    expect(memoryTokenBudget(8000, 7000)).toBe(1000);
    expect(memoryTokenBudget(8000, 9000)).toBe(0);
    const many = Array.from({ length: 50 }, (_, i) => entry(`memory number ${i} ${'z'.repeat(200)}`, '2026-02-01'));
    const block = renderMemories(many, 500);
    expect(estimateTokens(block)).toBeLessThanOrEqual(500);
    expect(block).toContain('memory number 0 ');
    expect(block).not.toContain('memory number 49 ');
    expect(renderMemories(many, 10)).toBe('');
  });

  it('memory is trimmed before the thread: the thread keeps what it had without memory, memory gets what is left', () => {
    const long = thread(40, 800);
    const without = buildNotificationContext(def, long.post, long.notification, { taskTokens: 2000 });
    const withMemory = buildNotificationContext(def, long.post, long.notification, { memories, taskTokens: 2000 });
    expect(withMemory.task).toBe(without.task);
    const threadTokens = estimateTokens(renderThread(long.post, { newCommentId: null, tokenBudget: 2000 }));
    const block = withMemory.system.slice(withMemory.system.indexOf(MEMORY_HEADING));
    expect(withMemory.system.includes(MEMORY_HEADING) ? estimateTokens(block) : 0).toBeLessThanOrEqual(2000 - threadTokens);
    const short = thread(1, 20);
    expect(buildNotificationContext(def, short.post, short.notification, { memories, taskTokens: 2000 }).system).toContain('PELICAN-42');
  });
});
