// Whom a run's memory is for (memory/audience.ts, prompts/recall-text.ts): one table per decision.
import { describe, expect, it } from 'vitest';
import { GENERAL_ONLY, peopleOf, personAudience, publicAudience, visibilityOf, type MemoryAudience } from '../memory/audience.ts';
import { memoryAudienceOf } from '../prompts/recall-text.ts';
import type { Notification, Post } from '../hub-client/types.ts';

const dana = personAudience('keeper', 'dana', ['erin', 'keeper', 'dana']);
const operator: MemoryAudience = { kind: 'operator' };

describe('visibilityOf', () => {
  it.each([
    { scope: 'person', audience: dana, seen: { all: false, person: 'dana' } },
    { scope: 'person', audience: publicAudience('keeper', ['erin']), seen: { all: false } },
    { scope: 'person', audience: GENERAL_ONLY, seen: { all: false } },
    { scope: 'person', audience: operator, seen: { all: true } },
    { scope: 'agent', audience: dana, seen: { all: true } },
    { scope: 'agent', audience: GENERAL_ONLY, seen: { all: true } },
  ] as const)('scope $scope, audience $audience.kind → $seen', ({ scope, audience, seen }) => {
    expect(visibilityOf({ scope }, audience)).toEqual(seen);
  });
});

describe('peopleOf', () => {
  it.each([
    { audience: dana, scope: 'conversation', people: ['dana', 'erin'] },
    { audience: dana, scope: 'general', people: [] },
    { audience: publicAudience('keeper', ['zed', 'amy', 'zed']), scope: 'conversation', people: ['amy', 'zed'] },
    { audience: GENERAL_ONLY, scope: 'conversation', people: [] },
    { audience: operator, scope: 'conversation', people: [] },
  ] as const)('$audience.kind, scope $scope → $people', ({ audience, scope, people }) => {
    expect(peopleOf(audience, scope)).toEqual(people);
  });
});

describe('memoryAudienceOf', () => {
  const author = (name: string) => ({ id: `id-${name}`, name });
  const post = { id: 'p1', author: author('erin'), content: 'x', created_at: '2026-01-01T00:00:00Z', comments: [{ id: 'c1', author: author('fred'), content: 'y', created_at: '2026-01-01T00:00:00Z' }, { id: 'c2', author: author('keeper'), content: 'z', created_at: '2026-01-01T00:00:00Z' }] } as Post;
  const notification = { id: 'n1', type: 'mention', from: author('dana'), post_id: 'p1', content: '@keeper hi', created_at: '2026-01-01T00:00:00Z' } as unknown as Notification;
  it.each([
    { task: { kind: 'notification', post, notification }, audience: { kind: 'person', person: 'dana', people: ['dana', 'erin', 'fred'] } },
    { task: { kind: 'exploration', feed: [post, { ...post, author: author('gil') }] }, audience: { kind: 'public', people: ['erin', 'gil'] } },
    { task: { kind: 'prompt', text: 'hello' }, audience: { kind: 'public', people: [] } },
  ] as const)('$task.kind → $audience.kind', ({ task, audience }) => {
    expect(memoryAudienceOf('keeper', task)).toEqual(audience);
  });
});
