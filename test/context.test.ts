import { describe, expect, it } from 'vitest';
import type { Notification, Post } from '../hub-client/types.ts';
import { buildNotificationContext, renderSystemPrompt } from '../prompts/context.ts';
import { clipText, renderThread } from '../prompts/thread.ts';
import { estimateTokens } from '../prompts/tokens.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';

function def(systemPrompt: string): AgentDefinition {
  const config = AgentConfigSchema.parse({ name: 'greeter', description: 'Says hello.', type: 'llm', brain: { model: 'm' }, capabilities: {} });
  return { name: 'greeter', config, systemPrompt, files: { config: 'c', prompt: 'p' } };
}

const alice = { id: 'a', name: 'alice' };
const bob = { id: 'b', name: 'bob' };
const post: Post = {
  id: 'p1',
  title: 'Flaky test',
  author: alice,
  content: 'CI fails on Tuesdays.\nAny idea?',
  community: 'm/general',
  created_at: '2026-02-07T10:15:00Z',
  comments: [
    { id: 'c1', post_id: 'p1', parent_id: null, author: bob, content: 'Line one\nline two', created_at: '2026-02-07T10:20:00Z' },
    { id: 'c2', post_id: 'p1', parent_id: 'c1', author: alice, content: '@greeter thoughts?', created_at: '2026-02-07T10:25:00Z' },
  ],
};
const notification: Notification = {
  id: 'n1', type: 'mention', post_id: 'p1', comment_id: 'c2', from: alice, content: '@greeter thoughts?', created_at: '2026-02-07T10:25:00Z', read: false,
};

describe('context building', () => {
  it('fills placeholders in the system prompt, and falls back to the default template when empty', () => {
    expect(renderSystemPrompt(def('You are {{name}}. {{description}}'))).toBe('You are greeter. Says hello.');
    const fallback = renderSystemPrompt(def('   \n'));
    expect(fallback).toMatch(/^You are greeter, an agent on the hub/);
    expect(fallback).toContain('Says hello.');
  });

  it('renders the whole thread, quotes multi-line content, marks the new comment and describes the notification', () => {
    const { system, task } = buildNotificationContext(def('You are {{name}}.'), post, notification);
    expect(system).toBe('You are greeter.');
    expect(task).toContain('## Thread Context');
    expect(task).toContain('### Flaky test');
    expect(task).toContain('**alice** posted in m/general at 2026-02-07 10:15 (post p1):\n> CI fails on Tuesdays.\n> Any idea?');
    expect(task).toContain("**bob** at 2026-02-07 10:20, replying to the post (comment c1):\n> Line one\n> line two");
    expect(task).toContain("**alice** at 2026-02-07 10:25, replying to bob's comment c1 (comment c2) **[NEW]**:");
    expect(task).toContain('- **Type:** You were mentioned');
    expect(task).toContain('- **From:** alice');
    expect(task).not.toMatch(/\{\{/);
  });
});

describe('oversized texts in a thread', () => {
  const author = { id: 'u1', name: 'alice' };
  const at = '2026-02-07T10:00:00.000Z';
  it('a huge post and a huge new comment are clipped head and tail, and the thread stays near its budget', () => {
    const big = `START ${'post '.repeat(200_000)} END-OF-POST`;
    const huge = `ASK ${'comment '.repeat(50_000)} QUESTION?`;
    const post: Post = { id: 'p1', title: 'Big', author, content: big, community: 'general', created_at: at, comments: [{ id: 'c1', post_id: 'p1', parent_id: null, author, content: huge, created_at: at }] };
    const text = renderThread(post, { newCommentId: 'c1', tokenBudget: 8_000 });
    expect(estimateTokens(text)).toBeLessThanOrEqual(8_000);
    expect(text).toContain('> START post');
    expect(text).toContain('END-OF-POST');
    expect(text).toContain('ASK comment');
    expect(text).toContain('QUESTION?');
    expect(text).toContain('**[NEW]**');
    expect(text.match(/characters left out here to fit the context budget/g)).toHaveLength(2);
  });

  it('clipText leaves what fits alone', () => {
    expect(clipText('short', 10)).toBe('short');
    expect(renderThread({ id: 'p', title: 't', author, content: 'x'.repeat(100_000), community: null, created_at: at }, {})).toContain('x'.repeat(100_000));
  });
});
