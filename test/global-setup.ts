// Starts one private redis-server for the whole test run and hands its URL to the tests
// through vitest's provide/inject. Falls back to REDIS_URL only when no binary exists. Builds the Bluesky
// network's native module first, once per install, so no test file builds it while others run (or two at once).
import type { TestProject } from 'vitest/node';
import { ensureBlueskyNative } from './support/bluesky-native.ts';
import { redisServerAvailable, startPrivateRedis, type PrivateRedis } from './support/redis-server.ts';

let redis: PrivateRedis | undefined;

export async function setup(project: TestProject): Promise<void> {
  ensureBlueskyNative((line) => process.stdout.write(`${line}\n`));
  if (redisServerAvailable()) {
    redis = await startPrivateRedis();
    project.provide('redisUrl', redis.url);
  } else if (process.env.REDIS_URL) {
    project.provide('redisUrl', process.env.REDIS_URL);
  } else {
    throw new Error('tests need redis-server on PATH (or REDIS_URL pointing at a disposable Redis)');
  }
}

export async function teardown(): Promise<void> {
  await redis?.stop();
}
