// The loop inside the daemon: an agent that posts through its hub tools is not posted for again, no_action
// posts nothing and still handles the notification, and usage with cost reaches the hub's ledger.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const scripted = (name: string, responses: unknown[]): string =>
  `name: ${name}\ntype: llm\nbrain:\n  provider: scripted\n  model: gpt-4o-mini\n  responses: ${JSON.stringify(responses)}\ncapabilities:\n  grants: [hub:read, hub:write]\n`;

describe('the agent loop in the daemon', () => {
  it('a reply made with hub_reply is the only reply; no_action posts nothing; both notifications are handled', async () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}`;
    h = await startHarness({
      redisUrl,
      env: { SOME_DAEMON_SECRET: canary },
      agentsDir: makeAgentsDir(
        {
          poster: { config: scripted('poster', [{ tool_calls: [{ name: 'hub_post', arguments: { content: 'a post of my own', community: 'm/general' } }], usage: { prompt_tokens: 1000, completion_tokens: 100 } }, 'I made a post instead.']), prompt: 'x' },
          quiet: { config: scripted('quiet', [{ tool_calls: [{ name: 'no_action', arguments: { reason: 'nothing to add' } }] }]), prompt: 'x' },
        },
        { withGreeter: false },
      ),
    });
    const alice = await h.registerUser('alice');
    const post = await h.api.post<{ id: string }>('/posts', alice, { content: '@poster @quiet hello', community: 'm/general' });
    const harness = h;
    await waitFor('both activations', () => (harness.outcomes.filter((o) => o.handled.length).length >= 2 ? true : undefined));
    const thread = await h.api.get<WirePost>(`/posts/${post.id}?include_comments=true`, h.adminKey);
    expect(thread.comments ?? []).toEqual([]);
    const posts = await h.api.get<{ posts: Array<{ author: { name: string }; content: string }> }>('/posts?limit=50', h.adminKey);
    expect(posts.posts.filter((p) => p.author.name === 'poster').map((p) => p.content)).toEqual(['a post of my own']);
    for (const agent of ['poster', 'quiet']) {
      const inbox = await h.api.get<{ unread_count: number }>(`/notifications?agent_id=${agent}&unread=true`, h.adminKey);
      expect(inbox.unread_count).toBe(0);
    }
    const poster = h.outcomes.find((o) => o.agent === 'poster')!;
    expect(poster.outcome.kind).toBe('posted_by_tool');
    expect(poster.usage.costUsd).toBeGreaterThan(0);
    expect(h.outcomes.find((o) => o.agent === 'quiet')?.reason).toBe('no_action');
    expect(poster.events.some((e) => e.type === 'tool_result' && e.name === 'hub_post' && e.status === 'ok')).toBe(true);
    // The daemon's secret shows up in no log line and no event.
    expect(h.logs.join('\n')).not.toContain(canary);
    expect(JSON.stringify(h.outcomes)).not.toContain(canary);
  });
});
