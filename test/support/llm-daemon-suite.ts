// The scaffolding of a daemon test on the fake OpenAI server, set up once per file: the fake model, a Redis client
// on the run's shared test Redis, and the daemon harness a test starts (stopped, and the fake reset, after each).
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, inject } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/openai-server.ts';
import type { Harness } from './daemon-harness.ts';

export interface LlmDaemonSuite {
  readonly redisUrl: string;
  /** Set in beforeAll. */
  fake: FakeOpenAI;
  /** Set in beforeAll (when the suite asked for Redis). */
  redis: Redis;
  /** The test's daemon: assign it, and it is stopped after the test. */
  h: Harness | undefined;
  /** Stops something the test started (a peer, a process, a Redis) after it, last started first; errors ignored. */
  defer(stop: () => Promise<unknown>): void;
}

export function llmDaemonSuite(opts: { redis?: boolean } = {}): LlmDaemonSuite {
  const deferred: Array<() => Promise<unknown>> = [];
  const suite = { redisUrl: inject('redisUrl'), h: undefined, defer: (stop) => void deferred.push(stop) } as LlmDaemonSuite;
  beforeAll(async () => {
    suite.fake = await startFakeOpenAI();
    if (opts.redis !== false) suite.redis = new Redis(suite.redisUrl);
  });
  afterAll(async () => {
    await suite.fake.close();
    if (opts.redis !== false) await suite.redis.quit();
  });
  afterEach(async () => {
    for (const stop of deferred.splice(0).reverse()) await stop().catch(() => undefined);
    await suite.h?.stop();
    suite.h = undefined;
    suite.fake.reset();
  });
  return suite;
}
