// Activity summaries through real daemons (issue 33 item 1): two daemons on one Redis and one local hub, the summary
// schedule a cron of every minute on a clock the test advances (no minutes of waiting). Each agent with
// post_summaries gets exactly one summary per period in m/agent-activity, whose figures are those of its activation
// records; an agent without the switch gets none, and one whose limits forbid posts gets none either.
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ActivationRecords, type ActivationRecord } from '../activation/activation-records.ts';
import { startDaemon, type RunningDaemon } from '../daemon/daemon.ts';
import { createLogger } from '../daemon/logger.ts';
import { startHub, type RunningHub } from '../local-hub/server.ts';
import { RedisKeys } from '../redis/keys.ts';
import { WarrenConfigSchema } from '../services/config.ts';
import { PROCESS_TEST_MS } from './support/ceilings.ts';
import { makeAgentsDir } from './support/daemon-harness.ts';
import { hubCaller, waitFor } from './support/hub-api.ts';

const redisUrl = inject('redisUrl');
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** How long a test waits at most for what a busy machine makes slow (an activation, a round). */
const WAIT_MS = 60_000;
const MINUTE = 60_000;

const agent = (name: string, responses: string, canPost = true): string => `name: ${name}
type: llm
brain: {provider: scripted, model: m, responses: ${responses}}
capabilities: {grants: [hub:read, hub:write]}
behavior: {can_create_posts: ${canPost}, limits: {min_interval_seconds: 0}}
observability: {post_summaries: ${name !== 'silent'}, summary_schedule: "* * * * *"}
`;

interface Post {
  id: string;
  title: string;
  content: string;
  author: { name: string };
}

describe('activity summaries in daemons', { timeout: PROCESS_TEST_MS }, () => {
  it('two daemons, a summary every minute: one post per agent per period, with the figures of its records', async () => {
    const hub: RunningHub = await startHub({ dbPath: ':memory:', port: 0, adminKey: `admin-${randomUUID()}` });
    cleanups.push(() => hub.close());
    const agentsDir = makeAgentsDir(
      {
        // Answers with tokens counted (each run is given the first scripted reply).
        alpha: { config: agent('alpha', '[{content: "Done.", usage: {prompt_tokens: 120, completion_tokens: 7}}]'), prompt: 'You are {{name}}.' },
        // Fails for good (a 400 is final; the default backoff holds it for minutes after).
        beta: { config: agent('beta', '[{error: {status: 400, message: "bad request for act-1"}}]'), prompt: 'You are {{name}}.' },
        silent: { config: agent('silent', '["Sure."]'), prompt: 'You are {{name}}.' },
        mute: { config: agent('mute', '["Fine."]', false), prompt: 'You are {{name}}.' },
      },
      { withGreeter: false },
    );
    const config = WarrenConfigSchema.parse({
      hub: { url: hub.url, embedded: false },
      redis: { url: redisUrl, prefix: `summ-${randomUUID().slice(0, 8)}`, allow_unauthenticated: true },
      store: { path: agentsDir },
      scheduler: { poll_interval: '50ms' },
      workers: { concurrency: 2, shutdown_grace: '2s' },
      metrics: { enabled: false },
    });
    const redis = new Redis(redisUrl);
    cleanups.push(() => redis.quit());
    // The summaries' clock starts at the real time: the records they count carry real times.
    const clock = { now: Date.now() };
    const daemons: Array<{ daemon: RunningDaemon; logs: string[] }> = [];
    for (let i = 0; i < 2; i++) {
      const logs: string[] = [];
      const logger = createLogger({ level: 'debug', destination: new Writable({ write: (chunk: Buffer, _e, done) => (logs.push(chunk.toString()), done()) }) });
      const daemon = await startDaemon({ config, logger, env: { WARREN_HUB_ADMIN_KEY: hub.adminKey }, hubMcp: null, scheduleClock: () => clock.now });
      cleanups.push(() => daemon.stop());
      daemons.push({ daemon, logs });
    }
    /** Resolves once every daemon's summary ticker has done a round at the clock's time now (or later). */
    const roundsAtNow = async (): Promise<void> => {
      const now = clock.now;
      const roundAt = (line: string): number | undefined => (line.includes('"msg":"activity summary round"') ? Date.parse((JSON.parse(line) as { now: string }).now) : undefined);
      await waitFor("an activity summary round of every daemon at the clock's time", () => (daemons.every((d) => d.logs.some((l) => (roundAt(l) ?? 0) >= now)) ? true : undefined), WAIT_MS);
    };
    const api = hubCaller(hub.url);
    const summaries = async (): Promise<Post[]> => (await api.get<{ posts: Post[] }>('/posts?community=agent-activity&limit=100', hub.adminKey)).posts;
    const byAgent = (posts: Post[]): Record<string, number> => posts.reduce<Record<string, number>>((m, p) => ({ ...m, [p.author.name]: (m[p.author.name] ?? 0) + 1 }), {});

    // Both daemons have seen the agents: summaries start at the last tick, nothing is posted for before.
    await roundsAtNow();
    const start = Math.floor(clock.now / MINUTE) * MINUTE;
    expect(await summaries()).toEqual([]);

    const dana = (await api.post<{ api_key: string }>('/agents/register', hub.adminKey, { name: 'dana', type: 'human' })).api_key;
    const records = new ActivationRecords(redis, config.redis.prefix);
    // A run is done once its record is kept (a failure's too): what the summaries count.
    const ran = (name: string, n: number): Promise<true> => waitFor(`${n} runs of ${name}`, async () => ((await records.recent({ agent: name })).length >= n ? true : undefined), WAIT_MS);
    const answers = async (name: string): Promise<number> => (await records.recent({ agent: name })).reduce((n, r) => n + r.replies, 0);
    // Each agent in threads of its own: no one's answer notifies another (a reply in a thread it answered in).
    for (const name of ['alpha', 'beta', 'silent', 'mute']) await api.post('/posts', dana, { title: `One for ${name}`, content: `@${name} hello` });
    await Promise.all([ran('alpha', 1), ran('beta', 1), ran('silent', 1), ran('mute', 1)]);
    await api.post('/posts', dana, { title: 'Two', content: '@alpha once more' });
    await api.post('/posts', dana, { title: 'Three', content: '@alpha and again' });
    // All three answered (in two runs or three): nothing more runs, so every record of the period is kept before its end.
    // (The clock runs ahead of the real time here; in production a run that ends before a tick is recorded before it.)
    await waitFor('three answers of alpha', async () => ((await answers('alpha')) >= 3 ? true : undefined), WAIT_MS);

    /** What the records say of a period (from, to]: counted here, not by the builder. */
    const expected = async (name: string, from: number, to: number): Promise<string[]> => {
      const kept = (await records.recent({ agent: name, limit: 100 })).filter((r: ActivationRecord) => {
        const ended = Date.parse(r.started_at) + r.duration_ms;
        return ended > from && ended <= to;
      });
      const sum = (f: (r: ActivationRecord) => number): number => kept.reduce((n, r) => n + f(r), 0);
      const failed = kept.filter((r) => r.error !== undefined).length;
      return [
        `- Total: ${kept.length}`,
        `- Answers: ${sum((r) => r.replies)}`,
        `- Posts: ${sum((r) => r.posts)}`,
        `- Failures: ${failed}`,
        `- Tokens: ${sum((r) => r.usage.input_tokens)} in, ${sum((r) => r.usage.output_tokens)} out, ${sum((r) => r.usage.cached_tokens)} cached`,
      ];
    };

    // The first period ends at the next minute (ahead of the real time, which the clock may run ahead of).
    const first = Math.floor(Date.now() / MINUTE) * MINUTE + MINUTE;
    clock.now = first + 500;
    await waitFor('the summaries of alpha and beta', async () => {
      const c = byAgent(await summaries());
      return c.alpha && c.beta ? true : undefined;
    }, WAIT_MS);
    await roundsAtNow();
    let posts = await summaries();
    expect(byAgent(posts)).toEqual({ alpha: 1, beta: 1 });
    const period = (from: number, to: number): string => `${new Date(from).toISOString().slice(0, 16).replace('T', ' ')}Z to ${new Date(to).toISOString().slice(0, 16).replace('T', ' ')}Z`;
    for (const name of ['alpha', 'beta']) {
      const post = posts.find((p) => p.author.name === name)!;
      expect(post.title).toBe(`📊 Activity: ${name}, ${period(start, first)}`);
      for (const line of await expected(name, start, first)) expect(post.content).toContain(line);
    }
    // The figures are those of the runs: alpha's three answers with their tokens, beta's failure with its fingerprint.
    const alpha = posts.find((p) => p.author.name === 'alpha')!;
    const runs = (await records.recent({ agent: 'alpha' })).length;
    expect(alpha.content).toContain(`- Total: ${runs}\n- notification: answered ${runs}\n- Answers: 3\n- Posts: 0\n- Failures: 0\n`);
    // Each answer is one model call of 120 tokens in and 7 out (a run of two mentions makes two).
    expect(alpha.content).toContain('- Tokens: 360 in, 21 out, 0 cached');
    const beta = posts.find((p) => p.author.name === 'beta')!;
    expect(beta.content).toMatch(/- Total: 1\n- notification: terminal_failure 1\n- Answers: 0\n- Posts: 0\n- Failures: 1\n {2}- 1× `[^`]*bad request for <id>`/);
    // One daemon posted each; the other saw it claimed or done.
    const posted = daemons.map((d) => d.logs.filter((l) => l.includes('"msg":"activity summary posted to m/agent-activity"')).length);
    expect(posted.reduce((a, b) => a + b, 0)).toBe(2);
    // The agent whose limits forbid posts: no summary, said in the log.
    expect(daemons.flatMap((d) => d.logs).some((l) => l.includes('"agent":"mute"') && l.includes('activity summary not posted: refused: can_create_posts is false'))).toBe(true);

    // The next period, and the one after: one more summary each, whatever ran in them (counted from the records).
    for (const tick of [first + MINUTE, first + 2 * MINUTE]) {
      clock.now = tick + 500;
      const want = (tick - first) / MINUTE + 1;
      await waitFor(`the summaries of the tick ${new Date(tick).toISOString()}`, async () => {
        const c = byAgent(await summaries());
        return c.alpha === want && c.beta === want ? true : undefined;
      }, WAIT_MS);
      await roundsAtNow();
      posts = await summaries();
      expect(byAgent(posts)).toEqual({ alpha: want, beta: want });
      for (const name of ['alpha', 'beta']) {
        const post = posts.find((p) => p.author.name === name && p.title.endsWith(period(tick - MINUTE, tick)))!;
        expect(post).toBeDefined();
        for (const line of await expected(name, tick - MINUTE, tick)) expect(post.content).toContain(line);
      }
    }
    // Where summaries stand, shared by both daemons: the last tick of each agent with the switch.
    const done = await redis.hgetall(new RedisKeys(config.redis.prefix).activitySummaries);
    expect(done).toEqual({ alpha: String(first + 2 * MINUTE), beta: String(first + 2 * MINUTE), mute: String(first + 2 * MINUTE) });
  });
});
