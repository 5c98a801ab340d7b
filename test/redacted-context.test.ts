// The context as models and CLIs get it (prompts/redacted-context.ts): a known secret anywhere in a task, in
// recalled memory or in the agent's skills never reaches the built context, also where rendering would cut it
// (a long post clipped to its head and tail) or break it (a value split across lines, quoted line by line).
import { describe, expect, it } from 'vitest';
import type { Notification, Post } from '../hub-client/types.ts';
import type { MemoryEntry } from '../memory/memory-store.ts';
import type { ActivationTask } from '../prompts/activation-context.ts';
import { buildRedactedContext } from '../prompts/redacted-context.ts';
import { REDACTED, Redactor } from '../services/redact.ts';
import { AgentConfigSchema } from '../store/agent-config.ts';
import type { AgentDefinition } from '../store/definition.ts';
import type { Skill } from '../store/skill.ts';

const SECRET = 'wcanary_3f9a1c2e7b8d4f60a1b2c3d4';
const redactor = new Redactor([SECRET]);
const redact = (text: string): string => redactor.redact(text);

const def: AgentDefinition = {
  name: 'keeper',
  config: AgentConfigSchema.parse({ name: 'keeper', type: 'llm', brain: { model: 'm' }, capabilities: { skills: ['ops'] } }),
  systemPrompt: 'You are {{name}}.',
  files: { config: 'c', prompt: 'p' },
};
const ops: Skill = { name: 'ops', description: 'Operations.', version: undefined, requiresGrants: [], requiresCli: [], triggers: { keywords: [], communities: [] }, instructions: `Use the deploy key ${SECRET} for releases.`, file: 'skills/ops/SKILL.md', builtin: false };
const withSkill: AgentDefinition = { ...def, shared: { skills: [ops], templates: {} } };

const alice = { id: 'a', name: 'alice' };
const at = '2026-02-07T10:15:00Z';
const post = (content: string, extra: Partial<Post> = {}): Post => ({ id: 'p1', title: 'Keys', author: alice, content, community: 'm/general', created_at: at, ...extra });
const mention = (content: string | null): Notification => ({ id: 'n1', type: 'mention', post_id: 'p1', comment_id: 'c1', from: alice, content, created_at: at, read: false });
const memory = (text: string): MemoryEntry => ({ id: 'm1', agent: 'keeper', key: 'k', kind: 'note', text, createdAt: Date.UTC(2026, 0, 1), recalls: 0, bytes: text.length });

/** Every 8-character piece of the secret: none may be left anywhere. */
const pieces = Array.from({ length: SECRET.length - 7 }, (_, i) => SECRET.slice(i, i + 8));

const CASES: Array<[name: string, task: ActivationTask, extra?: { memories?: MemoryEntry[]; def?: AgentDefinition; taskTokens?: number }]> = [
  ['in a post title', { kind: 'notification', post: post('hi', { title: `key ${SECRET}` }), notification: mention(null) }],
  ['in a post', { kind: 'notification', post: post(`the key is ${SECRET}`), notification: mention(null) }],
  ['in a comment', { kind: 'notification', post: post('hi', { comments: [{ id: 'c1', post_id: 'p1', parent_id: null, author: alice, content: `@keeper ${SECRET}`, created_at: at }] }), notification: mention(null) }],
  ['in the notification', { kind: 'notification', post: post('hi'), notification: mention(`@keeper ${SECRET}`) }],
  ['in an exploration feed', { kind: 'exploration', feed: [post(`look: ${SECRET}`), post('other', { id: 'p2', title: SECRET })] }],
  ['in a prompt', { kind: 'prompt', text: `deploy with ${SECRET}` }],
  ['in recalled memory', { kind: 'prompt', text: 'what is the key?' }, { memories: [memory(`the deploy key is ${SECRET}`)] }],
  ['in a skill', { kind: 'prompt', text: 'release it' }, { def: withSkill }],
  // Rendering cuts a long post to its head and tail: every occurrence is hidden before the cut, none is cut in two.
  ['in a long post, clipped', { kind: 'notification', post: post(`${SECRET} `.repeat(400)), notification: mention(null) }, { taskTokens: 600 }],
  // Split across lines as the author wrote it, then quoted line by line (`> `) by the rendering.
  ['split across quoted lines', { kind: 'notification', post: post(`key ${SECRET.slice(0, 15)}\n${SECRET.slice(15)} end`), notification: mention(null) }],
];

describe('the context as models and CLIs get it', () => {
  it.each(CASES)('a known secret %s is hidden', (_name, task, extra = {}) => {
    const built = buildRedactedContext(extra.def ?? def, task, { memories: extra.memories, taskTokens: extra.taskTokens }, redact);
    const all = `${built.system}\n${built.task}`;
    expect(all).toContain(REDACTED);
    for (const piece of pieces) expect(all, piece).not.toContain(piece);
  });

  it('leaves the rest of the task as it was', () => {
    const built = buildRedactedContext(def, { kind: 'notification', post: post(`the key is ${SECRET}, thanks`), notification: mention('@keeper see the post') }, {}, redact);
    expect(built.task).toContain(`the key is ${REDACTED}, thanks`);
    expect(built.task).toContain('@keeper see the post');
    expect(built.system).toContain('You are keeper.');
  });
});
