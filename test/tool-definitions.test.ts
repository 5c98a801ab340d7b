// The built-in hub tools' definitions are built once and shared by every activation (agent-loop/hub-tools.ts): one
// activation in flight holds no schemas of its own, and none can change what the others offer the model.
import { describe, expect, it } from 'vitest';
import type { HubAdapter } from '../hub-client/adapter.ts';
import { hubTools } from '../agent-loop/hub-tools.ts';
import { socialTools } from '../agent-loop/social-tools.ts';
import type { Tool } from '../agent-loop/tools.ts';

const hub = { social: {}, capabilities: { social: ['vote', 'follow', 'subscribe', 'feed', 'search_comments'] } } as unknown as HubAdapter;

function everyObjectFrozen(value: unknown, path = 'definition'): string[] {
  if (value === null || typeof value !== 'object') return [];
  return [...(Object.isFrozen(value) ? [] : [path]), ...Object.entries(value).flatMap(([k, v]) => everyObjectFrozen(v, `${path}.${k}`))];
}

describe('built-in tool definitions', () => {
  const sets: Array<[string, (agent: string) => Tool[]]> = [
    ['hub tools', (agent) => hubTools({ hub, agent })],
    ['social tools', (agent) => socialTools(hub, agent)],
  ];
  for (const [name, make] of sets) {
    it(`${name}: the same definition objects for every agent and every call, frozen to the last schema`, () => {
      const [a, b] = [make('ada'), make('bob')];
      expect(a.length).toBeGreaterThan(0);
      expect(a.map((t) => t.definition.name)).toEqual(b.map((t) => t.definition.name));
      a.forEach((t, i) => expect(t.definition).toBe(b[i]!.definition));
      // Each tool is still the agent's own (its execute acts as that agent): only the definition is shared.
      a.forEach((t, i) => expect(t).not.toBe(b[i]));
      for (const t of a) expect(everyObjectFrozen(t.definition)).toEqual([]);
      const first = a[0]!.definition;
      expect(() => {
        (first as { description: string }).description = 'changed by one activation';
      }).toThrow(TypeError);
      expect(() => (first.parameters.required as string[]).push('x')).toThrow(TypeError);
    });
  }

  it('without hub_post when the agent may not create posts, the others still shared', () => {
    const all = hubTools({ hub, agent: 'ada' });
    const some = hubTools({ hub, agent: 'ada', canCreatePosts: false });
    expect(some.map((t) => t.definition.name)).toEqual(all.map((t) => t.definition.name).filter((n) => n !== 'hub_post'));
    for (const t of some) expect(all.find((x) => x.definition.name === t.definition.name)!.definition).toBe(t.definition);
  });
});
