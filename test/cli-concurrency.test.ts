// executors.cli.max_concurrent: CLI activations are limited on their own, while LLM activations keep
// running; the running-subprocess count is what /metrics reports.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { Semaphore } from '../executors/cli/concurrency.ts';
import { runningSubprocessCount } from '../executors/cli/supervisor.ts';
import { makeAgentsDir, startHarness, type Harness } from './support/daemon-harness.ts';
import { waitFor, type WirePost } from './support/hub-api.ts';
import { FAKE_CLIS } from './support/cli-agent.ts';

const redisUrl = inject('redisUrl');
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe('Semaphore', () => {
  it('grants up to the limit, queues the rest in order, and drops a waiter whose signal aborts', async () => {
    const s = new Semaphore(1);
    const first = await s.acquire();
    const order: string[] = [];
    const second = s.acquire().then((r) => (order.push('second'), r));
    const ac = new AbortController();
    const third = s.acquire(ac.signal);
    const fourth = s.acquire().then((r) => (order.push('fourth'), r));
    expect(s.waiting).toBe(3);
    ac.abort(new Error('cancelled'));
    await expect(third).rejects.toThrow('cancelled');
    first();
    first(); // releasing twice frees one slot only
    (await second)();
    (await fourth)();
    expect(order).toEqual(['second', 'fourth']);
    expect(s.held).toBe(0);
    expect(() => new Semaphore(0)).toThrow(RangeError);
  });
});

const coder = (name: string): string => `name: ${name}
type: claude-code
brain: {provider: anthropic, model: sonnet, api_key_env: CODER_KEY}
capabilities: {grants: [hub:read, hub:write]}
behavior: {max_duration: 30s}
`;

describe('executors.cli.max_concurrent', () => {
  it('runs one CLI activation at a time with max_concurrent 1, while an LLM agent answers meanwhile; /metrics counts the subprocess', async () => {
    const workspaces = mkdtempSync(join(tmpdir(), 'warren-ws-'));
    h = await startHarness({
      redisUrl,
      agentsDir: makeAgentsDir({ 'coder-one': { config: coder('coder-one'), prompt: 'x' }, 'coder-two': { config: coder('coder-two'), prompt: 'x' } }),
      env: { CODER_KEY: 'k', PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workspaces },
      config: (c) => {
        c.executors.cli.binaries['claude-code'] = join(FAKE_CLIS, 'claude-slow.js');
        c.executors.cli.workspaces = workspaces;
        c.executors.cli.max_concurrent = 1;
      },
    });
    const user = await h.registerUser('erin');
    let peak = 0;
    let gauge: string;
    const sampler = setInterval(() => (peak = Math.max(peak, runningSubprocessCount())), 10);
    try {
      const posts = await Promise.all(['@coder-one one', '@coder-two two', '@greeter hi'].map((content) => h!.api.post<{ id: string }>('/posts', user, { content })));
      const harness = h;
      const replyBy = (i: number, author: string) => async () => {
        const p = await harness.api.get<WirePost>(`/posts/${posts[i]!.id}?include_comments=true`, user);
        return p.comments?.find((c) => c.author.name === author) ? Date.now() : undefined;
      };
      await waitFor('a CLI running', () => (runningSubprocessCount() > 0 ? true : undefined), 10_000, 5);
      gauge = await (await fetch(`${h.daemon.metricsUrl}/metrics`)).text();
      const greeterAt = await waitFor('greeter reply', replyBy(2, 'greeter'), 10_000);
      const oneAt = await waitFor('coder-one reply', replyBy(0, 'coder-one'), 20_000);
      const twoAt = await waitFor('coder-two reply', replyBy(1, 'coder-two'), 20_000);
      expect(peak).toBe(1);
      // Serialised: the second CLI started only after the first finished (each takes 1.5 s).
      expect(Math.abs(twoAt - oneAt)).toBeGreaterThanOrEqual(1_200);
      // The LLM agent did not wait for the CLI slot.
      expect(greeterAt).toBeLessThan(Math.max(oneAt, twoAt));
      expect(gauge).toMatch(/^warren_executor_subprocesses 1$/m);
    } finally {
      clearInterval(sampler);
    }
  }, 60_000);
});
